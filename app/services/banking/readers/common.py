"""What the three readers share: amounts by string arithmetic, dates in range, text.

Every refusal here is a StatementFormatError saying where (the caller's `where`: a line
number or an XML element path) and what is wrong; nothing here raises anything else.
"""

from __future__ import annotations

import codecs
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

_AMOUNT = re.compile(r"([+-]?)(\d*)(?:[.,](\d*))?")


def quote(value: str) -> str:
    """The value as an error message shows it: cut to QUOTE_CHARS, in quotes."""
    if len(value) > QUOTE_CHARS:
        value = value[:QUOTE_CHARS] + "..."
    return repr(value)


def amount_cents(text: str | None, where: str, what: str = "amount") -> int:
    """'-1234.5' -> -123450. A point or a comma as the decimal mark, at most two decimals,
    an optional sign; no thousands separators, no exponent, never a float."""
    value = (text or "").strip()
    match = _AMOUNT.fullmatch(value)
    if value == "" or match is None or not (match.group(2) or match.group(3)):
        raise StatementFormatError(where, f"{what} {quote(value)} is not a number")
    sign, whole, fraction = match.group(1), match.group(2) or "0", match.group(3) or ""
    if len(fraction) > 2:
        raise StatementFormatError(where, f"{what} {quote(value)} has more than two decimals")
    whole = whole.lstrip("0") or "0"
    if len(whole) > MAX_WHOLE_DIGITS:
        raise StatementFormatError(where, f"{what} {quote(value)} is too large")
    cents = int(whole) * 100 + int(fraction.ljust(2, "0"))
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


_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def iso_date(text: str | None, where: str) -> dt.date:
    """'2026-11-27' or an ISO date-time ('2026-11-27T13:15:00+01:00'): its date part."""
    value = (text or "").strip()
    match = _ISO_DATE.match(value)
    rest = value[10:]
    if match is None or (rest and not re.fullmatch(r"T[0-9:.]{2,18}(Z|[+-]\d{2}:?\d{2})?", rest)):
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


def decode_text(data: bytes, declared: str | None) -> str:
    """The bytes as text: the declared charset when it is one Python knows, UTF-8 otherwise,
    with Windows-1252 (then Latin-1, which reads any byte) when the bytes are not UTF-8.
    A declared UTF-8 that the bytes break is refused, saying on which line."""
    codec = _codec(declared)
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
    except (UnicodeError, LookupError):
        return data.decode("latin-1")


def _codec(declared: str | None) -> str | None:
    if not declared:
        return None
    name = declared.strip().lower().replace("_", "-")
    aliases = {
        "1252": "cp1252",
        "windows-1252": "cp1252",
        "8859-1": "latin-1",
        "iso-8859-1": "latin-1",
        "latin1": "latin-1",
        "utf8": "utf-8",
        "utf-8": "utf-8",
        "usascii": None,
        "us-ascii": None,
        "ascii": None,
        "none": None,
    }
    if name in aliases:
        return aliases[name]
    try:
        info = codecs.lookup(name)
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True):
        return None  # rot13, base64, zlib: transforms, not charsets
    if info.name.startswith("utf-16") or info.name.startswith("utf-32"):
        return None  # a header in ASCII cannot truly announce a two-byte body
    return "utf-8" if info.name == "utf-8" else info.name
