"""Writing the trail: record() one event per change, in the change's unit of work, and
seal() the events PostgreSQL keeps pending into the chain (see "writing" below)."""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import bindparam, delete, insert, select, text
from sqlalchemy.exc import ProgrammingError

from .... import store
from ....extensions import db
from ....models import AuditEvent, AuditPending
from ....models.types import UTCDateTime
from ... import clock
from .actor import current_actor
from .hashing import GENESIS, canonical, chain, event_text
from .objects import ACTIONS

log = logging.getLogger(__name__)


# --- writing ----------------------------------------------------------------------
#
# The event's canonical JSON is `{..."object":<object>,"seq":<seq>,...}`: the object
# and seq are the parts that come from the database (new ids; the chain's head), so
# the text is written around them (event_parts, sql_event_params).
#
# SQLite: the writer lock already admits one writer at a time, so the event goes
# straight into the chain, in the change's transaction: ONE statement inserts it from
# the head row with seq = head + 1, hashed by sha256_hex() (chain() registered on
# every connection by app.store.sqlite), and a trigger (migration 0007) moves the head.
#
# PostgreSQL: appending in the change's transaction would lock the head row until
# that transaction's COMMIT (its WAL flush included), so concurrent changes would
# commit one at a time. Instead the change writes its event into audit_pending (ONE
# statement; for a posting, a CTE of the posting's own statement), and events are
# sealed into the chain in batches by audit_seal() (migration 0011; since 0016 it
# moves each batch with one INSERT and one DELETE): it locks the head, moves every
# committed pending event into audit_events in the order written, with the next seq
# and its hash, and moves the head; its commit skips the WAL flush
# (a lost seal is simply done again from the pending rows). Who seals:
#   - the change whose pending id is a multiple of SEAL_EVERY, right after its COMMIT
#     and in the same round trip ("COMMIT; SELECT audit_seal()", store.after_commit);
#   - every reader of the trail, first (GET /audit, /audit/head, the History page,
#     verify: seal()), so what anyone is shown or verifies includes every committed
#     change, and a head an auditor notes covers all of them.
# So at most about SEAL_EVERY events wait between seals (more only if a crash lost a
# seal or rollbacks skipped ids), always in the database; a change that depends on
# another (started after it committed) always gets a later pending id, so a later seq.

_HEAD = "SELECT seq, hash FROM audit_head WHERE id = 1"
# The head row is made from the newest event when missing (a fresh schema, a restore,
# a test reset).
_NEWEST = "(SELECT {col} FROM audit_events ORDER BY seq DESC LIMIT 1)"
_MAKE_HEAD_VALUES = (
    f"SELECT 1, COALESCE({_NEWEST.format(col='seq')}, 0), "
    f"COALESCE({_NEWEST.format(col='hash')}, '{GENESIS}')"
)
_MAKE_HEAD_ANY = {
    "postgresql": text(
        f"INSERT INTO audit_head (id, seq, hash) {_MAKE_HEAD_VALUES} ON CONFLICT (id) DO NOTHING"
    ),
    "sqlite": text(f"INSERT OR IGNORE INTO audit_head (id, seq, hash) {_MAKE_HEAD_VALUES}"),
}
_MAKE_HEAD = _MAKE_HEAD_ANY["sqlite"]
_EVENT_COLUMNS = "seq, at, action, user_email, via, client_id, client_name, object, hash"
# Compiled once per process and run as driver SQL (store.FixedStatement).
_APPEND_SQLITE = store.FixedStatement(
    text(
        f"""
    INSERT INTO audit_events ({_EVENT_COLUMNS})
    SELECT seq + 1, :at, :action, :user_email, :via, :client_id, :client_name, :object,
           sha256_hex(hash || :before_seq || CAST(seq + 1 AS TEXT) || :after_seq)
    FROM audit_head WHERE id = 1
    """
    ).bindparams(bindparam("at", type_=UTCDateTime()))
)
_PENDING_COLUMNS = (
    "at, action, user_email, via, client_id, client_name, object, "
    "text_before_object, text_after_seq"
)
_PEND_POSTGRESQL = text(
    f"""
    INSERT INTO audit_pending ({_PENDING_COLUMNS})
    VALUES (:ev_at, :ev_action, :ev_user_email, :ev_via, :ev_client_id, :ev_client_name,
            :object, :ev_before_object, :ev_after_seq)
    RETURNING id
    """
).bindparams(bindparam("ev_at", type_=UTCDateTime()))
# The change whose pending event's id is a multiple of SEAL_EVERY seals, after its
# commit, every event then waiting (one seal for about SEAL_EVERY changes: a seal per
# change cost more than the rest of the event together); a reader of the trail seals
# whatever is waiting first (seal()).
SEAL_EVERY = 16
_SEAL_SQL = "SELECT audit_seal()"
_SEAL_POSTGRESQL = text(_SEAL_SQL)


