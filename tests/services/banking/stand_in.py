"""A stand-in for the statement readers in these tests: the statements service is
tested on BankFile objects, whatever format they came from (the readers have tests
of their own). A stand-in file is `STAND-IN` and a line break, then the BankFile as
JSON; anything else is not a statement (415). `install` puts it in place of the
service's reader (statements.read_file) for one test; `upload` sends one over HTTP.
"""

from __future__ import annotations

import datetime as dt
import json

from app.services.banking import statements
from app.services.banking.bankfile import BankFile, BankLine, BankStatement, NotAStatement
from tests.testkit import BOUNDARY, multipart

MAGIC = b"STAND-IN\n"


def _day(value):
    return None if value is None else dt.date.fromisoformat(value)


def read(data: bytes) -> BankFile:
    if not data.startswith(MAGIC):
        raise NotAStatement()
    doc = json.loads(data[len(MAGIC) :])
    return BankFile(
        format=doc.get("format", "ofx"),
        statements=[
            BankStatement(
                bank_account=s.get("bank_account"),
                currency=s.get("currency"),
                period_from=_day(s.get("period_from")),
                period_to=_day(s.get("period_to")),
                opening_balance_cents=s.get("opening_balance_cents"),
                closing_balance_cents=s.get("closing_balance_cents"),
                closing_balance_on=_day(s.get("closing_balance_on")),
                lines=[
                    BankLine(
                        booked_on=dt.date.fromisoformat(line["booked_on"]),
                        amount_cents=line["amount_cents"],
                        payee=line.get("payee"),
                        memo=line.get("memo"),
                        bank_ref=line.get("bank_ref"),
                    )
                    for line in s.get("lines", [])
                ],
            )
            for s in doc["statements"]
        ],
    )


# key: (name, kind) of the accounts the statement tests file into (conftest.books).
BOOKS = {
    "bank": ("Bank", "asset"),
    "card": ("Card", "liability"),
    "food": ("Food", "expense"),
    "dues": ("Dues", "income"),
}


def install(monkeypatch) -> None:
    monkeypatch.setattr(statements, "read_file", read)


def line(booked_on, amount_cents, payee=None, bank_ref=None, memo=None) -> dict:
    return {
        "booked_on": booked_on,
        "amount_cents": amount_cents,
        "payee": payee,
        "memo": memo,
        "bank_ref": bank_ref,
    }


def statement_file(*lines, fmt="ofx", **header) -> bytes:
    """One statement's stand-in file (header: bank_account, closing_balance_cents, ...)."""
    body = {"bank_account": "NL91 ABNA 0417 1643 00", **header, "lines": list(lines)}
    return MAGIC + json.dumps({"format": fmt, "statements": [body]}).encode()


def downloaded_again(data: bytes, times: int = 1) -> bytes:
    """The same statement downloaded again: banks stamp each download (OFX's
    DTSERVER), so the bytes differ while every line is the same."""
    return data + b"\n" * times


def several_file(*statements_) -> bytes:
    return MAGIC + json.dumps({"format": "camt.053", "statements": list(statements_)}).encode()


def upload_statement(api, account_id, data: bytes, **fields):
    """POST /accounts/{account_id}/statements with the file (and form `fields`)."""
    return api.post(
        f"/accounts/{account_id}/statements",
        data=multipart(data, "statement.ofx", "application/octet-stream", fields=fields),
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
    )
