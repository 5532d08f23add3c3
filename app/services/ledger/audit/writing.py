"""The audit trail: one hash-chained event per change to the books (issue 19).

Every service function that changes the books calls record() once per change, inside
the same unit of work (database transaction) as the change itself:

    audit.record(action, obj)

action and obj (the "changed object"; JSON-able: ints, strings, bools, None, lists,
dicts; dates as "YYYY-MM-DD" strings):

  transaction.posted    {"transaction": {id, occurred_on, description,
                          entries: [{id, account_id, amount_cents}, ...]}}
  transaction.imported  same shape as transaction.posted (one event per imported txn)
  transaction.deleted   same shape: the whole transaction as it was, entries included
  account.created       {"account": {id, name, kind, archived}}
  account.renamed       {"account": {id, name, kind, archived}, "previous_name": str}
  account.archived      {"account": {id, name, kind, archived: true}}
  account.unarchived    {"account": {id, name, kind, archived: false}}
  entries.cleared       {"account_id": int, "entry_ids": [int, ...], "cleared": bool}
  entries.reconciled    {"account_id": int, "statement_date": str,
                          "closing_balance_cents": int, "entry_ids": [int, ...]}
  books.locked          {"locked_through": str | None, "previous": str | None}
  settings.changed      {"settings": {"book_style": str}}
  budget.created        {"budget": {id, name, starts_on, approved_at, approved_by_email,
  budget.changed                    lines: [{account_id, months: [12 ints]}, ...]}}
  budget.approved       (after the change; budget.deleted: as it was)
  budget.deleted
  document.uploaded     {"document": {id, transaction_id, filename, content_type, size,
                          sha256}}  (services/ledger/documents.py)
  document.moved        the same, transaction_id the new one, plus
                          "previous_transaction_id": int | None
  document.deleted      the same: the document as it was

Who, how (via) and which OAuth client are NOT passed: record() reads them from the
context (Actor, below), set once per request by the HTTP layer (routes/support.py:
`web` for a cookie session, `api` for a bearer token), per tool call by the MCP layer
(`mcp`), and overridden by the importer (`import`). Anything that sets nothing (the
CLI, a migration) records `cli` with no user and no client.

The event (docs/ledger.md "What an event says"): {seq, at, action, user_email, via, client_id,
client_name, object} and hash = sha256_hex(previous hash + canonical JSON of the
event without hash), 64 zeros before the first. Stored columns hold exactly what was
hashed (object as canonical JSON text, at in whole seconds), so a served event
re-hashes to its stored hash. seq has no gaps: whoever appends locks the one
audit_head row. On SQLite the change appends its event itself (the writer lock admits
one writer at a time); on PostgreSQL the change writes it as pending and it is sealed
into the chain right after the commit, so concurrent changes do not queue on the
head (see "writing" below). Either way an event's place follows the order of the
changes: one that depends on another starts after it committed and comes later.
Cost per event: one statement in the caller's transaction, and on PostgreSQL one
seal after the commit.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import UTC, datetime, time, timedelta

import orjson
from sqlalchemy import bindparam, delete, insert, select, text
from sqlalchemy.exc import ProgrammingError

from ... import store
from ...extensions import db
from ...models import AuditEvent, AuditPending
from ...models.types import UTCDateTime
from .. import clock
from ..errors import BadRequest
from . import validate

ACTIONS = (
    "transaction.posted",
    "transaction.imported",
    "transaction.deleted",
    "account.created",
    "account.renamed",
    "account.archived",
    "account.unarchived",
    "entries.cleared",
    "entries.reconciled",
    "books.locked",
    "settings.changed",
    "budget.created",
    "budget.changed",
    "budget.approved",
    "budget.deleted",
    "document.uploaded",
    "document.moved",
    "document.deleted",
)
VIAS = ("web", "api", "mcp", "import", "cli")
GENESIS = "0" * 64  # the "previous hash" of seq 1
PAGE_MAX = 500
PAGE_DEFAULT = 100

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Actor:
    """Who changes the books, and how: what every event records besides the change."""

    user_email: str | None = None
    via: str = "cli"
    client_id: str | None = None
    client_name: str | None = None


_NOBODY = Actor()  # frozen: the CLI's (and any unset context's) actor
_actor: ContextVar[Actor] = ContextVar("audit_actor", default=_NOBODY)  # noqa: B039


def set_actor(actor: Actor) -> None:
    """Set the actor for the rest of this context (an HTTP request: routes/support.py)."""
    _actor.set(actor)


def actor_for(caller, via: str | None = None) -> Actor:
    """The actor for a resolved caller (identity.credentials.Principal): `web` for a
    cookie session (no client), `api` for a bearer token with its OAuth client (the
    token's client; svc-cli for a minted token); `via` overrides (the MCP layer: mcp)."""
    if caller.via == "session":
        return Actor(user_email=caller.email, via=via or "web")
    return Actor(
        user_email=caller.email,
        via=via or "api",
        client_id=caller.client_id,
        client_name=caller.client_name,
    )


def current_actor() -> Actor:
    return _actor.get()


@contextmanager
def acting(**changes) -> Iterator[Actor]:
    """Within the block, record events with these fields changed (e.g. via="import")."""
    token = _actor.set(replace(_actor.get(), **changes))
    try:
        yield _actor.get()
    finally:
        _actor.reset(token)


# --- the hash rule ------------------------------------------------------------------


def canonical(value) -> str:
    """The canonical JSON (docs/ledger.md): keys sorted, no spaces, non-ASCII as itself."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _string(value: str | None) -> str:
    return json.dumps(value, ensure_ascii=False)


def event_text(
    seq: int,
    at: str,
    action: str,
    user_email: str | None,
    via: str,
    client_id: str | None,
    client_name: str | None,
    object_text: str,
) -> str:
    """The canonical JSON of an event without its hash, from its stored columns.

    Written out in sorted key order around the stored object text (already
    canonical), which is exactly canonical() of the whole event.
    """
    return (
        f'{{"action":{_string(action)},"at":{_string(at)},"client_id":{_string(client_id)},'
        f'"client_name":{_string(client_name)},"object":{object_text},"seq":{int(seq)},'
        f'"user_email":{_string(user_email)},"via":{_string(via)}}}'
    )


def chain(previous_hash: str, event: str) -> str:
    """hash = sha256 hex of the previous hash's 64 hex characters + the event's JSON."""
    return hashlib.sha256((previous_hash + event).encode("utf-8")).hexdigest()


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
# sealed into the chain in batches by audit_seal() (migration 0011): it locks the
# head, moves every committed pending event into audit_events in the order written,
# with the next seq and its hash, and moves the head; its commit skips the WAL flush
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
_APPEND_SQLITE = text(
    f"""
    INSERT INTO audit_events ({_EVENT_COLUMNS})
    SELECT seq + 1, :at, :action, :user_email, :via, :client_id, :client_name, :object,
           sha256_hex(hash || :before_seq || CAST(seq + 1 AS TEXT) || :after_seq)
    FROM audit_head WHERE id = 1
    """
).bindparams(bindparam("at", type_=UTCDateTime()))
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
    actor = _actor.get()
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


def transaction_object_parts(
    occurred_on, description: str, replaces: int | None = None
) -> tuple[str, str]:
    """transaction_object's canonical JSON around `<entries>],"id":<id>`: what the
    database fills in for the PostgreSQL fast path."""
    # Keys sorted: "replaces" comes before "transaction".
    start = "{" if replaces is None else '{"replaces":' + str(int(replaces)) + ","
    return (
        start + '"transaction":{"description":' + _string(description) + ',"entries":[',
        ',"occurred_on":' + _string(_iso_day(occurred_on)) + "}}",
    )


def pending(connection, pending_id: int) -> None:
    """This unit of work wrote the pending event pending_id on connection (PostgreSQL):
    with every SEAL_EVERY-th, seal what is waiting right after the commit."""
    if pending_id % SEAL_EVERY == 0:
        store.after_commit(connection, _SEAL_SQL)


def record(action: str, obj: dict) -> None:
    """Write one event for this change, in the caller's transaction (see above)."""
    connection = db.session.connection()
    if connection.dialect.name == "postgresql":
        params = {**sql_event_params(action), "object": canonical(obj)}
        pending(connection, connection.execute(_PEND_POSTGRESQL, params).scalar_one())
        return
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    actor = _actor.get()
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
    params = {**values, "before_seq": before, "after_seq": after}
    if connection.execute(_APPEND_SQLITE, params).rowcount < 1:
        connection.execute(_MAKE_HEAD)  # no head row yet: make it, once
        if connection.execute(_APPEND_SQLITE, params).rowcount != 1:
            raise RuntimeError("the audit trail's head row is missing")


def seal() -> int:
    """PostgreSQL: move every committed pending event into the chain (audit_seal(), in
    a transaction of its own on another pooled connection); how many it moved. For
    readers of the trail: writers' events are sealed after their commit anyway.

    SQLite: nothing is pending (0): its events go straight into the chain, and a
    restore seals its own (seal_here).
    """
    engine = db.engine
    if engine.dialect.name != "postgresql":
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
    dialect = "postgresql" if connection.dialect.name == "postgresql" else "sqlite"
    connection.execute(_MAKE_HEAD_ANY[dialect])
    seq, last = connection.execute(text(_HEAD + _FOR_UPDATE[dialect])).one()
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


# --- the objects events carry (one shape per kind, shared by every caller) --------


def transaction_object(
    tx_id: int, occurred_on, description: str, entries, replaces: int | None = None
) -> dict:
    """{"transaction": {id, occurred_on, description, entries: [{id, account_id,
    amount_cents}]}} from (entry_id, account_id, amount_cents) rows, ordered by entry id;
    a correction's posting adds "replaces": the id of the transaction it corrects."""
    obj: dict = {} if replaces is None else {"replaces": int(replaces)}
    return obj | {
        "transaction": {
            "id": int(tx_id),
            "occurred_on": _iso_day(occurred_on),
            "description": description,
            "entries": [
                {"id": int(e), "account_id": int(a), "amount_cents": int(c)}
                for e, a, c in sorted(entries)
            ],
        }
    }


def _iso_day(value) -> str:
    if isinstance(value, str):
        return value[:10]
    return value.isoformat()


# --- reading: GET /audit and GET /audit/head -------------------------------------

_CURSOR_KEY = b"ledger-service audit cursor v1"
_DIGITS = re.compile(r"[0-9]{1,19}\Z")


def _cursor_tag(seq: int, filters: str) -> str:
    # Recognition, not secrecy: every caller may read the whole trail anyway. The tag
    # ties a cursor to this listing and its filters, so a cursor of another listing
    # (or another filter) is refused rather than misread.
    return hmac.new(_CURSOR_KEY, f"{seq}|{filters}".encode(), hashlib.sha256).hexdigest()[:20]


def _encode_cursor(seq: int, filters: str) -> str:
    raw = f"a1.{seq}.{_cursor_tag(seq, filters)}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str, filters: str) -> int:
    refusal = BadRequest("'cursor' is not one this listing gave out with these filters")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        version, seq_text, tag = raw.split(".")
        seq = int(seq_text)
    except (ValueError, UnicodeDecodeError):
        raise refusal from None
    if version != "a1" or not _DIGITS.match(seq_text) or not 1 <= seq <= validate.INT64_MAX:
        raise refusal
    if not hmac.compare_digest(tag, _cursor_tag(seq, filters)):
        raise refusal
    return seq


def parse_limit(value) -> int:
    """The page size: PAGE_DEFAULT when absent; present but empty (`?limit=`) is not an
    integer (400 naming it), as for GET /transactions (validate.query_integer)."""
    if value is None:
        return PAGE_DEFAULT
    if not (isinstance(value, str) and _DIGITS.match(value) and 1 <= int(value) <= PAGE_MAX):
        raise BadRequest(f"'limit' must be an integer from 1 to {PAGE_MAX}")
    return int(value)


def parse_action(value) -> str | None:
    """None (every action) when absent; else one of ACTIONS (the names are in
    docs/openapi.yaml; the message does not list them, some read like table names)."""
    if value is None:
        return None
    if value not in ACTIONS:
        raise BadRequest("'action' is not the name of a kind of change (e.g. account.created)")
    return value


# An event's stored columns, as GET /audit serves them and verify re-walks them.
EVENT_COLUMNS = (
    AuditEvent.seq,
    AuditEvent.at,
    AuditEvent.action,
    AuditEvent.user_email,
    AuditEvent.via,
    AuditEvent.client_id,
    AuditEvent.client_name,
    AuditEvent.object,
    AuditEvent.hash,
)


def page(*, limit=None, cursor=None, from_=None, to=None, action=None) -> dict:
    """GET /audit: {items, next_cursor}, newest first; from/to on at's (UTC) date."""
    size = parse_limit(limit)
    start, end = validate.window(from_, to)
    wanted = parse_action(action)
    seal()  # anything committed but still pending (a crash before its seal) shows now
    filters = f"{start or ''}|{end or ''}|{wanted or ''}"
    query = select(*EVENT_COLUMNS).order_by(AuditEvent.seq.desc())
    if cursor not in (None, ""):
        query = query.where(AuditEvent.seq < _decode_cursor(str(cursor), filters))
    if start is not None:
        query = query.where(AuditEvent.at >= _midnight(start))
    if end is not None:
        query = query.where(AuditEvent.at < _midnight(end) + timedelta(days=1))
    if wanted is not None:
        query = query.where(AuditEvent.action == wanted)
    rows = db.session.execute(query.limit(size + 1)).all()
    items = [served(row) for row in rows[:size]]
    more = len(rows) > size
    return {
        "items": items,
        "next_cursor": _encode_cursor(items[-1]["seq"], filters) if more else None,
    }


def served(row) -> dict:
    """An event as GET /audit serves it: exactly the hashed fields, plus hash."""
    return {
        "seq": int(row.seq),
        "at": clock.iso(row.at),
        "action": row.action,
        "user_email": row.user_email,
        "via": row.via,
        "client_id": row.client_id,
        "client_name": row.client_name,
        "object": orjson.loads(row.object),
        "hash": row.hash,
    }


def _midnight(day) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)


def head() -> dict:
    """GET /audit/head: {seq, hash} of the newest event; {0, 64 zeros} before the first."""
    seal()
    row = db.session.execute(
        select(AuditEvent.seq, AuditEvent.hash).order_by(AuditEvent.seq.desc()).limit(1)
    ).first()
    if row is None:
        return {"seq": 0, "hash": GENESIS}
    return {"seq": int(row.seq), "hash": row.hash}
