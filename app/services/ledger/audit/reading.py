"""Reading the trail: GET /audit (one page of events, newest first) and GET /audit/head."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from datetime import UTC, datetime, time, timedelta

import orjson
from sqlalchemy import select

from ....extensions import db
from ....models import AuditEvent
from ... import clock
from ...errors import BadRequest
from .. import validate
from .hashing import GENESIS
from .objects import ACTIONS
from .writing import seal

PAGE_MAX = 500
PAGE_DEFAULT = 100

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
