"""The bank's file, whatever its format, as a BankFile (docs/statements.md, "Reading the
files"). The format is recognised from the bytes, never from a name or a media type:

ofx       OFX 1.x (an OFXHEADER: header) or 2.x (an <?OFX ...?> instruction), QFX included
camt      camt.053: XML whose root is Document in urn:iso:std:iso:20022:tech:xsd:camt.053.001.*
mt940     SWIFT MT940: the tags :20: and :25:, with or without the SWIFT block headers
common    amounts by string arithmetic, dates in range, text and charsets

`read` raises only NotAStatement (415: none of the three) and StatementFormatError (400:
a recognised file that is broken, saying where).
"""

from __future__ import annotations

import codecs
import re

from ..bankfile import BankFile, NotAStatement, StatementFormatError
from . import camt, mt940, ofx

# How far into the file the format is looked for: headers, an XML declaration, comments.
SNIFF_BYTES = 65536
_OFX2 = re.compile(r"<\?OFX\s")
_XML_ENCODING = re.compile(r"""(<\?xml[^>]*?encoding\s*=\s*["'])[A-Za-z0-9._-]+(["'])""")
_CAMT = re.compile(r"""<([\w.-]+:)?Document[\s>/]""")
_SWIFT_TAG = re.compile(r"(?m)^(?:\{[^\n]*?\{4:\s*)?:(20|25):")


def _from_utf16(data: bytes) -> bytes:
    """A file in UTF-16 (with its byte order mark) as UTF-8, its declaration saying so."""
    try:
        text = data.decode("utf-16")
    except UnicodeDecodeError:
        raise NotAStatement() from None
    return _XML_ENCODING.sub(r"\g<1>UTF-8\g<2>", text, count=1).encode("utf-8")


def detect(data: bytes) -> str | None:
    """'ofx', 'camt.053', 'mt940', or None. Looks only at the bytes."""
    head = data[:SNIFF_BYTES].decode("latin-1").lstrip()
    if head.startswith("OFXHEADER:"):
        return "ofx"
    if head.startswith("<"):
        if _OFX2.search(head):
            return "ofx"
        if camt.NAMESPACE_PREFIX in head and _CAMT.search(head):
            return "camt.053"
        return None
    tags = {match.group(1) for match in _SWIFT_TAG.finditer(head)}
    return "mt940" if tags == {"20", "25"} else None


def dispatch(data: bytes) -> BankFile:
    """The reader for the format; what a reader may raise beyond the two refusals is a
    bug (the fuzz harness counts them: python -m bench.statements_fuzz)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        data = _from_utf16(data)
    elif data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    kind = detect(data)
    if kind == "ofx":
        return ofx.read(data)
    if kind == "camt.053":
        return camt.read(data)
    if kind == "mt940":
        return mt940.read(data)
    raise NotAStatement()


def read(data: bytes) -> BankFile:
    """The file as a BankFile, or one of the two refusals; never anything else."""
    try:
        return dispatch(data)
    except (NotAStatement, StatementFormatError):
        raise
    except Exception as exc:
        # A reader's bug met by a file nobody foresaw: still a 400, never a 500.
        raise StatementFormatError("file", f"could not be read ({type(exc).__name__})") from None


__all__ = ["BankFile", "NotAStatement", "StatementFormatError", "detect", "dispatch", "read"]
