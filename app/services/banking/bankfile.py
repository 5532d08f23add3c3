"""What the statement readers produce, whatever the format.

A reader turns the bytes of one file into a BankFile: one BankStatement per bank
account found (statements of one account in one file are read as one), each with
its lines in file order. Amounts are integer cents, signed as the bank signs them
(money into the account positive), worked out by string arithmetic, never floats.
What the file leaves out is None.

What a reader hands on is checked here once, whatever the format (`check`): at most
MAX_STATEMENT_LINES lines a statement (413, TooManyLines: the readers count as they
read and stop at the first line over), and text a database stores as it is (400,
naming the line or the statement's field; docs/statements.md, "Reading the files").
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from ..errors import BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError

FORMATS = ("ofx", "camt.053", "mt940")
# The most lines one statement may hold (the setting MAX_STATEMENT_LINES; app/config.py).
DEFAULT_MAX_LINES = 20_000
# The longest text kept from a file, in characters.
MAX_NAME_CHARS = 2_000  # a payee, a memo
MAX_REFERENCE_CHARS = 200  # the bank's reference of a line
MAX_ACCOUNT_CHARS = 100  # the bank account's identifier (IBAN, ACCTID, :25:)
# Control characters (C0 and C1) but tab and line breaks, and lone surrogates, which no
# database stores as text (PostgreSQL refuses NUL; a surrogate is not UTF-8).
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_CURRENCY = re.compile("[A-Za-z]{3}")


def account_key(identifier: str | None) -> str:
    """A bank account identifier as compared: without spaces, case-folded ("" for
    none). Statements of one account in one file are read as one by this key, and
    `bank_account` picks one of several by it."""
    return "".join((identifier or "").split()).casefold()


@dataclass(slots=True)
class BankLine:
    """One line of the bank's statement: a booking on the account, signed as the bank signs it."""

    booked_on: dt.date
    amount_cents: int  # signed as the bank signs it: money in positive
    payee: str | None = None
    memo: str | None = None
    bank_ref: str | None = None
    # Where the line is in the file ("line 17"), for a refusal; not part of its value.
    source: str | None = field(default=None, compare=False, repr=False)


@dataclass
class BankStatement:
    """One bank account's statement in the file: its header figures and its lines in file order."""

    bank_account: str | None  # the identifier as the file gives it (IBAN, ACCTID, :25:)
    currency: str | None = None
    period_from: dt.date | None = None
    period_to: dt.date | None = None
    opening_balance_cents: int | None = None
    closing_balance_cents: int | None = None
    closing_balance_on: dt.date | None = None
    lines: list[BankLine] = field(default_factory=list)


@dataclass
class BankFile:
    """What a reader makes of one file: its format and a statement per bank account."""

    format: str  # one of FORMATS
    statements: list[BankStatement] = field(default_factory=list)


class NotAStatement(UnsupportedMediaTypeError):
    """The bytes are none of the three formats (415)."""

    def __init__(self) -> None:
        super().__init__(
            "the file is not a bank statement this service reads: "
            "send OFX (or QFX), camt.053 or MT940"
        )


class StatementFormatError(BadRequestError):
    """A recognised file that is broken (400), saying where: a line or an XML element."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem


class TooManyLines(PayloadTooLargeError):
    """A statement of more lines than MAX_STATEMENT_LINES (413); the reader stops there."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the statement holds more than the limit of {limit} lines "
            "(MAX_STATEMENT_LINES); nothing was stored"
        )
        self.limit = limit


def add_line(statement: BankStatement, line: BankLine, max_lines: int) -> None:
    """The line appended to the statement, or TooManyLines once it would be one too many."""
    if len(statement.lines) >= max_lines:
        raise TooManyLines(max_lines)
    statement.lines.append(line)


def _text_problem(value: str, what: str, limit: int) -> str | None:
    if len(value) > limit:
        return f"the {what} is {len(value):,} characters long, more than {limit:,}"
    bad = _FORBIDDEN.search(value)
    if bad is not None:
        return (
            f"the {what} holds the control character U+{ord(bad.group()):04X} "
            f"(at character {bad.start() + 1})"
        )
    return None


def check(bank_file: BankFile) -> None:
    """Every statement's identifier and currency and every line's text as the books can
    keep them in either store, else the first problem as a StatementFormatError (400)
    naming the statement's field or the line (its line number in the file when the
    reader gave it, else its line_id in the statement)."""
    for statement in bank_file.statements:
        if statement.bank_account is not None:
            problem = _text_problem(
                statement.bank_account, "bank account identifier", MAX_ACCOUNT_CHARS
            )
            if problem:
                raise StatementFormatError("bank_account", problem)
        currency = statement.currency
        if currency is not None and not _CURRENCY.fullmatch(currency):
            shown = currency if len(currency) <= 20 else currency[:20] + "..."
            raise StatementFormatError(
                "currency", f"{shown!r} is not a currency code of three letters"
            )
        for line_id, line in enumerate(statement.lines, start=1):
            for what, value, limit in (
                ("payee", line.payee, MAX_NAME_CHARS),
                ("memo", line.memo, MAX_NAME_CHARS),
                ("bank reference", line.bank_ref, MAX_REFERENCE_CHARS),
            ):
                problem = None if value is None else _text_problem(value, what, limit)
                if problem:
                    raise StatementFormatError(line.source or f"line_id {line_id}", problem)
