"""What the statement readers produce, whatever the format.

A reader turns the bytes of one file into a BankFile: one BankStatement per bank
account found (statements of one account in one file are read as one), each with
its lines in file order. Amounts are integer cents, signed as the bank signs them
(money into the account positive), worked out by string arithmetic, never floats.
What the file leaves out is None.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from ..errors import BadRequestError, UnsupportedMediaTypeError

FORMATS = ("ofx", "camt.053", "mt940")


def account_key(identifier: str | None) -> str:
    """A bank account identifier as compared: without spaces, case-folded ("" for
    none). Statements of one account in one file are read as one by this key, and
    `bank_account` picks one of several by it."""
    return "".join((identifier or "").split()).casefold()


@dataclass
class BankLine:
    booked_on: dt.date
    amount_cents: int  # signed as the bank signs it: money in positive
    payee: str | None = None
    memo: str | None = None
    bank_ref: str | None = None


@dataclass
class BankStatement:
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
