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

Who, how (via) and which OAuth client are NOT passed: record() reads them from the
context (Actor, below), set once per request by the HTTP layer (routes/support.py:
`web` for a cookie session, `api` for a bearer token), per tool call by the MCP layer
(`mcp`), and overridden by the importer (`import`). Anything that sets nothing (the
CLI, a migration) records `cli` with no user and no client.

The event (CONTRACT "Trust"): {seq, at, action, user_email, via, client_id,
client_name, object} and hash = sha256_hex(previous hash + canonical JSON of the
event without hash), 64 zeros before the first. Stored columns hold exactly what was
hashed (object as canonical JSON text, at in whole seconds), so a served event
re-hashes to its stored hash. seq has no gaps: the writer locks the one audit_head
row (PostgreSQL: SELECT ... FOR UPDATE, waiting for a concurrent writer's commit;
SQLite: the writer lock already admits one writer), so seq and chain follow commit
order. Cost per event: one statement in the caller's transaction (see "writing" below).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import UTC, datetime, time, timedelta

import orjson
from sqlalchemy import bindparam, select, text

from ...extensions import db
from ...models import AuditEvent
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
)
VIAS = ("web", "api", "mcp", "import", "cli")
GENESIS = "0" * 64  # the "previous hash" of seq 1
PAGE_MAX = 500
PAGE_DEFAULT = 100


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
    """CONTRACT's canonical JSON: keys sorted, no spaces, non-ASCII as itself."""
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
# The event's canonical JSON is `{..."seq":` + seq + `,...}`: seq is the one part that
# depends on the chain's head, so the text is split around it (event_parts) and the
# head supplies seq and the previous hash.
#
# PostgreSQL: ONE statement per event. It locks the head row (FOR UPDATE: a concurrent
# writer waits for the holder's COMMIT and then reads the head that commit left),
# inserts the event with seq = head + 1 and its hash computed by the database's own
# sha256() over exactly the bytes chain() hashes, and moves the head. The head stays
# locked until the caller's transaction ends, so seq has no gaps and the chain
# follows commit order.
# SQLite: the writer lock already admits one writer at a time. One statement too:
# the event is inserted from the head row, hashed by sha256_hex() (the same function,
# registered on every connection by app.store.sqlite), and a trigger (migration 0007)
# moves the head to each inserted event.

_HEAD = "SELECT seq, hash FROM audit_head WHERE id = 1"
# The head row is made from the newest event when missing (a fresh schema, a restore,
# a test reset); concurrent makers on PostgreSQL: one inserts, the rest do nothing.
_NEWEST = "(SELECT {col} FROM audit_events ORDER BY seq DESC LIMIT 1)"
_MAKE_HEAD_VALUES = (
    f"SELECT 1, COALESCE({_NEWEST.format(col='seq')}, 0), "
    f"COALESCE({_NEWEST.format(col='hash')}, '{GENESIS}')"
)
_MAKE_HEAD = {
    "postgresql": text(
        f"INSERT INTO audit_head (id, seq, hash) {_MAKE_HEAD_VALUES} ON CONFLICT (id) DO NOTHING"
    ),
    "sqlite": text(f"INSERT OR IGNORE INTO audit_head (id, seq, hash) {_MAKE_HEAD_VALUES}"),
}
_EVENT_COLUMNS = "seq, at, action, user_email, via, client_id, client_name, object, hash"
_APPEND_POSTGRESQL = text(
    f"""
    WITH head AS ({_HEAD} FOR UPDATE),
    event AS (
        INSERT INTO audit_events ({_EVENT_COLUMNS})
        SELECT head.seq + 1, :at, :action, :user_email, :via, :client_id, :client_name,
               :object,
               encode(sha256(convert_to(
                   head.hash || CAST(:before_seq AS text) || CAST(head.seq + 1 AS text)
                   || CAST(:after_seq AS text), 'UTF8')), 'hex')
        FROM head
        RETURNING seq, hash
    )
    UPDATE audit_head SET seq = event.seq, hash = event.hash
    FROM event WHERE audit_head.id = 1
    RETURNING audit_head.seq
    """
).bindparams(bindparam("at", type_=UTCDateTime()))
_APPEND_SQLITE = text(
    f"""
    INSERT INTO audit_events ({_EVENT_COLUMNS})
    SELECT seq + 1, :at, :action, :user_email, :via, :client_id, :client_name, :object,
           sha256_hex(hash || :before_seq || CAST(seq + 1 AS TEXT) || :after_seq)
    FROM audit_head WHERE id = 1
    """
).bindparams(bindparam("at", type_=UTCDateTime()))
_APPEND = {"postgresql": _APPEND_POSTGRESQL, "sqlite": _APPEND_SQLITE}


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


