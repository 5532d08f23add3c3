"""MT940 (SWIFT customer statement): one or more messages, with or without the SWIFT
block headers ({1:...}{2:...}{4: ... -}), read line by line (docs/statements.md).

:25: the account, :60F:/:60M: the opening balance, :61: a line (the entry date when
given, else the value date; C/D, and RC/RD reversals; a decimal comma; the bank's
reference, at most 16 characters after //, else, without //, the account owner's), the
:86: after it the memo (several joined by a space; the payee from its ?32/?33 subfields
in the German structured form), :62F:/:62M: the closing balance (the last message's).
A tag may be followed by a space (:86: text). A '-' line ends a message only where a new
message or the end of the file follows. A two-digit year YY is 20YY below 80, else
19YY. MT940 has no period.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..bankfile import (
    DEFAULT_MAX_LINES,
    BankFile,
    BankLine,
    BankStatement,
    StatementFormatError,
    account_key,
    add_line,
)
from .common import amount_cents, clean, decode_text, make_date, quote, two_digit_year

# A line that may begin or end a field: a tag (:61:), a SWIFT block ({1:...), a message's
# end (-); every other line continues the open field or is read past. Found by one
# search, so that lines read past (blank ones, a bank's header) cost no Python step each.
_CANDIDATE = re.compile(r"^(?::[0-9]{2}[A-Z]?:|\{|[^\S\n]*-)", re.MULTILINE)
# A line that begins a field or a SWIFT block (what may follow a '-' line).
_NEXT_MARK = re.compile(r"^(?::([0-9]{2}[A-Z]?):|\{)", re.MULTILINE)
_BRACE = re.compile(r"[{}]")
_TWO_CLOSING = re.compile(r"\}[^{}]*\}")
_TWO_OPENING = re.compile(r"\{[^{}]*\{")
_BLOCK_OPENINGS = ("1:", "2:", "3:", "5:")
_TAG = re.compile(r":(\d{2}[A-Z]?):", re.ASCII)
_BALANCE = re.compile(r"([CD])(\d{2})(\d{2})(\d{2})([A-Z]{3})(\d[\d,.]*)", re.ASCII)
_ENTRY = re.compile(
    r"(\d{2})(\d{2})(\d{2})(\d{4}| {4})?(RC|RD|C|D)([A-Z])?(\d[\d,.]*)(.*)", re.ASCII
)
_TYPE = re.compile(r"[NSF][A-Z0-9]{3}")
_SUBFIELD = re.compile(r"\?([0-9]{2})")
_STRUCTURED = re.compile(r"[0-9]{3}\?")  # 166?00...: the German structured :86:
_PURPOSE = {f"{n}" for n in range(20, 30)} | {"60", "61", "62", "63"}
_NO_REFERENCE = "NONREF"
# The bank's reference in a :61: (after //) is at most 16 characters.
BANK_REFERENCE_CHARS = 16
# SWIFT lines are at most 65 characters; a field line far longer is refused before any
# pattern looks at it.
MAX_LINE = 512
# A field with its continuation lines (an :86: is at most 6 lines of 65 in SWIFT): a field
# far longer is refused before it is split into lines.
MAX_FIELD = 8192
# Fields, block lines and message ends one file may hold: each costs a few microseconds
# of Python, so that a 5 MiB file of empty fields (":99:" a million times) would cost
# seconds. A statement of 20,000 lines (MAX_STATEMENT_LINES) in one message has about
# 40,000 (:61: and :86:).
MAX_FIELDS = 100_000


@dataclass
class _Field:
    tag: str
    line: int
    parts: list[str] = field(default_factory=list)
    size: int = 0

    @property
    def value(self) -> str:
        return "\n".join(self.parts)

    def extend(self, chunk: str) -> None:
        """The continuation lines in `chunk` (blank ones read past), refused past MAX_FIELD."""
        chunk = chunk.strip()
        self.size += len(chunk)
        if self.size > MAX_FIELD:
            raise StatementFormatError(
                f"line {self.line}", f":{self.tag}: is over {MAX_FIELD} characters long"
            )
        if chunk:
            self.parts.extend(
                line for raw in chunk.split("\n") if (line := raw.rstrip("\r")).strip()
            )


def _block_end(line: str, pos: int) -> int:
    """Where the block whose content begins at pos ends (after its '}'), its inner blocks
    one deep ({3:{108:...}}); -1 when it does not close on this line. By searches, each
    a single pass: its braces must run '{}{}...{}}', so it ends at the first two closing
    braces in a row, unless two opening ones come first (nested deeper) or none follows.
    (A regular expression repeating a group per inner block kept ~60 bytes of
    backtracking state per byte of the line.)"""
    first = _BRACE.search(line, pos)
    if first is None:
        return -1
    if first.group() == "}":
        return first.end()
    close = _TWO_CLOSING.search(line, pos)
    if close is None:
        return -1
    deeper = _TWO_OPENING.search(line, pos, close.start() + 1)
    return -1 if deeper is not None else close.end()


def _without_blocks(line: str) -> str:
    """The line without the SWIFT blocks it begins with ({1:...}{2:...}{3:{108:...}}, at
    most three); a block that does not close on the line stays."""
    pos = 0
    for _ in range(3):
        if not (line.startswith("{", pos) and line[pos + 1 : pos + 3] in _BLOCK_OPENINGS):
            break
        end = _block_end(line, pos + 3)
        if end < 0:
            break
        pos = end
    return line[pos:]


def _ends_message(stripped: str) -> bool:
    """'-', '-}' (or a run of them): the end of a message, if one follows (_fields)."""
    return (
        stripped.startswith("-") and stripped.rstrip("-}").strip() == ""
    ) or stripped.startswith("-}")


class _Lookahead:
    """Whether a new message or the end of the file follows a position: the next line
    that begins a field or a SWIFT block is a :20: or a block, or there is none. The
    search is kept and used again from any later position before what it found, so that
    a run of '-' lines costs one search, not one each (linear in the file)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.searched_from = len(text) + 1  # nothing searched yet
        self.found: re.Match[str] | None = None

    def new_message_at(self, pos: int) -> bool:
        found = self.found
        if self.searched_from > pos or (found is not None and found.start() < pos):
            found = self.found = _NEXT_MARK.search(self.text, pos)
            self.searched_from = pos
        return found is None or found.group(1) in (None, "20")


