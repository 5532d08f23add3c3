"""What the three readers share: amounts by string arithmetic, dates in range, text.

Every refusal here is a StatementFormatError saying where (the caller's `where`: a line
number or an XML element path) and what is wrong; nothing here raises anything else.
"""

from __future__ import annotations

import datetime as dt
import re

from ..bankfile import StatementFormatError

EARLIEST_YEAR = 1900
LATEST_YEAR = 2200
# Twelve digits before the point: a thousand billion in any currency, far above any bank
# line and far below what an integer column or an int64 holds in cents.
MAX_WHOLE_DIGITS = 12
# How much of a refused value an error repeats (a 5 MiB "amount" is quoted cut short).
QUOTE_CHARS = 40

# Elements one XML or SGML file may hold, and how deep: a 5 MiB statement of real entries
# has about 300,000 (17 to 60 per entry); a file of empty tags would have 1.3 million,
# each a Python object, so the tree of a hostile file stays under about 100 MiB.
MAX_ELEMENTS = 400_000
MAX_DEPTH = 64

_AMOUNT = re.compile(r"([+-]?)([0-9]*)(?:[.,]([0-9]*))?")


def quote(value: str) -> str:
    """The value as an error message shows it: cut to QUOTE_CHARS, in quotes."""
    if len(value) > QUOTE_CHARS:
        value = value[:QUOTE_CHARS] + "..."
    return repr(value)


def amount_cents(text: str | None, where: str, what: str = "amount") -> int:
    """'-1234.5' -> -123450. A point or a comma as the decimal mark, at most two decimals
    (more only when they are all zeros: '18.150', '-5.1000'), an optional sign; no
    thousands separators, no exponent, never a float."""
    value = (text or "").strip()
    match = _AMOUNT.fullmatch(value)
    if value == "" or match is None or not (match.group(2) or match.group(3)):
        raise StatementFormatError(where, f"{what} {quote(value)} is not a number")
    sign, whole, fraction = match.group(1), match.group(2) or "0", match.group(3) or ""
    if len(fraction) > 2 and fraction[2:].strip("0"):
        raise StatementFormatError(where, f"{what} {quote(value)} has more than two decimals")
    whole = whole.lstrip("0") or "0"
    if len(whole) > MAX_WHOLE_DIGITS:
        raise StatementFormatError(where, f"{what} {quote(value)} is too large")
    cents = int(whole) * 100 + int(fraction[:2].ljust(2, "0"))
    return -cents if sign == "-" else cents


def make_date(year: int, month: int, day: int, where: str, text: str) -> dt.date:
    """A calendar date between 1900 and 2200, else a refusal naming the text it came from."""
    if not EARLIEST_YEAR <= year <= LATEST_YEAR:
        raise StatementFormatError(
            where, f"date {quote(text)} is outside {EARLIEST_YEAR} to {LATEST_YEAR}"
        )
    try:
        return dt.date(year, month, day)
    except ValueError:
        raise StatementFormatError(where, f"date {quote(text)} is not a calendar date") from None


_ISO_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
# What may follow the date: a time, a time-zone offset, or both.
_ISO_TIME_AND_ZONE = re.compile(r"(?:T[0-9:.]{2,18})?(?:Z|[+-][0-9]{2}:?[0-9]{2})?")


def iso_date(text: str | None, where: str) -> dt.date:
    """'2026-11-27' or an ISO date-time ('2026-11-27T13:15:00+01:00'): its date part.
    A date with a time-zone offset, as the XML schema's xs:date allows ('2017-04-01+02:00',
    '2017-04-01Z'), is that date."""
    value = (text or "").strip()
    match = _ISO_DATE.match(value)
    rest = value[10:]
    if match is None or (rest and not _ISO_TIME_AND_ZONE.fullmatch(rest)):
        raise StatementFormatError(where, f"date {quote(value)} is not YYYY-MM-DD")
    return make_date(int(match.group(1)), int(match.group(2)), int(match.group(3)), where, value)


