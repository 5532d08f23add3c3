"""`ledger-service verify`, the transactions (verify.py runs every check): the stored
transactions compared exactly with the trail's, in bounded memory.

The database sorts the trail's transaction events by transaction id (then seq), and
that stream is merged with the stored transactions read in id order, BATCH at a time.
For each id the events give what the books must hold (postings minus deletions) and
that is compared field by field with the stored transaction, so the first difference
is named as it is met. Only one transaction's events and one batch of rows are in
memory. (Until issue 28 the comparison summed SHA-256 digests per block of ids, an
additive multiset hash a database writer could defeat with a generalised birthday
search.)
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from contextlib import closing

import orjson
from sqlalchemy import bindparam, text

from ...extensions import db
from ...store import dialect
from . import audit
from .verify_trail import BATCH, TRANSACTION_EVENTS, Disagreement, Replay


def _stored_transactions() -> Iterator[dict]:
    """Stored transactions with their entries, by id, read BATCH at a time."""
    connection = db.session.connection()
    after = None
    while True:
        where = "" if after is None else "WHERE id > :after "
        headers = connection.execute(
            text(
                "SELECT id, occurred_on, description FROM transactions "
                f"{where}ORDER BY id LIMIT {BATCH}"
            ),
            {"after": after},
        ).all()
        if not headers:
            return
        first, last = headers[0][0], headers[-1][0]
        entries: dict[int, list] = {}
        for tx_id, entry_id, account_id, cents in connection.execute(
            text(
                "SELECT transaction_id, id, account_id, amount_cents FROM entries "
                "WHERE transaction_id BETWEEN :first AND :last ORDER BY transaction_id, id"
            ),
            {"first": first, "last": last},
        ):
            entries.setdefault(tx_id, []).append((entry_id, account_id, cents))
        for tx_id, occurred_on, description in headers:
            yield audit.transaction_object(tx_id, occurred_on, description, entries.get(tx_id, []))[
                "transaction"
            ]
        after = last


def compare_transactions(state: Replay) -> tuple[int, int]:
    """The stored transactions against the trail's, exactly, id by id; (transactions,
    entries). A merge of two streams in transaction id order: the trail's transaction
    events sorted by the database, and the stored transactions."""
    orphan = db.session.execute(
        text(
            "SELECT e.id, e.transaction_id FROM entries e LEFT JOIN transactions t"
            " ON t.id = e.transaction_id WHERE t.id IS NULL ORDER BY e.id LIMIT 1"
        )
    ).first()
    if orphan is not None:
        raise Disagreement(
            f"entry {orphan[0]} belongs to transaction {orphan[1]}, which does not exist: "
            "it was added outside the service"
        )
    count = entries = 0
    stored = _stored_transactions()
    mine = next(stored, None)
    with closing(_trail_by_transaction(state)) as trail:
        theirs = next(trail, None)
        while mine is not None or theirs is not None:
            next_ids: list[int] = []
            if mine is not None:
                next_ids.append(mine["id"])
            if theirs is not None:
                next_ids.append(theirs[0])
            tx_id = min(next_ids)
            in_ledger = mine if mine is not None and mine["id"] == tx_id else None
            in_trail = theirs[1] if theirs is not None and theirs[0] == tx_id else []
            _compare_one(tx_id, in_ledger, in_trail)
            if in_ledger is not None:
                count += 1
                entries += len(in_ledger["entries"])
                mine = next(stored, None)
            if in_trail:
                theirs = next(trail, None)
    return count, entries


# The trail's transaction events by transaction id, then seq: sealed ones, and those
# still waiting, numbered after the chain in the order they will be sealed (as
# walk_pending numbers them).
_TRAIL_BY_TRANSACTION = {
    "sqlite": "CAST(json_extract(object, '$.transaction.id') AS INTEGER)",
    "postgresql": "CAST(CAST(object AS json) #>> '{transaction,id}' AS bigint)",
}


def _trail_by_transaction(
    state: Replay,
) -> Generator[tuple[int, list[tuple[str, dict, int]]], None, None]:
    """(transaction id, [(action, transaction, seq), ...] in trail order) for every
    transaction an event names, in id order; the database sorts (the walk has already
    checked every id is an integer it can sort by)."""
    tx_id = _TRAIL_BY_TRANSACTION[dialect.name(db.session.connection())]
    query = text(
        f"SELECT {tx_id} AS tx_id, seq, action, object FROM audit_events"
        " WHERE action IN :actions"
        f" UNION ALL SELECT {tx_id}, :last_seq + n, action, object FROM"
        " (SELECT action, object, ROW_NUMBER() OVER (ORDER BY id) AS n FROM audit_pending)"
        " AS waiting WHERE action IN :actions ORDER BY 1, 2"
    ).bindparams(bindparam("actions", expanding=True))
    rows = db.session.execute(
        query.execution_options(yield_per=BATCH),
        {"actions": list(TRANSACTION_EVENTS), "last_seq": state.last_seq},
    )
    current: int | None = None
    events: list[tuple[str, dict, int]] = []
    try:
        for row in rows:
            if row.tx_id != current:
                if current is not None:
                    yield current, events
                current, events = row.tx_id, []
            events.append((row.action, orjson.loads(row.object)["transaction"], int(row.seq)))
        if current is not None:
            yield current, events
    finally:
        rows.close()  # a server-side cursor on PostgreSQL, also when a difference stops us


def _compare_one(tx_id: int, stored: dict | None, events: list[tuple[str, dict, int]]) -> None:
    """Raise naming the difference when the stored transaction (None: absent) is not
    what the transaction's events leave: its postings minus its deletions."""
    live: list[tuple[dict, int]] = []
    deleted = None
    for action, tx, seq in events:
        if action != "transaction.deleted":
            live.append((tx, seq))
            continue
        deleted = seq
        match = next((i for i, (posted, _) in enumerate(live) if posted == tx), None)
        if match is None:
            raise Disagreement(
                f"audit event seq {seq} deletes transaction {tx_id} as no earlier event "
                "posted it: the trail was written outside the service"
            )
        del live[match]
    if len(live) > 1:
        raise Disagreement(
            f"transaction {tx_id} is posted by events seq {live[0][1]} and seq {live[1][1]} "
            "with no deletion between them: the trail was written outside the service"
        )
    if not live:
        if stored is not None:
            gone = f" (deleted by event seq {deleted})" if deleted is not None else ""
            raise Disagreement(
                f"transaction {tx_id} is in the ledger but no event posted it{gone}: "
                "it was added outside the service"
            )
        return
    recorded, seq = live[0]
    if stored is None:
        raise Disagreement(
            f"transaction {tx_id} (posted by event seq {seq}) is missing from the "
            "ledger: it was removed outside the service"
        )
    if stored != recorded:
        raise Disagreement(
            _transaction_difference(stored, recorded, seq)
            or f"transaction {tx_id} differs from event seq {seq} that posted it"
        )


def _transaction_difference(stored: dict, recorded: dict, seq: int) -> str | None:
    tx_id = stored["id"]
    for key in ("occurred_on", "description"):
        if stored[key] != recorded[key]:
            return (
                f"transaction {tx_id}: {key} is {stored[key]!r} in the ledger but "
                f"{recorded[key]!r} in event seq {seq}"
            )
    mine = {e["id"]: e for e in stored["entries"]}
    theirs = {e["id"]: e for e in recorded["entries"]}
    for entry_id in sorted(set(mine) | set(theirs)):
        if entry_id not in theirs:
            return (
                f"entry {entry_id} of transaction {tx_id} is in the ledger but not in event "
                f"seq {seq} that posted the transaction: it was added outside the service"
            )
        if entry_id not in mine:
            return (
                f"entry {entry_id} of transaction {tx_id} (event seq {seq}) is missing from "
                "the ledger: it was removed outside the service"
            )
        for key in ("account_id", "amount_cents"):
            if mine[entry_id][key] != theirs[entry_id][key]:
                return (
                    f"entry {entry_id} of transaction {tx_id}: {key} is "
                    f"{mine[entry_id][key]} in the ledger but {theirs[entry_id][key]} in "
                    f"event seq {seq}"
                )
    return None
