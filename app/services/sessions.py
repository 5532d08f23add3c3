"""SESSION STATE MACHINE (SPEC "States and transitions -> Session").

| State        | Trigger                          | Next            | Also                          |
|--------------|----------------------------------|-----------------|-------------------------------|
| none         | correct password                 | half-session    | 10 minutes; WebAuthn + logout |
| half-session | verified WebAuthn ceremony       | full session    | id rotated; expiry reset      |
| any          | logout                           | none            |                               |
| any of user  | password change / reset / rm     | none            | all tokens revoked too        |

The cookie carries 256 random bits; only their SHA-256 digest is stored. The
expiry is fixed at creation and again at elevation; use never extends it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from flask import current_app
from sqlalchemy import delete, select, update

from ..extensions import db
from ..models import Session, User
from . import clock, crypto

HALF_SESSION_TTL = timedelta(minutes=10)


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
            Session.id, Session.user_id, Session.mfa_complete, Session.expires_at,
            Session.device_attempts, User.email,
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
    db.session.execute(
        update(Session)
        .where(Session.id == session_id)
        .values(id=crypto.digest(secret), mfa_complete=True, expires_at=clock.now() + full_ttl())
    )
    return secret


def end(session_id: str) -> None:
    db.session.execute(delete(Session).where(Session.id == session_id))


def end_all_for_user(user_id: int) -> None:
    db.session.execute(delete(Session).where(Session.user_id == user_id))