def two_digit_year(yy: int) -> int:
    """A two-digit year: 20YY below 80, else 19YY."""
    return 2000 + yy if yy < 80 else 1900 + yy


def clean(text: str | None) -> str | None:
    """Inner runs of white space as one space, ends trimmed; empty as None."""
    if text is None:
        return None
    value = " ".join(text.split())
    return value or None


# What a file may declare its text to be (docs/statements.md, "Reading the files"): UTF-8,
# US-ASCII, ISO-8859-1 to -16 and Windows-1250 to -1258; UTF-16 only with its byte order
# mark (readers/__init__.py reads such a file as UTF-8 before any reader sees it). Anything
# else (UTF-7, unicode_escape, a codec of Python's that is no charset) is refused: those
# can hand on text no database stores, a lone surrogate.
CHARSETS_ACCEPTED = "UTF-8, US-ASCII, ISO-8859-1 to -16 or Windows-1250 to -1258"
_ISO_8859 = re.compile(r"(?:iso)?8859([0-9]{1,2})", re.ASCII)
_WINDOWS = re.compile(r"(?:windows|cp)?125([0-8])", re.ASCII)
_UNSPECIFIC = {"usascii", "ascii", "none"}  # read as UTF-8, else Windows-1252


def charset(declared: str | None, where: str) -> str | None:
    """The Python codec of a declared charset: 'utf-8', 'iso8859-N', 'cp125N', or None
    for none declared (and US-ASCII, OFX's NONE): read as UTF-8, else Windows-1252.
    Any other declaration: a refusal naming it."""
    name = (declared or "").strip()
    if not name:
        return None
    key = "".join(name.lower().replace("_", "-").replace("-", " ").split())
    if key in _UNSPECIFIC:
        return None
    if key == "utf8":
        return "utf-8"
    if key == "latin1":
        return "iso8859-1"
    match = _ISO_8859.fullmatch(key)
    if match and 1 <= int(match.group(1)) <= 16 and int(match.group(1)) != 12:
        return f"iso8859-{int(match.group(1))}"
    match = _WINDOWS.fullmatch(key)
    if match:
        return f"cp125{match.group(1)}"
    if key in ("utf16", "utf16le", "utf16be"):
        raise StatementFormatError(
            where, f"the file declares {quote(name)} but has no UTF-16 byte order mark"
        )
    raise StatementFormatError(
        where,
        f"the declared charset {quote(name)} is not one this service reads: "
        f"send {CHARSETS_ACCEPTED}",
    )


# The XML declaration, only where XML allows it: at the very start of the file (white
# space before it tolerated), and bounded, so that no search runs on through the file.
XML_DECLARATION = re.compile(r"\s{0,256}<\?xml\s[^<>]{0,512}\?>", re.ASCII)
_ENCODING_PSEUDO_ATTRIBUTE = re.compile(r"""\sencoding\s*=\s*(["'])([^"'<>]{0,64})\1""")


def xml_encoding(head: str) -> tuple[str | None, tuple[int, int] | None]:
    """The encoding an XML declaration at the start of `head` names, and where its value
    is in `head` ((start, end), to rewrite it); (None, None) without one."""
    declaration = XML_DECLARATION.match(head)
    if declaration is None:
        return None, None
    found = _ENCODING_PSEUDO_ATTRIBUTE.search(head, 0, declaration.end())
    if found is None:
        return None, None
    return found.group(2), found.span(2)


def decode_text(data: bytes, declared: str | None, where: str = "line 1") -> str:
    """The bytes as text: the declared charset (one of CHARSETS_ACCEPTED, else a refusal
    naming it), UTF-8 when none is declared, with Windows-1252 (then Latin-1, which reads
    any byte) when the bytes are not UTF-8. A declared UTF-8 that the bytes break is
    refused, saying on which line."""
    codec = charset(declared, where)
    if codec == "utf-8":
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise StatementFormatError(
                f"line {line}", "the bytes are not UTF-8 as the file declares"
            ) from None
    if codec is None:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            codec = "cp1252"
    try:
        return data.decode(codec)
    except UnicodeError:
        return data.decode("latin-1")