def _fields(text: str) -> Iterator[_Field]:
    """The tagged fields in file order (continuation lines joined with newlines), each
    handed on once whole. A line that is only '-' ends a message, so it ends the field
    before it, where a new message (:20: or a SWIFT block, after any text such as a
    bank's header) or the end of the file follows; otherwise it is text of the open
    field (a '-' line in an :86: memo). '-}' always ends one (the end of block 4). Text
    before the first tag (a bank's file header) is read past."""
    current: _Field | None = None
    lookahead = _Lookahead(text)
    number, pos, end = 1, 0, len(text)  # number: the line number at pos
    steps = 0
    while pos < end:
        found = _CANDIDATE.search(text, pos)
        stop = end if found is None else found.start()
        if current is not None and stop > pos:
            current.extend(text[pos:stop])
        number += text.count("\n", pos, stop)
        if found is None:
            break
        steps += 1
        if steps > MAX_FIELDS:
            raise StatementFormatError(
                f"line {number}", f"more than {MAX_FIELDS:,} fields, block lines and message ends"
            )
        newline = text.find("\n", stop)
        pos = end if newline < 0 else newline + 1
        line = text[stop : end if newline < 0 else newline].rstrip("\r")
        if line.startswith("{"):
            line = _without_blocks(line)
            if line.startswith("{4:"):
                line = line[3:]
        stripped = line.strip()
        if _ends_message(stripped) and ("}" in stripped or lookahead.new_message_at(pos)):
            if current is not None:
                yield current
            current = None
            yield _Field("-", number)
        elif match := _TAG.match(line):
            if current is not None:
                yield current
            current = _Field(match.group(1), number, [])
            current.parts.append(line[match.end() :].lstrip(" "))  # ':86: text' too
            current.size = len(current.parts[0])
            if current.size > MAX_FIELD:
                raise StatementFormatError(
                    f"line {number}", f":{current.tag}: is over {MAX_FIELD} characters long"
                )
        elif current is not None and stripped:
            current.extend(line)
        number += 1
    if current is not None:
        yield current


def _balance(item: _Field) -> tuple[int, dt.date, str]:
    where = f"line {item.line}"
    value = item.value.strip()
    if len(value) > MAX_LINE:
        raise StatementFormatError(where, f":{item.tag}: is over {MAX_LINE} characters long")
    match = _BALANCE.fullmatch(value)
    if match is None:
        raise StatementFormatError(where, f":{item.tag}: {quote(value)} is not a balance")
    mark, yy, mm, dd, currency, amount = match.groups()
    cents = amount_cents(amount, where, f":{item.tag}: amount")
    on = make_date(two_digit_year(int(yy)), int(mm), int(dd), where, value[1:7])
    return (-cents if mark == "D" else cents), on, currency


