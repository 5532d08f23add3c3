"""Transactions, the write side: recording, correcting, deleting (the listing: listing.py).

IMPORTANT: a posting is written only if it has at least two entries that sum to
exactly zero. This function is the single write path for postings (HTTP, MCP and
import all call record_transaction); the store re-checks the same rule at commit.

A correction (docs/ledger.md, "Corrections in one step") is record_transaction with
`replaces`: the original is checked and locked first, the replacement is posted, and
the original is deleted (replace_original), all in the caller's one unit of work, so
either both happen or neither does.
"""

from __future__ import annotations

import typing
from datetime import date

from sqlalchemy import (
    CursorResult,
    Date,
    bindparam,
    delete,
    insert,
    select,
    text,
    update,
)

from ... import store
from ...extensions import db
from ...models import Entry, StatementLine, Transaction
from ...models.types import UTCDateTime
from ...store import dialect
from .. import clock
from ..errors import BadRequestError, NotFoundError, UnknownReplaced
from . import audit, documents, lock, postable, reconciliation, schedule_meeting, validate

# The checks a posting must pass live in postable.py, shared with the statement
# import and its preview (which must refuse exactly what this refuses).
DESCRIPTION_MAX = postable.DESCRIPTION_MAX
ENTRY_CHUNK = postable.ENTRY_CHUNK