# The PostgreSQL posting fast path (transactions._INSERT_CHECKED) appends its event in
# the same statement as the posting, from a CTE `obj (text)` holding the object's
# canonical JSON built by the database around the new ids. These CTEs follow it; the
# parameters come from sql_event_params().
PG_APPEND_FROM_OBJ = f"""
    head AS ({_HEAD} FOR UPDATE),
    event AS (
        INSERT INTO audit_events ({_EVENT_COLUMNS})
        SELECT head.seq + 1, :ev_at, :ev_action, :ev_user_email, :ev_via, :ev_client_id,
               :ev_client_name, obj.text,
               encode(sha256(convert_to(
                   head.hash || CAST(:ev_before_object AS text) || obj.text
                   || ',"seq":' || CAST(head.seq + 1 AS text) || CAST(:ev_after_seq AS text),
                   'UTF8')), 'hex')
        FROM head, obj
        RETURNING seq, hash
    ),
    moved AS (
        UPDATE audit_head SET seq = event.seq, hash = event.hash
        FROM event WHERE audit_head.id = 1
        RETURNING audit_head.seq
    )
"""


def sql_event_params(action: str) -> dict:
    """Parameters of PG_APPEND_FROM_OBJ: the event's columns and its canonical JSON
    before the object and after the seq (the object and seq come from the database)."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    actor = _actor.get()
    at = clock.now().replace(microsecond=0)
    whole = event_text(
        0,
        clock.iso(at) or "",
        action,
        actor.user_email,
        actor.via,
        actor.client_id,
        actor.client_name,
        "\x00",
    )
    before_object, _, rest = whole.partition("\x00")
    return {
        "ev_at": at,
        "ev_action": action,
        "ev_user_email": actor.user_email,
        "ev_via": actor.via,
        "ev_client_id": actor.client_id,
        "ev_client_name": actor.client_name,
        "ev_before_object": before_object,
        "ev_after_seq": rest.removeprefix(',"seq":0'),
    }


def transaction_object_parts(occurred_on, description: str) -> tuple[str, str]:
    """transaction_object's canonical JSON around `<entries>],"id":<id>`: what the
    database fills in for the PostgreSQL fast path."""
    return (
        '{"transaction":{"description":' + _string(description) + ',"entries":[',
        ',"occurred_on":' + _string(_iso_day(occurred_on)) + "}}",
    )


def record(action: str, obj: dict) -> None:
    """Append one event for this change, in the caller's transaction."""
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
    connection = db.session.connection()
    dialect = "postgresql" if connection.dialect.name == "postgresql" else "sqlite"
    if connection.execute(_APPEND[dialect], params).rowcount < 1:
        connection.execute(_MAKE_HEAD[dialect])  # no head row yet: make it, once
        if connection.execute(_APPEND[dialect], params).rowcount != 1:
            raise RuntimeError("the audit trail's head row is missing")


# --- the objects events carry (one shape per kind, shared by every caller) --------


def transaction_object(tx_id: int, occurred_on, description: str, entries) -> dict:
    """{"transaction": {id, occurred_on, description, entries: [{id, account_id,
    amount_cents}]}} from (entry_id, account_id, amount_cents) rows, ordered by entry id."""
    return {
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
    if value is None or value == "":
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
    row = db.session.execute(
        select(AuditEvent.seq, AuditEvent.hash).order_by(AuditEvent.seq.desc()).limit(1)
    ).first()
    if row is None:
        return {"seq": 0, "hash": GENESIS}
    return {"seq": int(row.seq), "hash": row.hash}