def event_parts(values: dict) -> tuple[str, str]:
    """The event's canonical JSON before and after its seq digits."""
    whole = event_text(
        0,
        clock.iso(values["at"]) or "",
        values["action"],
        values["user_email"],
        values["via"],
        values["client_id"],
        values["client_name"],
        values["object"],
    )
    before, _, after = whole.partition(',"seq":0,')
    return before + ',"seq":', "," + after


# The PostgreSQL posting fast path (transactions._INSERT_CHECKED) writes its pending
# event in the same statement as the posting, from a CTE `obj (text)` holding the
# object's canonical JSON built by the database around the new ids. This CTE follows
# it; the parameters come from sql_event_params(), and the caller then calls
# pending(connection, id) with the pending event's id (`event.id`).
PG_PENDING_FROM_OBJ = f"""
    event AS (
        INSERT INTO audit_pending ({_PENDING_COLUMNS})
        SELECT :ev_at, :ev_action, :ev_user_email, :ev_via, :ev_client_id,
               :ev_client_name, obj.text, :ev_before_object, :ev_after_seq
        FROM obj
        RETURNING id
    )
"""


def sql_event_params(action: str) -> dict:
    """The event's columns and its canonical JSON before the object and after the seq
    (the object and seq come from the database): parameters of PG_PENDING_FROM_OBJ."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    actor = current_actor()
    at = clock.now().replace(microsecond=0)
    before_object, after_seq = pending_texts(
        at, action, actor.user_email, actor.via, actor.client_id, actor.client_name
    )
    return {
        "ev_at": at,
        "ev_action": action,
        "ev_user_email": actor.user_email,
        "ev_via": actor.via,
        "ev_client_id": actor.client_id,
        "ev_client_name": actor.client_name,
        "ev_before_object": before_object,
        "ev_after_seq": after_seq,
    }


def pending_texts(
    at: datetime,
    action: str,
    user_email: str | None,
    via: str,
    client_id: str | None,
    client_name: str | None,
) -> tuple[str, str]:
    """A waiting event's text_before_object and text_after_seq: its canonical JSON
    around the object and the seq, from its other columns. What a change writes, and
    what verify expects of every waiting event (the seal hashes these texts, History
    shows the columns: they must say the same)."""
    whole = event_text(
        0, clock.iso(at) or "", action, user_email, via, client_id, client_name, "\x00"
    )
    before_object, _, rest = whole.partition("\x00")
    return before_object, rest.removeprefix(',"seq":0')


def pending(connection, pending_id: int) -> None:
    """This unit of work wrote the pending event pending_id on connection (PostgreSQL):
    with every SEAL_EVERY-th, seal what is waiting right after the commit."""
    if pending_id % SEAL_EVERY == 0:
        store.after_commit(connection, _SEAL_SQL)


def _sqlite_event(action: str, obj: dict, actor) -> dict:
    """SQLite's parameters of _APPEND_SQLITE for one event by `actor`, now."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    values = {
        "at": clock.now().replace(microsecond=0),
        "action": action,
        "user_email": actor.user_email,
        "via": actor.via,
        "client_id": actor.client_id,
        "client_name": actor.client_name,
        "object": canonical(obj),
    }
    before, after = event_parts(values)
    return {**values, "before_seq": before, "after_seq": after}