def parse_replaces(value, name: str = "replaces", what: str = "corrects") -> int | None:
    """The optional `replaces` (or `adjusts`) of a posting: None when absent (or null),
    else the id of the transaction it corrects (adjusts), a positive integer (400
    naming it otherwise)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BadRequestError(
            f"'{name}' must be a positive integer: the id of the transaction this one {what}"
        )
    return value


def _adjusted(value) -> int | None:
    """`adjusts` (docs/ledger.md, "Corrections of reconciled transactions"): the id of
    an existing transaction this posting adjusts, carried in its event; 400 otherwise."""
    tx_id = parse_replaces(value, "adjusts", "adjusts")
    if tx_id is not None and (
        tx_id > validate.INT64_MAX
        or db.session.execute(select(Transaction.id).where(Transaction.id == tx_id)).first() is None
    ):
        raise BadRequestError(f"'adjusts': there is no transaction {tx_id}")
    return tx_id


def record_transaction(
    occurred_on,
    description,
    entries,
    created_by: int | None,
    action: str = "transaction.posted",
    replaces=None,
    adjusts=None,
    schedule: dict | None = None,
    meets: tuple[int, date] | None = None,
) -> int:
    """Validate and store one balanced posting with its entries; return its id.

    Its audit event (`action`: transaction.posted, or transaction.imported from the
    importer) carries the posting with its new entry ids, in the same unit of work.
    With `replaces` (a transaction id) the posting corrects that transaction: see
    replace_original; the posting's event then carries `replaces: <id>`, and when the
    original has reconciled or cleared entries, `kept_reconciled` and `kept_cleared`:
    the replacement's entries that keep those marks (reconciliation.kept_in_correction).
    With `adjusts` (a transaction id) the event carries `adjusts: <id>`, the link
    History follows both ways. With `schedule` ({id, occurs_on}: a schedule's posting,
    schedule_occurrences.py) the event carries it. With `meets` ((schedule_id,
    occurs_on): a statement line posted as its schedule suggestion says,
    schedule_meeting.for_lines) it meets that occurrence when it is still open, else
    whatever it qualifies for.
    """
    original_id = parse_replaces(replaces)
    day, description, parsed = postable.checked(occurred_on, description, entries)
    links = {"adjusts": _adjusted(adjusts), "replaces": original_id, "schedule": schedule}
    original, kept = None, []
    if original_id is not None:
        original = _deletable(
            original_id,
            UnknownReplaced(f"'replaces': there is no transaction {original_id}"),
            reconciled_ok=True,
        )
        kept = reconciliation.kept_in_correction(original_id, original.occurred_on, day, parsed)
    # The schedules it may meet (docs/schedules.md, "Meeting"); a schedule's own posting
    # meets nothing. On PostgreSQL the usual posting is written by its one statement
    # only when no schedule may meet it, so it needs no read of the schedules of its
    # own; otherwise (or on SQLite) one indexed query, none found in books without
    # schedules, and then the posting.
    found: list = []
    tx_id = None
    if schedule is None:
        if not kept:  # PostgreSQL: posted unless a schedule may meet it (None: not posted)
            connection = db.session.connection()
            tx_id = _in_one_statement(
                connection, day, description, created_by, parsed, action, links, True, True
            )
        if tx_id is None:
            found = schedule_meeting.candidates(parsed)
    if tx_id is None:
        tx_id = _post(day, description, parsed, created_by, action, links, kept, alone=not found)
    held = schedule_meeting.held_by(original_id) if original_id is not None and found else []
    if original is not None:
        replace_original(original, tx_id)
    if found and not (
        (meets is not None and schedule_meeting.meet_named(found, meets, tx_id))
        or schedule_meeting.take_over(held, found, tx_id, day, description, parsed)
    ):
        schedule_meeting.meet_new(found, tx_id, day, description, parsed)
    return tx_id


def _in_one_statement(
    connection, day, description, created_by, parsed, action, links, alone: bool, meet: bool
) -> int | None:
    """PostgreSQL, a posting of at most ENTRY_CHUNK entries: its id, written with its
    pending audit event by _INSERT_CHECKED (`meet`: only if no schedule may meet it,
    schedule_meeting.MAY_MEET checked in the same statement); None when that wrote
    nothing (a schedule may meet it, or a refusal, which posting again through _post
    names), and on SQLite (no round trip to save there)."""
    if not dialect.is_postgresql(connection) or len(parsed) > ENTRY_CHUNK:
        return None
    stored = _insert_checked_postgresql(
        connection, day, description, created_by, parsed, action, links, alone, meet
    )
    if not stored:
        return None
    audit.pending(connection, stored[0][4])  # it wrote the event as pending
    return stored[0][0]


def _post(
    day,
    description,
    parsed,
    created_by,
    action,
    links: dict,
    kept: list[reconciliation.Kept],
    alone: bool = True,
) -> int:
    """Store a parsed, balanced posting and its audit event; its id. `links`: the
    event's replaces, adjusts and schedule (None when absent); `kept`: the entries of
    `parsed` that keep a corrected original's reconciled or cleared marks; `alone`
    False: something written after it belongs with it (it meets a schedule), so it is
    never the unit's sole write."""
    connection = db.session.connection()
    if not kept:
        tx_id = _in_one_statement(
            connection, day, description, created_by, parsed, action, links, alone, False
        )
        if tx_id is not None:
            return tx_id
        # Nothing was written (or SQLite): the day is locked or an account is missing
        # or archived (named below, by postable.refuse_at_post).
    header = {
        "occurred_on": day,
        "description": description,
        "created_by": created_by,
        "created_at": clock.now(),
    }
    tx_id = None
    accounts = sorted({account_id for account_id, _ in parsed})
    if dialect.is_sqlite(connection) and len(accounts) <= ENTRY_CHUNK:
        # The lock date, the account check and the header in one statement (as on
        # PostgreSQL); nothing is written when one of them refuses (named below).
        tx_id = _INSERT_CHECKED_SQLITE.execute(
            connection,
            {**header, "account_set": _json_ints(accounts), "account_count": len(accounts)},
        ).scalar()
    if tx_id is None:
        found = postable.accounts_found(accounts)
        postable.refuse_at_post(day, accounts, lock.locked_for_posting(), found)
        # Core statements on the session's connection: the same transaction, without
        # the ORM's per-statement bookkeeping (nothing here is an ORM object).
        tx_id = connection.execute(_INSERT_HEADER, header).scalar_one()
    rows = [
        {"transaction_id": tx_id, "account_id": account_id, "amount_cents": amount}
        for account_id, amount in parsed
    ]
    # One INSERT statement for the entries, run by the driver's executemany on
    # SQLite (one compiled statement, cached) and as multi-row VALUES on PostgreSQL
    # (one round trip and one firing of the statement-level trigger that maintains
    # the derived balance tables); huge postings go in chunks that stay under both
    # stores' bound-parameter limits.
    stored = []
    for i in range(0, len(rows), ENTRY_CHUNK):
        stored.extend(_insert_entries(connection, rows[i : i + ENTRY_CHUNK]))
    # Entry ids follow the posting's order (see _insert_entries).
    ordered = sorted(stored) if kept else stored
    kept_ids = [ordered[mark.position][0] for mark in kept]
    reconciliation.keep_marks(kept_ids, kept, links["replaces"])
    event = audit.transaction_object(tx_id, day, description, stored, **links)
    for key, reconciled in (("kept_reconciled", True), ("kept_cleared", False)):
        marked = [i for i, m in zip(kept_ids, kept, strict=True) if m.reconciled is reconciled]
        if marked:
            event[key] = marked
    if kept:  # the bank references the kept entries took over, which verify replays
        event["kept_bank_refs"] = [
            {"entry_id": i, "bank_ref": m.bank_ref}
            for i, m in zip(kept_ids, kept, strict=True)
            if m.bank_ref is not None
        ]
    audit.record(action, event)
    return tx_id


