"""The lock date (issue 19): nothing dated on or before it may change.

INTERFACE SHARED BY SEVERAL BRANCHES (being built in parallel this session; the
body below is filled in by the lock/idempotency branch before anything lands).

Every service that posts, deletes, clears or reconciles something dated `day` calls

    lock.refuse_if_locked(day)

inside its unit of work, before it writes. It raises services.errors.Conflict (409
{error} naming the lock date; MCP -32602; import: the line number) when day <= the
lock date. It reads the lock so that a concurrent PUT /books/lock cannot slip
between the check and the write.
"""

from __future__ import annotations

from datetime import date


def refuse_if_locked(day: date) -> None:
    """Raise Conflict when `day` is on or before the books' lock date."""
    return None
