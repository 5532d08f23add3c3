"""The per-account password throttle (SPEC "Authentication -> Credentials" rule 6, Limits).

The first 3 failed passwords of an email cost nothing. The 4th starts a delay of
2 seconds, and every later failure doubles it, up to 15 minutes. While an email is
inside its delay every attempt, even with the right password, is refused with 429
and Retry-After. A successful login clears the row.

Rows are keyed by the normalised email whether or not such a user exists, so an
unknown email is throttled exactly like a known one and the two cannot be told
apart. All state lives in `login_throttles`, so several processes share it.
"""

from __future__ import annotations

import math
from datetime import timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite

from ..extensions import db
from ..models import LoginThrottle
from . import clock
from .errors import TooManyAttempts

FREE_FAILURES = 3
FIRST_DELAY = timedelta(seconds=2)
MAX_DELAY = timedelta(minutes=15)


def delay_after(failures: int) -> timedelta:
    """The delay that the given number of failures imposes (zero while still free)."""
    if failures <= FREE_FAILURES:
        return timedelta(0)
    # 4th failure -> 2 s, 5th -> 4 s, ...; the exponent is bounded so it cannot overflow.
    doublings = min(failures - FREE_FAILURES - 1, 20)
    return min(FIRST_DELAY * (2**doublings), MAX_DELAY)


def check(email: str) -> None:
    """Refuse with 429 while the email is inside its delay."""
    locked_until = db.session.execute(
        select(LoginThrottle.locked_until).where(LoginThrottle.email == email)
    ).scalar_one_or_none()
    now = clock.now()
    if locked_until is not None and locked_until > now:
        wait = math.ceil((locked_until - now).total_seconds())
        raise TooManyAttempts(
            f"too many failed sign-in attempts; try again in {wait} seconds",
            retry_after=wait,
        )


def _insert(dialect_name: str):
    module = postgresql if dialect_name == "postgresql" else sqlite
    return module.insert(LoginThrottle)


def record_failure(email: str) -> int:
    """Count one failed password for the email; returns the new failure count.

    The increment is a single UPDATE (after an insert that ignores an existing
    row), so concurrent failures from several processes are all counted.
    """
    now = clock.now()
    dialect_name = db.session.get_bind().dialect.name
    db.session.execute(
        _insert(dialect_name)
        .values(email=email, failures=0, locked_until=None, updated_at=now)
        .on_conflict_do_nothing(index_elements=["email"])
    )
    failures = db.session.execute(
        update(LoginThrottle)
        .where(LoginThrottle.email == email)
        .values(failures=LoginThrottle.failures + 1, updated_at=now)
        .returning(LoginThrottle.failures)
    ).scalar_one()
    delay = delay_after(failures)
    if delay:
        db.session.execute(
            update(LoginThrottle)
            .where(LoginThrottle.email == email)
            .values(locked_until=now + delay)
        )
    return failures


def clear(email: str) -> None:
    """A successful login forgets the email's failures."""
    db.session.execute(delete(LoginThrottle).where(LoginThrottle.email == email))