_ENTRY_ROWS = (
    select(Entry.id, Entry.account_id, Entry.amount_cents)
    .where(Entry.transaction_id == bindparam("tx_id"))
    .order_by(Entry.id)
)


def _entry_rows(connection, tx_id: int) -> list[tuple]:
    """(entry_id, account_id, amount_cents) of one transaction, as stored, by entry id."""
    return _tuples(connection, _ENTRY_ROWS, {"tx_id": tx_id})


_INSERT_HEADER = insert(Transaction).returning(Transaction.id)
# SQLite: the header only if the day is after the lock date and every account exists
# and is open, in one statement (no row, so no id, otherwise). The writer lock admits
# one writer at a time (app/store/sqlite.py), so nothing changes the lock date or an
# account between this check and the commit. Account ids beyond 64 bits never reach
# here (validate.entries). The account ids come as one JSON array (json_each), not an
# expanding IN: the statement's text is then the same for every posting, so neither
# SQLAlchemy nor sqlite3 builds it again per request (the expanding IN was rendered
# anew for each).
# Compiled once per process and run as driver SQL (store.FixedStatement): the statement
# is the same for every posting.
_INSERT_CHECKED_SQLITE = store.FixedStatement(
    text(
        """
    INSERT INTO transactions (occurred_on, description, created_by, created_at)
    SELECT :occurred_on, :description, :created_by, :created_at
    WHERE (SELECT count(*) FROM accounts
           WHERE id IN (SELECT value FROM json_each(:account_set)) AND NOT archived)
          = :account_count
      AND NOT EXISTS (SELECT 1 FROM settings WHERE id = 1 AND locked_through >= :occurred_on)
    RETURNING id
    """
    ).bindparams(
        bindparam("occurred_on", type_=Date()),
        bindparam("created_at", type_=UTCDateTime()),
    )
)
# RETURNING gives the new entry ids for the audit event without another statement.
_INSERT_ENTRIES = insert(Entry).returning(Entry.id, Entry.account_id, Entry.amount_cents)
# SQLite: every entry of the posting in one fixed statement, the (account_id,
# amount_cents) pairs as one JSON array of arrays read by json_each in posting order
# (so entry ids follow the order the entries were sent, as on PostgreSQL); SQLite's
# JSON keeps 64-bit integers exact. One text for every posting: no per-request
# rendering of a multi-row VALUES (SQLAlchemy's "insertmanyvalues" did that).
_INSERT_ENTRIES_SQLITE = store.FixedStatement(
    text(
        """
    INSERT INTO entries (transaction_id, account_id, amount_cents)
    SELECT :tx_id, json_extract(value, '$[0]'), json_extract(value, '$[1]')
    FROM json_each(:pairs) ORDER BY key
    RETURNING id, account_id, amount_cents
    """
    )
)


def _json_ints(values) -> str:
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def _insert_entries(connection, rows: list[dict]) -> list[tuple]:
    """Insert entries in one statement; their (id, account_id, amount_cents)."""
    if dialect.is_sqlite(connection):
        pairs = ",".join(f"[{int(r['account_id'])},{int(r['amount_cents'])}]" for r in rows)
        params = {"tx_id": rows[0]["transaction_id"], "pairs": "[" + pairs + "]"}
        return [tuple(r) for r in _INSERT_ENTRIES_SQLITE.execute(connection, params)]
    return [tuple(r) for r in connection.execute(_INSERT_ENTRIES.values(rows))]


