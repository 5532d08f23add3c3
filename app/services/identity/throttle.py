"""The per-account password throttle (docs/auth.md "POST /auth/login").

The first 3 failed passwords of an email cost nothing. The 4th starts a delay of
2 seconds, and every later failure doubles it, up to 15 minutes. While an email is
inside its delay every attempt, even with the right password, is refused with 429
and Retry-After. A successful login clears the row.

Rows are keyed by the normalised email whether or not such a user exists, so an
unknown email is throttled exactly like a known one and the two cannot be told
apart. All state lives in `login_throttles`, so several processes share it.

An attempt is counted before its password is checked (reserve), in a short write
unit of its own that is committed before argon2 runs: the check and the count are
one conditional UPDATE, so parallel attempts cannot all pass the check before any
of them is counted, and no write lock or transaction is held while argon2 works.
A right password then clears the row; a wrong one has nothing more to record.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from sqlalchemy import case, delete, literal, null, or_, select, update

from ...extensions import db
from ...models import LoginThrottle
from ...store import dialect
from .. import clock
from ..errors import TooManyAttempts

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


def _until(value: datetime):
    return literal(value, LoginThrottle.locked_until.type)


def _locked_until_after_one_more(now: datetime):
    """SQL for the end of the delay that one more failure earns, from the stored count.

    delay_after() written out as a CASE over the count before this attempt (SET sees
    the old row), so the count and the delay change in the same statement.
    """
    steps = [(LoginThrottle.failures < FREE_FAILURES, null())]
    failures = FREE_FAILURES
    while delay_after(failures + 1) < MAX_DELAY:
        steps.append((LoginThrottle.failures == failures, _until(now + delay_after(failures + 1))))
        failures += 1
    return case(*steps, else_=_until(now + MAX_DELAY))


def reserve(email: str) -> int:
    """Count one password attempt for the email, or refuse it with 429 inside the delay.

    Call it in a write unit of its own and commit before verifying the password.
    Returns the new count. The increment (and the delay it earns) is a single
    UPDATE, after an insert that ignores an existing row, that applies only where
    the email is not inside its delay: of several concurrent attempts exactly as
    many are admitted as would be one after another. A refused attempt changes nothing.
    """
    now = clock.now()
    db.session.execute(
        dialect.upsert(
            LoginThrottle,
            {"email": email, "failures": 0, "locked_until": None, "updated_at": now},
            key=["email"],
        )
    )
    failures = db.session.execute(
        update(LoginThrottle)
        .where(
            LoginThrottle.email == email,
            or_(LoginThrottle.locked_until.is_(None), LoginThrottle.locked_until <= now),
        )
        .values(
            failures=LoginThrottle.failures + 1,
            locked_until=_locked_until_after_one_more(now),
            updated_at=now,
        )
        .returning(LoginThrottle.failures)
        .execution_options(synchronize_session=False)
    ).scalar_one_or_none()
    if failures is not None:
        return failures
    locked_until = db.session.execute(
        select(LoginThrottle.locked_until).where(LoginThrottle.email == email)
    ).scalar_one_or_none()
    # None or past only if a success cleared the row in between (PostgreSQL, READ
    # COMMITTED): the attempt is refused all the same, with the shortest wait.
    wait = math.ceil((locked_until - now).total_seconds()) if locked_until else 1
    wait = max(1, wait)
    raise TooManyAttempts(
        f"too many failed sign-in attempts; try again in {wait} seconds",
        retry_after=wait,
    )


def clear(email: str) -> None:
    """A right password forgets the email's failures."""
    db.session.execute(delete(LoginThrottle).where(LoginThrottle.email == email))
