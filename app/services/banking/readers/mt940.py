"""MT940 (SWIFT customer statement): one or more messages, with or without the SWIFT
block headers ({1:...}{2:...}{4: ... -}), read line by line (docs/statements.md).

:25: the account, :60F:/:60M: the opening balance, :61: a line (the entry date when
given, else the value date; C/D, and RC/RD reversals; a decimal comma; the bank's
reference after //, else the account owner's), the :86: after it the memo (the payee
from its ?32/?33 subfields in the German structured form), :62F:/:62M: the closing
balance. A two-digit year YY is 20YY below 80, else 19YY. MT940 has no period.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from ..bankfile import BankFile, BankLine, BankStatement, StatementFormatError, account_key
from .common import amount_cents, clean, decode_text, make_date, quote, two_digit_year

# A SWIFT block, with blocks nested one deep ({3:{108:...}}); written as an unrolled loop,
# so that a long block costs no memory per character (an alternation repeated per
# character, (?:[^{}]|{...})*, made the regex engine keep ~130 bytes for each one).
_BLOCK = re.compile(r"\{[1235]:[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")
_TAG = re.compile(r":(\d{2}[A-Z]?):")
_BALANCE = re.compile(r"([CD])(\d{2})(\d{2})(\d{2})([A-Z]{3})(\d[\d,.]*)")
_ENTRY = re.compile(r"(\d{2})(\d{2})(\d{2})(\d{4}| {4})?(RC|RD|C|D)([A-Z])?(\d[\d,.]*)(.*)")
_TYPE = re.compile(r"[NSF][A-Z0-9]{3}")
_SUBFIELD = re.compile(r"\?(\d{2})")
_PURPOSE = {f"{n}" for n in range(20, 30)} | {"60", "61", "62", "63"}
_NO_REFERENCE = "NONREF"
# SWIFT lines are at most 65 characters; a field line far longer is refused before any
# pattern looks at it.
MAX_LINE = 512


@dataclass
class _Field:
    tag: str
    line: int
    parts: list[str] = field(default_factory=list)

    @property
    def value(self) -> str:
        return "\n".join(self.parts)


def _fields(text: str) -> list[_Field]:
    """The tagged fields in file order (continuation lines joined with newlines); a line
    that is only '-' (or '-}') ends a message, so it ends the field before it."""
    fields: list[_Field] = []
    current: _Field | None = None
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if line.startswith("{"):
            line = _BLOCK.sub("", line, count=3)
            if line.startswith("{4:"):
                line = line[3:]
        stripped = line.strip()
        if (
            stripped.startswith("-")
            and stripped.rstrip("-}").strip() == ""
            or (stripped.startswith("-}"))
        ):
            current = None
            fields.append(_Field("-", number))
            continue
        match = _TAG.match(line)
        if match:
            current = _Field(match.group(1), number, [line[match.end() :]])
            fields.append(current)
        elif current is not None and stripped:
            current.parts.append(line)
        # text before the first tag (a bank's file header) is read past
    return fields


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
    owner, _, bank = rest.partition("//")
    reference = clean(bank) or clean(owner)
    return BankLine(
        booked_on=booked,
        amount_cents=cents,
        bank_ref=None if reference == _NO_REFERENCE else reference,
    )


def _details(item: _Field, line: BankLine) -> None:
    """The :86: after a :61:: the memo, and the payee when it is structured (?NN)."""
    flat = "".join(part.strip("\r") for part in item.parts)
    if re.match(r"\d{3}\?", flat) or flat.startswith("?"):
        pieces = _SUBFIELD.split(flat)
        sub: dict[str, list[str]] = {}
        for code, text in zip(pieces[1::2], pieces[2::2], strict=True):
            sub.setdefault(code, []).append(text)
        purpose = "".join(t for code in sorted(sub) if code in _PURPOSE for t in sub[code])
        line.memo = clean(purpose) or clean("".join(sub.get("00", [])))
        line.payee = clean("".join(sub.get("32", []) + sub.get("33", [])))
    else:
        line.memo = clean(" ".join(part.strip() for part in item.parts))


@dataclass
class _Message:
    line: int
    statement: BankStatement | None = None
    closed: bool = False


def read(data: bytes) -> BankFile:
    fields = _fields(decode_text(data, None))
    by_account: dict[str, BankStatement] = {}
    message: _Message | None = None
    last: BankLine | None = None

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
        previous, last = last, None
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
            last = _entry(item)
            statement.lines.append(last)
        elif item.tag == "86" and previous is not None:
            _details(item, previous)
        elif item.tag in ("62F", "62M") and statement is not None:
            cents, on, currency = _balance(item)
            statement.closing_balance_cents, statement.closing_balance_on = cents, on
            statement.currency = statement.currency or currency
            message.closed = True
    finish()
    if not by_account:
        raise StatementFormatError("line 1", "the MT940 file holds no statement")
    return BankFile(format="mt940", statements=list(by_account.values()))