# PostgreSQL: the lock date, the account check, the header and its entries in ONE
# statement (one round trip instead of four). The lock row is read FOR KEY SHARE, as
# lock.refuse_if_locked reads it (so a PUT /books/lock waits for this posting, and this
# posting, waiting for a PUT, reads the new date); the header is inserted only if the
# day is after the lock date and every account exists and is not archived (the
# accounts are read FOR SHARE: an archive or rename waits for this posting, and this
# posting, waiting for an archive, sees the account archived);
# the entries' INSERT reads the header's id from the tx CTE, in posting order
# (so entry ids follow the order the entries were sent). Data-modifying CTEs run
# exactly once whatever the outer SELECT reads; every trigger (balance check at
# commit, derived balances per statement) fires as for separate statements. The
# same statement writes the posting's audit event: `obj` builds the event's object
# (canonical JSON) around the new ids, and audit.PG_PENDING_FROM_OBJ writes it as
# pending (nothing when no header was inserted), sealed into the chain after the
# commit (services/ledger/audit/writing.py). With a posting's schedule parameters
# (schedule_meeting.may_meet_params) the header is inserted only when no schedule may
# meet the posting: the usual posting then needs no read of the schedules of its own
# (record_transaction); with MEET_NOTHING the condition holds.
_INSERT_CHECKED = text(
    """
    WITH books AS (
        SELECT locked_through FROM settings WHERE id = 1 FOR KEY SHARE
    ), tx AS (
        INSERT INTO transactions (occurred_on, description, created_by, created_at)
        SELECT :occurred_on, :description, :created_by, :created_at
        WHERE (SELECT count(*) FROM (
                   SELECT 1 FROM accounts
                   WHERE id = ANY (CAST(:account_set AS bigint[])) AND NOT archived
                   FOR SHARE) AS usable) = :account_count
          AND NOT EXISTS (SELECT 1 FROM books WHERE locked_through >= :occurred_on)
          AND NOT EXISTS (SELECT 1 FROM schedules WHERE """
    + schedule_meeting.MAY_MEET["postgresql"]
    + """)
        RETURNING id
    ), posted AS (
        INSERT INTO entries (transaction_id, account_id, amount_cents)
        SELECT tx.id, e.account_id, e.amount_cents
        FROM tx, unnest(CAST(:account_ids AS bigint[]), CAST(:amounts AS bigint[]))
             WITH ORDINALITY AS e (account_id, amount_cents, n)
        ORDER BY e.n
        RETURNING transaction_id, id, account_id, amount_cents
    ), obj AS (
        SELECT CAST(:obj_before AS text)
               || (SELECT string_agg(format('{"account_id":%s,"amount_cents":%s,"id":%s}',
                                            account_id, amount_cents, id), ',' ORDER BY id)
                   FROM posted)
               || '],"id":' || CAST(tx.id AS text) || CAST(:obj_after AS text) AS text
        FROM tx
    ),"""
    + audit.PG_PENDING_FROM_OBJ
    + """
    SELECT transaction_id, id, account_id, amount_cents, (SELECT event.id FROM event)
    FROM posted ORDER BY posted.id
    """
).bindparams(
    bindparam("occurred_on", type_=Date()),
    bindparam("created_at", type_=UTCDateTime()),
    bindparam("ev_at", type_=UTCDateTime()),
)


