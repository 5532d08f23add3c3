"""The audit trail of a statement's lines (docs/statements.md, "Checking"): one event
per line a person posts, matches or ignores, carrying the line as it is afterwards,
so `verify` can replay every line (verify_statements.py) and History can say what
happened to it.

  statement_line.posted   {"line": LINE, "entry_id": the statement account's entry
  statement_line.matched                              that now holds the line's bank_ref}
  statement_line.ignored  {"line": LINE}
  statement_line.undone   {"line": LINE, "undone": {"status": the line's before,
                                                   "transaction_id", "entry_id"}}

LINE is {statement_id, line_id, booked_on, amount_cents, payee, memo, bank_ref,
status, transaction_id}: the line after the action (status "posted", "matched" or
"ignored"; transaction_id null when ignored; "new" and null when undone). An undone
line's `undone` says what was undone: the status it had, its transaction (deleted
when it was posted) and the statement account's entry the line had marked (a match's
loses its cleared mark and bank reference), either null when there was none.

posted(), matched() and ignored() gather the events of the unit of work (a request
may act on 10,000 lines); flush(), once the request's lines are done, writes them all
in one statement (audit.record_many), in the same unit of work as the lines' change.
What a unit gathered and did not write (it was rolled back) is never written by
another: the gathered events belong to the session's transaction.
"""

from __future__ import annotations

from sqlalchemy import select

from ...extensions import db
from ...models import Entry
from ...store import dialect
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


_KEY = "statement_line_events"


def _gathered() -> list[tuple]:
    """The events this unit of work has gathered (a new list in a new transaction)."""
    session = db.session()
    session.connection()  # the unit's transaction begun, so the events are its own
    current = session.get_transaction()
    held = session.info.get(_KEY)
    if held is None or held[0] is not current:
        held = session.info[_KEY] = (current, [])
    return held[1]


def posted(statement_id: int, line, tx_id: int, account_id: int) -> None:
    """The line posted as transaction `tx_id`; its entry in the statement's account
    `account_id` holds the line's bank reference."""
    obj = {"line": line_object(statement_id, line, "posted", tx_id)}
    _gathered().append(("statement_line.posted", obj, (int(tx_id), int(account_id))))


def matched(statement_id: int, line, tx_id: int, entry_id: int) -> None:
    """The line matched to transaction `tx_id`, whose entry `entry_id` holds its
    bank reference."""
    obj = {"line": line_object(statement_id, line, "matched", tx_id), "entry_id": int(entry_id)}
    _gathered().append(("statement_line.matched", obj, None))


def ignored(statement_id: int, line) -> None:
    """The line set aside."""
    _gathered().append(
        ("statement_line.ignored", {"line": line_object(statement_id, line, "ignored", None)}, None)
    )


def undone(statement_id: int, line, before: str, tx_id: int | None, entry_id: int | None) -> None:
    """The line, `before` posted, matched or ignored, waits again."""
    obj = {
        "line": line_object(statement_id, line, "new", None),
        "undone": {"status": before, "transaction_id": tx_id, "entry_id": entry_id},
    }
    _gathered().append(("statement_line.undone", obj, None))


def flush() -> None:
    """Write the gathered events, in the order gathered; a posted line's event names
    its transaction's entry in the statement's account (read here, a chunk at a time)."""
    events = _gathered()
    if not events:
        return
    wanted = sorted({where for _, _, where in events if where is not None})
    entries: dict[tuple[int, int], int] = {}
    for chunk in dialect.in_chunks(wanted):
        rows = db.session.execute(
            select(Entry.transaction_id, Entry.account_id, Entry.id).where(
                Entry.transaction_id.in_([tx for tx, _ in chunk])
            )
        )
        entries.update({(int(tx), int(account)): int(entry) for tx, account, entry in rows})
    written = []
    for action, obj, where in events:
        if where is not None:
            obj["entry_id"] = entries[where]
        written.append((action, obj))
    audit.record_many(written)
    events.clear()
