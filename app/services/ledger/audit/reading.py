"""Reading the trail: GET /audit (one page of events, newest first) and GET /audit/head."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import orjson
from sqlalchemy import select

from ....extensions import db
from ....models import AuditEvent
from ... import clock
from ...errors import BadRequestError
from .. import cursors, validate
from .hashing import GENESIS
from .objects import ACTIONS
from .writing import seal


def parse_action(value) -> str | None:
    """None (every action) when absent; else one of ACTIONS (the names are in
    docs/openapi.yaml; the message does not list them, some read like table names)."""
    if value is None:
        return None
    if value not in ACTIONS:
        raise BadRequestError("'action' is not the name of a kind of change (e.g. account.created)")
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
    size = validate.page_limit(limit, default=validate.PAGE_DEFAULT)
    start, end = validate.window(from_, to)
    wanted = parse_action(action)
    seal()  # anything committed but still pending (a crash before its seal) shows now
    filters = f"{start or ''}|{end or ''}|{wanted or ''}"
    query = select(*EVENT_COLUMNS).order_by(AuditEvent.seq.desc())
    after = validate.cursor_text(cursor)
    if after is not None:
        query = query.where(AuditEvent.seq < cursors.decode_seq(after, filters))
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
        "next_cursor": cursors.encode_seq(items[-1]["seq"], filters) if more else None,
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
