"""The lock date (issue 19): nothing dated on or before it may change.

Every service that posts, deletes, clears or reconciles something dated `day` calls

    lock.refuse_if_locked(day)

inside its unit of work, before it writes. It raises services.errors.BooksLocked (a
ConflictError: 409 {error} naming the lock date; MCP -32602; import: the line number)
when day <= the lock date. It reads the lock so that a concurrent PUT /books/lock
cannot slip between the check and the write.

Where the lock lives: settings.locked_through on the single settings row (seeded by
the first migration; null means unlocked). A backup carries it and a restore brings
it back with the books it locked; restore itself is not refused, because it only
fills an empty database (it changes no books that exist).

Concurrency (PostgreSQL; SQLite runs one writer at a time, so reading is enough):
a writer reads the row FOR KEY SHARE, which many writers hold at once and which
PUT /books/lock's FOR UPDATE waits for. So the lock moves only once every posting
that read the old date has committed, and a posting that reads after the move waits
for it and sees the new date (READ COMMITTED re-reads a row it had to wait for).
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import select, update

from ...extensions import db
from ...models import Settings
from ...store import dialect
from ..errors import BadRequestError, BooksLocked
from . import audit, validate

FIELD = "locked_through"


def message(day: date, locked: date) -> str:
    return (
        f"the books are locked through {locked.isoformat()}: nothing dated on or before "
        f"it can be changed (this is dated {day.isoformat()})"
    )


# Built once (SQLAlchemy then only looks the compiled form up in its cache) and run
# as Core statements on the session's connection: the ORM's execution path cost more
# than the query (docs/performance.md, "The write path, issue 30").
_READ = select(Settings.locked_through).where(Settings.id == 1)
_READ_LOCKED = {
    # PostgreSQL only: SQLite has one writer at a time and no row locks.
    "share": _READ.with_for_update(read=True, key_share=True),
    "update": _READ.with_for_update(),
}


def _read(lock_mode: str | None) -> date | None:
    connection = db.session.connection()
    query = _READ
    if lock_mode is not None and dialect.is_postgresql(connection):
        query = _READ_LOCKED[lock_mode]
    return connection.execute(query).scalar()


def locked_through() -> date | None:
    """The lock date, or None when the books are not locked."""
    return _read(None)


def locked_for_posting() -> date | None:
    """The lock date, read as a writer reads it (FOR KEY SHARE on PostgreSQL)."""
    return _read("share")


def refuse_if_locked(day: date) -> None:
    """Raise ConflictError when `day` is on or before the books' lock date."""
    refuse_locked(day, _read("share"))


def refuse_locked(day: date, locked: date | None) -> None:
    """THE lock rule, given the lock date `locked` read once (BooksLocked naming it)."""
    if locked is not None and day <= locked:
        raise BooksLocked(message(day, locked))


def get_lock() -> dict:
    """GET /books/lock: {locked_through: date | null}."""
    locked = locked_through()
    return {FIELD: locked.isoformat() if locked else None}


def parse(body: dict) -> date | None:
    """The PUT body's locked_through: a date, or null to clear; anything else is a 400."""
    if FIELD not in body:
        raise BadRequestError(f"{FIELD} is required: a date (YYYY-MM-DD), or null to unlock")
    value = body[FIELD]
    if value is None:
        return None
    return validate.date_value(FIELD, value)


def set_lock(body: dict) -> dict:
    """PUT /books/lock: set (a date) or clear (null) the lock date; one audit event."""
    new = parse(body)
    previous = _read("update")
    if previous != new:
        db.session.execute(update(Settings).where(Settings.id == 1).values(locked_through=new))
        audit.record(
            "books.locked",
            {
                FIELD: new.isoformat() if new else None,
                "previous": previous.isoformat() if previous else None,
            },
        )
    return {FIELD: new.isoformat() if new else None}
