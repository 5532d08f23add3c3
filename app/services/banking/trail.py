"""The audit trail of a statement's lines (docs/statements.md, "Checking"): one event
per line a person posts, matches or ignores, carrying the line as it is afterwards,
so `verify` can replay every line (verify_statements.py) and History can say what
happened to it.

  statement_line.posted   {"line": LINE, "entry_id": the statement account's entry
  statement_line.matched                              that now holds the line's bank_ref}
  statement_line.ignored  {"line": LINE}

LINE is {statement_id, line_id, booked_on, amount_cents, payee, memo, bank_ref,
status, transaction_id}: the line after the action (status "posted", "matched" or
"ignored"; transaction_id null when ignored). Each is recorded in the unit of work of
the action itself, beside the transaction.posted and entries.cleared events the
action already writes.
"""

from __future__ import annotations

from sqlalchemy import select

from ...extensions import db
from ...models import Entry
from ..ledger import audit


def line_fields(line, status: str, tx_id: int | None) -> dict:
    """A line as the trail carries it, without its statement's id (`line`: a stored
    row or the upload's dict; `status` and `tx_id`: the line's after the change)."""

    def get(key: str):
        return line[key] if isinstance(line, dict) else getattr(line, key)

    booked_on = get("booked_on")
    return {
        "line_id": int(get("line_id")),
        "booked_on": booked_on if isinstance(booked_on, str) else booked_on.isoformat(),
        "amount_cents": int(get("amount_cents")),
        "payee": get("payee"),
        "memo": get("memo"),
        "bank_ref": get("bank_ref"),
        "status": status,
        "transaction_id": None if tx_id is None else int(tx_id),
    }


def line_object(statement_id: int, line, status: str, tx_id: int | None) -> dict:
    """LINE (the module docstring): line_fields with the statement's id."""
    return {"statement_id": int(statement_id), **line_fields(line, status, tx_id)}


def posted(statement_id: int, line, tx_id: int, account_id: int) -> None:
    """The line posted as transaction `tx_id`; its entry in the statement's account
    `account_id` holds the line's bank reference."""
    entry_id = db.session.execute(
        select(Entry.id).where(Entry.transaction_id == tx_id, Entry.account_id == account_id)
    ).scalar_one()
    audit.record(
        "statement_line.posted",
        {"line": line_object(statement_id, line, "posted", tx_id), "entry_id": int(entry_id)},
    )


def matched(statement_id: int, line, tx_id: int, entry_id: int) -> None:
    """The line matched to transaction `tx_id`, whose entry `entry_id` holds its
    bank reference."""
    audit.record(
        "statement_line.matched",
        {"line": line_object(statement_id, line, "matched", tx_id), "entry_id": int(entry_id)},
    )


def ignored(statement_id: int, line) -> None:
    """The line set aside."""
    audit.record(
        "statement_line.ignored", {"line": line_object(statement_id, line, "ignored", None)}
    )
