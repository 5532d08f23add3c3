"""Idempotent writes (docs/ledger.md "Idempotent writes": Idempotency-Key,
idempotency_key).

A caller that may retry a write sends a key with it (the `Idempotency-Key` header on
POST /transactions and POST /accounts, the `idempotency_key` argument of the
record_transaction tool). once() runs the write the first time and keeps its answer;
a later request with the same key:

- and the same request (same operation, body equal as JSON): the kept status and
  body, and nothing changes;
- and another request: KeyReused (HTTP 422, MCP -32602), nothing changes.

Keys belong to the user who sent them. Only successful answers are kept: the key's
row is written in the write's own unit of work, so a refusal (4xx) rolls it back with
everything else and the key can be used again. Answers are kept for TTL (24 hours)
and then treated as unknown; expired rows are deleted as new keys arrive (with every
CLEANUP_EVERY-th new key, at most CLEANUP_BATCH rows: faster than keys can pile up,
without a statement more on most keyed requests).

Concurrency: the key's row is claimed (INSERT ... ON CONFLICT DO NOTHING) before the
write runs. On PostgreSQL a second request with the same key waits on the first's
uncommitted row, then finds it committed (a replay) or gone (the first was refused:
it claims the key itself). SQLite runs one writer at a time, so the second request
sees the first's committed row. Either way exactly one result is stored. A committed
row without an answer cannot exist (claim and answer commit together); should one
appear it is KeyInFlight (409).

Without a key once() is just fn(): no statement, no cost.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import typing
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import orjson
from sqlalchemy import CursorResult, bindparam, delete, select, update

from ...extensions import db
from ...models import IdempotencyKey
from ...models.types import UTCDateTime
from ...store import dialect
from .. import clock
from ..errors import BadRequestError, KeyInFlight, KeyReused

TTL = timedelta(hours=24)
MAX_LENGTH = 255
CLEANUP_BATCH = 100  # expired rows deleted per cleanup, at most
CLEANUP_EVERY = 16  # a cleanup runs with every 16th new key (by row id): 100 per 16 keys
CLAIM_ATTEMPTS = 5  # a key deleted or taken over under us this often: answer 409
HEADER = "Idempotency-Key"
ARGUMENT = "idempotency_key"


@dataclass
class Answer:
    status: int
    data: Any
    replayed: bool = False


def check_key(name: str, value) -> str | None:
    """A key as sent (None when absent): 1 to 255 printable ASCII characters, else 400."""
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or not 1 <= len(value) <= MAX_LENGTH
        or not all(" " <= ch <= "~" for ch in value)
    ):
        raise BadRequestError(
            f"'{name}' must be 1 to {MAX_LENGTH} printable ASCII characters "
            "(letters, digits, punctuation, spaces)"
        )
    return value


def header_key(value: str | None) -> str | None:
    """The Idempotency-Key header (a header sent twice arrives joined by ", ", as HTTP
    combines repeated fields: one key)."""
    return check_key(HEADER, value)


def fingerprint(operation: str, request) -> str:
    """SHA-256 of the operation and the request's canonical JSON (key order and
    whitespace do not count: two bodies that are equal as JSON match)."""
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{operation}\n{canonical}".encode()).hexdigest()


def once(user_id: int, key: str | None, operation: str, request, status: int, fn, *args) -> Answer:
    """Run fn(*args) once per (user, key), answering `status` and its data; see the module.

    Call inside the write's unit of work (the caller commits, and a retried unit
    re-runs this whole function). `request` is the JSON the key is bound to.
    """
    if key is None:
        return Answer(status, fn(*args))
    wanted = fingerprint(operation, request)
    kept, claimed = _claim(user_id, key, wanted)
    if kept is not None:
        return kept
    data = fn(*args)
    db.session.connection().execute(
        _KEEP_ANSWER,
        {"row_id": claimed, "kept_status": status, "kept": orjson.dumps(data).decode()},
    )
    return Answer(status, data)


# Built once (constructing a statement per request cost more than running it); run as
# Core statements on the session's connection, in the caller's unit of work.
_CLAIM = dialect.per_dialect(
    lambda insert: (
        insert(IdempotencyKey)
        .values(
            user_id=bindparam("claim_user"),
            key=bindparam("claim_key"),
            fingerprint=bindparam("claim_fingerprint"),
            created_at=bindparam("claim_at", type_=UTCDateTime()),
        )
        .on_conflict_do_nothing(index_elements=["user_id", "key"])
        .returning(IdempotencyKey.id)
    )
)
_KEEP_ANSWER = (
    update(IdempotencyKey)
    .where(IdempotencyKey.id == bindparam("row_id"))
    .values(status=bindparam("kept_status"), answer_json=bindparam("kept"))
)


def _claim(user_id: int, key: str, wanted: str) -> tuple[Answer | None, int]:
    """Claim the key for this request: (None, the claimed row's id), or (the kept
    answer to replay, 0)."""
    now = clock.now()
    cutoff = now - TTL
    for _ in range(CLAIM_ATTEMPTS):
        claimed = _insert(user_id, key, wanted, now)
        if claimed is not None:
            if claimed % CLEANUP_EVERY == 0:
                _delete_expired(cutoff)
            return None, claimed
        row = db.session.execute(
            select(
                IdempotencyKey.id,
                IdempotencyKey.fingerprint,
                IdempotencyKey.status,
                IdempotencyKey.answer_json,
                IdempotencyKey.created_at,
            ).where(IdempotencyKey.user_id == user_id, IdempotencyKey.key == key)
        ).one_or_none()
        if row is None:
            continue  # deleted since the insert gave way: claim it again
        if row.created_at < cutoff:
            # Expired but not yet cleaned up: take it over, unless someone else just did.
            taken = db.session.execute(
                update(IdempotencyKey)
                .where(IdempotencyKey.id == row.id, IdempotencyKey.created_at < cutoff)
                .values(fingerprint=wanted, status=None, answer_json=None, created_at=now)
            )
            if typing.cast(CursorResult, taken).rowcount == 1:
                return None, row.id
            continue
        if not hmac.compare_digest(row.fingerprint, wanted):
            raise KeyReused(
                "this idempotency key was already used with a different request; "
                "send a new key for a new request"
            )
        if row.status is None:
            raise KeyInFlight("a request with this idempotency key is still in progress; retry")
        return Answer(row.status, orjson.loads(row.answer_json), replayed=True), 0
    raise KeyInFlight("a request with this idempotency key is still in progress; retry")


def _insert(user_id: int, key: str, wanted: str, now) -> int | None:
    """INSERT the claim unless the key exists (waiting, on PostgreSQL, for an
    uncommitted claim to commit or roll back); the new row's id, or None."""
    connection = db.session.connection()
    params = {"claim_user": user_id, "claim_key": key, "claim_fingerprint": wanted, "claim_at": now}
    return connection.execute(_CLAIM[dialect.name(connection)], params).scalar()


def _delete_expired(cutoff) -> None:
    """Opportunistic cleanup: at most CLEANUP_BATCH rows older than the window."""
    oldest = (
        select(IdempotencyKey.id)
        .where(IdempotencyKey.created_at < cutoff)
        .order_by(IdempotencyKey.created_at)
        .limit(CLEANUP_BATCH)
    )
    if dialect.is_postgresql():
        # Rows another request is taking over or deleting are left to it (no waiting).
        oldest = oldest.with_for_update(skip_locked=True)
    db.session.execute(
        delete(IdempotencyKey).where(IdempotencyKey.id.in_(oldest.scalar_subquery()))
    )