def record(action: str, obj: dict) -> None:
    """Write one event for this change, in the caller's transaction (see above)."""
    connection = db.session.connection()
    if store.dialect.is_postgresql(connection):
        params = {**sql_event_params(action), "object": canonical(obj)}
        pending(connection, connection.execute(_PEND_POSTGRESQL, params).scalar_one())
        return
    params = _sqlite_event(action, obj, current_actor())
    if _APPEND_SQLITE.execute(connection, params).rowcount < 1:
        connection.execute(_MAKE_HEAD)  # no head row yet: make it, once
        if _APPEND_SQLITE.execute(connection, params).rowcount != 1:
            raise RuntimeError("the audit trail's head row is missing")


# record_many on PostgreSQL: the same row as _PEND_POSTGRESQL, run as one executemany.
_PEND_MANY_POSTGRESQL = text(
    f"""
    INSERT INTO audit_pending ({_PENDING_COLUMNS})
    VALUES (:ev_at, :ev_action, :ev_user_email, :ev_via, :ev_client_id, :ev_client_name,
            :object, :ev_before_object, :ev_after_seq)
    """
).bindparams(bindparam("ev_at", type_=UTCDateTime()))


def record_many(events: list[tuple[str, dict]]) -> None:
    """Write several events of this change, in the order given, in the caller's
    transaction: each as record() writes it, all in one executemany (a request acting
    on thousands of bank lines: services/banking/trail.py). On PostgreSQL the batch is
    sealed right after the commit."""
    if not events:
        return
    connection = db.session.connection()
    if store.dialect.is_postgresql(connection):
        rows = [{**sql_event_params(action), "object": canonical(obj)} for action, obj in events]
        connection.execute(_PEND_MANY_POSTGRESQL, rows)
        store.after_commit(connection, _SEAL_SQL)
        return
    actor = current_actor()
    params = [_sqlite_event(action, obj, actor) for action, obj in events]
    connection.execute(_MAKE_HEAD)  # a fresh schema's head row, once (else nothing)
    # One row at a time in seq order: each reads the head the previous one moved.
    connection.execute(_APPEND_SQLITE.statement, params)


def seal() -> int:
    """PostgreSQL: move every committed pending event into the chain (audit_seal(), in
    a transaction of its own on another pooled connection); how many it moved. For
    readers of the trail: writers' events are sealed after their commit anyway.

    SQLite: nothing is pending (0): its events go straight into the chain, and a
    restore seals its own (seal_here).
    """
    engine = db.engine
    if not store.dialect.is_postgresql(engine):
        return 0
    with engine.connect() as connection:
        autocommit = connection.execution_options(isolation_level="AUTOCOMMIT")
        try:
            return int(autocommit.execute(_SEAL_POSTGRESQL).scalar_one())
        except ProgrammingError as exc:
            if getattr(exc.orig, "sqlstate", None) == "42883":  # no audit_seal(): a
                return 0  # schema before migration 0011 (or none) has nothing pending
            raise


def seal_here() -> int:
    """Seal pending events inside the caller's unit of work, in Python, on either
    store: a restore (a backup taken while an event was pending carries it). The same
    rule as audit_seal(), through chain()."""
    connection = db.session.connection()
    rows = connection.execute(select(AuditPending).order_by(AuditPending.id)).all()
    if not rows:
        return 0
    which = store.dialect.name(connection)
    connection.execute(_MAKE_HEAD_ANY[which])
    seq, last = connection.execute(text(_HEAD + _FOR_UPDATE[which])).one()
    events = []
    for row in rows:
        seq += 1
        event = row.text_before_object + row.object + ',"seq":' + str(seq) + row.text_after_seq
        last = chain(last, event)
        events.append(
            {
                "seq": seq,
                "at": row.at,
                "action": row.action,
                "user_email": row.user_email,
                "via": row.via,
                "client_id": row.client_id,
                "client_name": row.client_name,
                "object": row.object,
                "hash": last,
            }
        )
    connection.execute(insert(AuditEvent), events)
    connection.execute(
        text("UPDATE audit_head SET seq = :seq, hash = :hash WHERE id = 1"),
        {"seq": seq, "hash": last},
    )
    connection.execute(delete(AuditPending).where(AuditPending.id <= rows[-1].id))
    return len(rows)


_FOR_UPDATE = {"postgresql": " FOR UPDATE", "sqlite": ""}
