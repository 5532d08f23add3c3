"""Transactions: listing, recording, deleting.

IMPORTANT: a posting is written only if it has at least two entries that sum to
exactly zero. This function is the single write path for postings (HTTP, MCP and
import all call record_transaction); the store re-checks the same rule at commit.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import BigInteger, any_, bindparam, cast, delete, insert, or_, select
from sqlalchemy.dialects import postgresql

from ..extensions import db
from ..models import Account, Entry, Transaction, User
from . import clock, validate
from .errors import BadRequest, NotFound

DESCRIPTION_MAX = 2000
ENTRY_CHUNK = 1000  # x3 parameters stays under SQLite 32766 and PostgreSQL 65535


def check_balanced(entries: list[tuple[int, int]]) -> None:
    """The double-entry rule: at least two entries, summing to zero."""
    if len(entries) < 2:
        raise BadRequest(f"a transaction needs at least 2 entries; got {len(entries)}")
    total = sum(amount for _, amount in entries)
    if total != 0:
        raise BadRequest(
            f"entries must sum to 0; the {len(entries)} entries sum to {total}"
        )


def check_accounts_exist(account_ids: set[int]) -> None:
    query = select(Account.id).where(Account.id.in_(account_ids))
    found = set(db.session.connection().execute(query).scalars())
    missing = sorted(account_ids - found)
    if missing:
        raise BadRequest(f"unknown account_id {missing[0]}")


def record_transaction(occurred_on, description, entries, created_by: int | None) -> int:
    """Validate and store one balanced posting with its entries; return its id."""
    if occurred_on is None:
        raise BadRequest("occurred_on is required")
    day = validate.date_value("occurred_on", occurred_on)
    description = validate.text("description", description, max_length=DESCRIPTION_MAX)
    parsed = validate.entries(entries)
    check_balanced(parsed)
    check_accounts_exist({account_id for account_id, _ in parsed})

    # Core statements on the session's connection: the same transaction, without
    # the ORM's per-statement bookkeeping (nothing here is an ORM object).
    connection = db.session.connection()
    tx_id = connection.execute(
        insert(Transaction)
        .values(
            occurred_on=day,
            description=description,
            created_by=created_by,
            created_at=clock.now(),
        )
        .returning(Transaction.id)
    ).scalar_one()
    rows = [
        {"transaction_id": tx_id, "account_id": account_id, "amount_cents": amount}
        for account_id, amount in parsed
    ]
    # One multi-row INSERT (one round trip, and on PostgreSQL one firing of the
    # statement-level trigger that maintains the derived balance tables); huge
    # postings go in chunks that stay under both stores' bound-parameter limits.
    for i in range(0, len(rows), ENTRY_CHUNK):
        connection.execute(insert(Entry).values(rows[i : i + ENTRY_CHUNK]))
    return tx_id


def delete_transaction(tx_id: int) -> None:
    """Delete a transaction and (by cascade) its entries."""
    if not validate.INT64_MIN <= tx_id <= validate.INT64_MAX:
        raise NotFound("no such transaction")
    result = db.session.execute(delete(Transaction).where(Transaction.id == tx_id))
    if result.rowcount != 1:
        raise NotFound("no such transaction")


def list_transactions(start: date | None, end: date | None) -> list[dict]:
    """Transactions in an inclusive window, newest first, each with its entries."""
    query = (
        select(Transaction.id, Transaction.occurred_on, Transaction.description, User.email)
        .outerjoin(User, User.id == Transaction.created_by)
        .order_by(Transaction.occurred_on.desc(), Transaction.id.desc())
    )
    if start is not None:
        query = query.where(Transaction.occurred_on >= start)
    if end is not None:
        query = query.where(Transaction.occurred_on <= end)
    connection = db.session.connection()
    headers = connection.execute(query).all()
    if not headers:
        return []
    names = dict(connection.execute(select(Account.id, Account.name)).all())
    by_tx: dict[int, list[dict]] = {h[0]: [] for h in headers}
    for tx_id, account_id, amount in _entries_of(connection, list(by_tx)):
        by_tx[tx_id].append(
            {"account_id": account_id, "account_name": names[account_id], "amount_cents": amount}
        )
    return [
        {
            "id": tx_id,
            "occurred_on": occurred_on.isoformat(),
            "description": description,
            "created_by_email": email,
            "entries": by_tx[tx_id],
        }
        for tx_id, occurred_on, description, email in headers
    ]


LIST_CHUNK = 900  # ids per IN list on SQLite (under its oldest parameter limit, 999)
RUN_GAP = 8  # ids this close are read as one range (the few in between are dropped)
MAX_RUNS = 32  # more ranges than this: look the ids up one by one instead


def _runs(ids: list[int]) -> list[tuple[int, int]]:
    ordered = sorted(ids)
    runs, start, prev = [], ordered[0], ordered[0]
    for tx_id in ordered[1:]:
        if tx_id - prev > RUN_GAP:
            runs.append((start, prev))
            start = tx_id
        prev = tx_id
    runs.append((start, prev))
    return runs


def _entries_of(connection, tx_ids: list[int]):
    """(transaction_id, account_id, amount_cents) of the given transactions, by entry id.

    Read through ix_entries_transaction_id, so a listing costs what it returns, not
    the size of the ledger (a join on the date window lets PostgreSQL's planner scan
    every entry instead). Books grow in date order, so a window's ids mostly form a
    few runs: each run is one index range; otherwise the ids are looked up one by
    one. Rows of transactions not asked for (gaps inside a run) are dropped here.
    """
    wanted = set(tx_ids)
    columns = select(Entry.transaction_id, Entry.account_id, Entry.amount_cents).order_by(
        Entry.transaction_id, Entry.id
    )
    runs = _runs(tx_ids)
    if len(runs) <= MAX_RUNS:
        ranges = or_(*(Entry.transaction_id.between(lo, hi) for lo, hi in runs))
        rows = connection.execute(columns.where(ranges)).all()
        return [row for row in rows if row[0] in wanted]
    if connection.dialect.name == "postgresql":
        # The array travels as one text literal: psycopg's per-element dumping of
        # thousands of ints costs more than the query.
        ids = cast(bindparam("ids", "{" + ",".join(map(str, tx_ids)) + "}"),
                   postgresql.ARRAY(BigInteger))
        return connection.execute(columns.where(Entry.transaction_id == any_(ids))).all()
    rows = []
    for i in range(0, len(tx_ids), LIST_CHUNK):
        chunk = tx_ids[i : i + LIST_CHUNK]
        rows.extend(connection.execute(columns.where(Entry.transaction_id.in_(chunk))).all())
    return rows
