"""The bank's file, whatever its format, as a BankFile (docs/statements.md, "Reading the
files"). The format is recognised from the bytes, never from a name or a media type:

ofx       OFX 1.x (an OFXHEADER: header) or 2.x (an <?OFX ...?> instruction), QFX included
camt      camt.053: XML whose root is Document in urn:iso:std:iso:20022:tech:xsd:camt.053.001.*
mt940     SWIFT MT940: the tags :20: and :25:, with or without the SWIFT block headers
common    amounts by string arithmetic, dates in range, text and charsets

`read` raises only NotAStatement (415: none of the three), StatementFormatError (400:
a recognised file that is broken, saying where) and TooManyLines (413: a statement of
more than MAX_STATEMENT_LINES lines).

Every step costs time and memory in proportion to the file's size, whatever its bytes:
no pattern here or in a reader runs over the whole text in a way that can backtrack
(the XML declaration is looked for only at the very start, bounded), the trees are
capped (common.MAX_ELEMENTS), and MT940 is read field by field, never held as a list
of its lines. `python -m bench.statements_fuzz` measures each file's CPU time and
memory against its size.
"""

from __future__ import annotations

import codecs
import contextlib
import gc
import re
from collections.abc import Iterator

from ..bankfile import (
    DEFAULT_MAX_LINES,
    BankFile,
    NotAStatement,
    StatementFormatError,
    TooManyLines,
    check,
)
from . import camt, mt940, ofx
from .common import xml_encoding

# How far into the file the format is looked for: headers, an XML declaration, comments.
SNIFF_BYTES = 65536
_OFX2 = re.compile(r"<\?OFX\s")
_CAMT = re.compile(r"""<([\w.-]+:)?Document[\s>/]""")
_SWIFT_TAG = re.compile(r"(?m)^(?:\{[^\n]*?\{4:\s*)?:(20|25):")


def _from_utf16(data: bytes) -> bytes:
    """A file in UTF-16 (with its byte order mark) as UTF-8, its XML declaration, if it
    begins with one, saying so (only there: an XML declaration is only ever at the start)."""
    try:
        text = data.decode("utf-16")
    except UnicodeDecodeError:
        raise NotAStatement() from None
    _declared, span = xml_encoding(text[:1024])
    if span is not None:
        text = text[: span[0]] + "UTF-8" + text[span[1] :]
    return text.encode("utf-8")


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


@contextlib.contextmanager
def _cycle_collector_paused() -> Iterator[None]:
    """No cycle collection while a file is read: a large file's tree is hundreds of
    thousands of small containers, and the collector's passes over them cost a third
    of the read and grow faster than the file does. The tree is garbage once read (the
    collector runs again at the next allocations after). Two reads at once: the first
    to end turns it back on, never off for good."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def dispatch(data: bytes, max_lines: int = DEFAULT_MAX_LINES) -> BankFile:
    """The reader for the format, its BankFile checked (bankfile.check); what a reader
    may raise beyond the three refusals is a bug (the fuzz harness counts them:
    python -m bench.statements_fuzz)."""
    with _cycle_collector_paused():
        return _dispatch(data, max_lines)


def _dispatch(data: bytes, max_lines: int) -> BankFile:
    utf16 = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    if utf16:
        data = _from_utf16(data)
    elif data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    kind = detect(data)
    if kind == "ofx":
        bank_file = ofx.read(data, max_lines, utf8=utf16)
    elif kind == "camt.053":
        bank_file = camt.read(data, max_lines)
    elif kind == "mt940":
        bank_file = mt940.read(data, max_lines)
    else:
        raise NotAStatement()
    check(bank_file)
    return bank_file


def read(data: bytes, max_lines: int = DEFAULT_MAX_LINES) -> BankFile:
    """The file as a BankFile, or one of the three refusals; never anything else."""
    try:
        return dispatch(data, max_lines)
    except (NotAStatement, StatementFormatError, TooManyLines):
        raise
    except Exception as exc:
        # A reader's bug met by a file nobody foresaw: still a 400, never a 500.
        raise StatementFormatError("file", f"could not be read ({type(exc).__name__})") from None


__all__ = [
    "BankFile",
    "NotAStatement",
    "StatementFormatError",
    "TooManyLines",
    "detect",
    "dispatch",
    "read",
]