def _entry(item: _Field) -> BankLine:
    where = f"line {item.line}"
    first = item.parts[0].strip()
    if len(first) > MAX_LINE:
        raise StatementFormatError(where, f":61: is over {MAX_LINE} characters long")
    match = _ENTRY.fullmatch(first)
    if match is None:
        raise StatementFormatError(where, f":61: {quote(first)} is not a statement line")
    yy, mm, dd, entry, mark, _funds, amount, rest = match.groups()
    year = two_digit_year(int(yy))
    booked = make_date(year, int(mm), int(dd), where, first[:6])
    if entry and entry.strip():
        month, day = int(entry[:2]), int(entry[2:])
        if month - booked.month > 6:
            year -= 1  # booked in December for a value date in January
        elif booked.month - month > 6:
            year += 1  # booked in January for a value date in December
        booked = make_date(year, month, day, where, entry)
    cents = amount_cents(amount, where, ":61: amount")
    if mark in ("D", "RC"):
        cents = -cents
    if _TYPE.match(rest):
        rest = rest[4:]
    # SWIFT: the account owner's reference, then the bank's: // and at most 16
    # characters, then the supplementary details (on a line of their own, or run on by
    # some banks), never part of it. Without //, the owner's reference stands in.
    owner, slashes, bank = rest.partition("//")
    reference = clean(bank[:BANK_REFERENCE_CHARS]) if slashes else clean(owner)
    if reference is not None and reference.upper() == _NO_REFERENCE:
        reference = None  # none given: never the owner's in its place
    return BankLine(booked_on=booked, amount_cents=cents, bank_ref=reference, source=where)


def _details(item: _Field) -> tuple[str | None, str | None]:
    """An :86: after a :61:: its memo, and the payee when it is structured (?NN). (Its
    parts hold no carriage return: _fields takes them off.)"""
    parts = item.parts
    head = parts[0] if len(parts[0]) >= 4 else "".join(parts)
    if _STRUCTURED.match(head) or head.startswith("?"):
        flat = "".join(parts)
        pieces = _SUBFIELD.split(flat)
        sub: dict[str, list[str]] = {}
        for code, text in zip(pieces[1::2], pieces[2::2], strict=True):
            sub.setdefault(code, []).append(text)
        purpose = "".join(t for code in sorted(sub) if code in _PURPOSE for t in sub[code])
        memo = clean(purpose) or clean("".join(sub.get("00", [])))
        return memo, clean("".join(sub.get("32", []) + sub.get("33", [])))
    return clean(" ".join(parts)), None


class _Details:
    """The :86: fields after one :61: (a bank may write several): their memos joined by
    a space, the first payee one gives; set on the line when it is done."""

    def __init__(self, line: BankLine) -> None:
        self.line = line
        self.memos: list[str] = []

    def add(self, item: _Field) -> None:
        memo, payee = _details(item)
        if memo:
            self.memos.append(memo)
        self.line.payee = self.line.payee or payee

    def done(self) -> None:
        self.line.memo = " ".join(self.memos) or None


@dataclass
class _Message:
    line: int
    statement: BankStatement | None = None
    closed: bool = False


def read(data: bytes, max_lines: int = DEFAULT_MAX_LINES) -> BankFile:
    """An MT940 file as a BankFile; at most max_lines lines (TooManyLines beyond)."""
    fields = _fields(decode_text(data, None))
    by_account: dict[str, BankStatement] = {}
    message: _Message | None = None
    details: _Details | None = None  # of the last :61:, while :86: follow it

    def finish() -> None:
        if message is not None and not message.closed:
            raise StatementFormatError(
                f"line {message.line}",
                "the message that begins here has no closing balance :62F: (truncated?)",
            )

    def statement_of(account: str | None) -> BankStatement:
        key = account_key(account)
        if key not in by_account:
            by_account[key] = BankStatement(bank_account=account)
        return by_account[key]

    for item in fields:
        if item.tag == "86" and details is not None:
            details.add(item)
            continue
        if details is not None:
            details.done()
            details = None
        if item.tag == "-":
            finish()
            message = None
            continue
        if item.tag == "20" or message is None:
            finish()
            message = _Message(item.line)
            if item.tag == "20":
                continue
        if item.tag == "25":
            message.statement = statement_of(clean(item.value))
            continue
        if item.tag in ("60F", "60M", "61", "62F", "62M") and message.statement is None:
            message.statement = statement_of(None)
        statement = message.statement
        if item.tag in ("60F", "60M"):
            cents, _on, currency = _balance(item)
            if statement is not None and statement.opening_balance_cents is None:
                statement.opening_balance_cents = cents
            if statement is not None:
                statement.currency = statement.currency or currency
        elif item.tag == "61" and statement is not None:
            line = _entry(item)
            add_line(statement, line, max_lines)
            details = _Details(line)
        elif item.tag in ("62F", "62M") and statement is not None:
            # The last message's (a statement without :62F:: its last :62M:).
            cents, on, currency = _balance(item)
            statement.closing_balance_cents, statement.closing_balance_on = cents, on
            statement.currency = statement.currency or currency
            message.closed = True
    if details is not None:
        details.done()
    finish()
    if not by_account:
        raise StatementFormatError("line 1", "the MT940 file holds no statement")
    return BankFile(format="mt940", statements=list(by_account.values()))
