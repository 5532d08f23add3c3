"""SESSION STATE MACHINE (docs/auth.md "The flow"; this table is the rule).

| State        | Trigger                    | Next         | Also                          |
|--------------|----------------------------|--------------|-------------------------------|
| none         | correct password           | half-session | 10 minutes; WebAuthn + logout |
| half-session | verified WebAuthn ceremony | full session | id rotated; expiry reset      |
| any          | logout                     | none         |                               |
| any of user  | password change/reset/rm   | none         | all tokens revoked too        |

The cookie carries 256 random bits; only their SHA-256 digest is stored. The
expiry is fixed at creation and again at elevation; use never extends it. The
flows that lead here (login, password change) are in signin.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import cast

from flask import current_app
from sqlalchemy import CursorResult, delete, select, update

from ...extensions import db
from ...models import Session, User
from .. import clock, crypto
from ..errors import UnauthenticatedError

HALF_SESSION_TTL = timedelta(minutes=10)
# One sentence for a wrong password and for an unknown email (docs/auth.md "POST /auth/login": the
# same body, header and work, so the answer never tells which was wrong).


@dataclass(frozen=True)
class LiveSession:
    id: str  # digest
    user_id: int
    email: str
    mfa_complete: bool
    device_attempts: int


def full_ttl() -> timedelta:
    return timedelta(days=current_app.config["SESSION_TTL_DAYS"])


def create(user_id: int, *, mfa_complete: bool = False) -> str:
    """Start a session; returns the cookie value (the raw secret, never stored)."""
    secret = crypto.new_secret()
    now = clock.now()
    db.session.add(
        Session(
            id=crypto.digest(secret),
            user_id=user_id,
            mfa_complete=mfa_complete,
            created_at=now,
            expires_at=now + (full_ttl() if mfa_complete else HALF_SESSION_TTL),
            device_attempts=0,
        )
    )
    db.session.flush()
    return secret


def lookup(cookie: str) -> LiveSession | None:
    """The live session behind a cookie value, or None (unknown or expired)."""
    row = db.session.execute(
        select(
            Session.id,
            Session.user_id,
            Session.mfa_complete,
            Session.expires_at,
            Session.device_attempts,
            User.email,
        )
        .join(User, User.id == Session.user_id)
        .where(Session.id == crypto.digest(cookie))
    ).first()
    if row is None or row.expires_at <= clock.now():
        return None
    return LiveSession(row.id, row.user_id, row.email, row.mfa_complete, row.device_attempts)


def elevate(session_id: str) -> str:
    """Half -> full: rotate the id (old cookie dies) and reset the fixed expiry."""
    secret = crypto.new_secret()
    moved = cast(
        CursorResult,
        db.session.execute(
            update(Session)
            .where(Session.id == session_id, Session.expires_at > clock.now())
            .values(
                id=crypto.digest(secret), mfa_complete=True, expires_at=clock.now() + full_ttl()
            )
            .execution_options(synchronize_session=False)
        ),
    ).rowcount
    if moved != 1:  # ended meanwhile (logout, password change): nothing to elevate
        raise UnauthenticatedError("the session has ended; sign in again")
    return secret


def end(session_id: str) -> None:
    db.session.execute(delete(Session).where(Session.id == session_id))


def end_cookie(cookie: str | None) -> None:
    """Logout: forget the session behind a cookie value (nothing to do without one)."""
    if cookie:
        end(crypto.digest(cookie))


def hold(session_id: str) -> None:
    """Lock the caller's own session row for the rest of the unit, or 401 if it has ended.

    Approvals (authorization code, device decision) call it before they write: the
    request's session check ran earlier in the unit, and on PostgreSQL (READ
    COMMITTED) a password change could have ended the session since. The lock (FOR NO
    KEY UPDATE: it conflicts with the DELETE of a password change and with another
    approval of the same session, which then waits rather than deadlocking on the
    device attempt counter) makes a password change that comes later wait for this
    unit to commit, so it then sees, and kills, what the approval wrote. On SQLite the
    unit already holds the write lock (BEGIN IMMEDIATE) and this is a plain re-check.
    """
    live = db.session.execute(
        select(Session.id)
        .where(Session.id == session_id, Session.expires_at > clock.now())
        .with_for_update(key_share=True)
    ).first()
    if live is None:
        raise UnauthenticatedError("authentication required")


def lock_all_for_user(user_id: int) -> None:
    """Lock every session row of the user (FOR UPDATE) before their grants are killed.

    A password change takes these locks first: an approval holding its session row
    (hold) commits before it gets them, and its later statements (each a fresh READ
    COMMITTED snapshot) then see what the approval wrote; an approval that comes
    later finds its session gone. SQLite: the unit holds the write lock already.
    """
    db.session.execute(select(Session.id).where(Session.user_id == user_id).with_for_update()).all()


def end_all_for_user(user_id: int) -> None:
    db.session.execute(delete(Session).where(Session.user_id == user_id))


def touch_user(user_id: int) -> None:
    """Record that the user was seen (shown by `user list`)."""
    db.session.execute(update(User).where(User.id == user_id).values(last_seen_at=clock.now()))