def _insert_checked_postgresql(
    connection,
    day,
    description,
    created_by,
    parsed,
    action: str,
    links: dict,
    alone: bool,
    meet: bool = False,
) -> list:
    """Insert the posting and its pending audit event if all its accounts exist and
    are open and the day is not locked (and, if `meet`, no schedule may meet it): its
    (transaction_id, entry_id, account_id, amount_cents, pending event id) rows by
    entry id, or [] (nothing written)."""
    accounts = {account_id for account_id, _ in parsed}
    obj_before, obj_after = audit.transaction_object_parts(day, description, **links)
    meeting = (
        meet and schedule_meeting.may_meet_params(parsed, dialect.POSTGRESQL)
    ) or schedule_meeting.MEET_NOTHING
    stored: list = []
    # The caller's sole write (store.sole_write: POST /transactions without a key or a
    # correction) runs as a transaction of its own when nothing of the unit has begun
    # one: the statement is the whole posting, so its BEGIN and COMMIT are saved. One
    # that wrote nothing leaves the unit free to be re-run.
    with store.on_its_own(
        connection, when=alone and store.is_sole_write(), writes=lambda: bool(stored)
    ):
        stored = _tuples(
            connection,
            _INSERT_CHECKED,
            {
                **meeting,
                "occurred_on": day,
                "description": description,
                "created_by": created_by,
                "created_at": clock.now(),
                "account_set": dialect.int_array(accounts),
                "account_count": len(accounts),
                "account_ids": dialect.int_array(a for a, _ in parsed),
                "amounts": dialect.int_array(c for _, c in parsed),
                "obj_before": obj_before,
                "obj_after": obj_after,
                **audit.sql_event_params(action),
            },
        )
    return stored


def delete_transaction(tx_id: int) -> None:
    """Delete a transaction and (by cascade) its entries; its event keeps all of it."""
    _delete(_deletable(tx_id, NotFoundError("no such transaction")))


def _deletable(tx_id: int, unknown: NotFoundError, reconciled_ok: bool = False):
    """The header (id, occurred_on, description) of a transaction that may be deleted,
    locked (PostgreSQL) so the deletion's event shows what it removed and a concurrent
    deletion or correction of it waits and then finds it gone; `unknown` (404) when
    there is none, 409 when it is dated on or before the lock date or has a
    reconciled entry (unless `reconciled_ok`: a correction, which checks its own rule,
    reconciliation.kept_in_correction)."""
    if not validate.INT64_MIN <= tx_id <= validate.INT64_MAX:
        raise unknown
    header = (
        db.session.connection()
        .execute(
            select(Transaction.id, Transaction.occurred_on, Transaction.description)
            .where(Transaction.id == tx_id)
            .with_for_update()
        )
        .first()
    )
    if header is None:
        raise unknown
    lock.refuse_if_locked(header.occurred_on)
    if not reconciled_ok:
        reconciliation.refuse_if_reconciled(tx_id)
    return header


def replace_original(original, replacement_id: int) -> None:
    """The one place where a correction replaces its original (already checked by
    _deletable), after the replacement `replacement_id` is posted in this same unit
    of work: the original is deleted, with its own transaction.deleted event.
    Anything the original carries that must survive the correction moves to the
    replacement here, before the deletion: its documents (one document.moved event
    each), so deleting it detaches nothing; and the bank statement lines that posted
    or matched it, which then name the replacement (docs/statements.md, "Acting on the lines"):
    the statement still shows where its line went, and the payee's next suggestion
    learns the corrected account."""
    documents.move_documents(original.id, replacement_id)
    db.session.execute(
        update(StatementLine)
        .where(StatementLine.transaction_id == original.id)
        .values(transaction_id=replacement_id)
    )
    _delete(original)


def _delete(header) -> None:
    """Delete a checked transaction (see _deletable) and write its deletion event."""
    connection = db.session.connection()
    gone = audit.transaction_object(
        header.id, header.occurred_on, header.description, _entry_rows(connection, header.id)
    )
    # What it met or posted is open again; before the deletion, whose foreign key
    # would clear the rows' transaction_id.
    schedule_meeting.release(header.id)
    result = typing.cast(
        CursorResult, db.session.execute(delete(Transaction).where(Transaction.id == header.id))
    )
    if result.rowcount != 1:
        raise NotFoundError("no such transaction")
    audit.record("transaction.deleted", gone)


def _tuples(connection, statement, params: dict | None = None) -> list[tuple]:
    """Run a Core SELECT of plain columns on the session's connection; the driver's tuples.

    The statement goes through SQLAlchemy as usual (compiled-statement cache, events,
    the session's transaction); only the fetch skips the per-row Result processing.
    For columns whose raw driver value is the Python value (integers, text, and on
    PostgreSQL dates; on SQLite a Date arrives as its stored ISO text: see _iso_day).
    """
    result = connection.execute(statement, params)
    try:
        return result.cursor.fetchall()
    finally:
        result.close()
