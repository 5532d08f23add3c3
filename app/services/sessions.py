"""SESSION STATE MACHINE (SPEC "States and transitions -> Session").

| State        | Trigger                    | Next         | Also                          |
|--------------|----------------------------|--------------|-------------------------------|
| none         | correct password           | half-session | 10 minutes; WebAuthn + logout |
| half-session | verified WebAuthn ceremony | full session | id rotated; expiry reset      |
| any          | logout                     | none         |                               |
| any of user  | password change/reset/rm   | none         | all tokens revoked too        |

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
from . import clock, crypto, passkeys, passwords, throttle, users
from .errors import BadRequest, Unauthenticated

HALF_SESSION_TTL = timedelta(minutes=10)
# One sentence for a wrong password and for an unknown email (SPEC rule 6).
LOGIN_REFUSED = "wrong email or password"
EMAIL_MAX = 254


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
    moved = db.session.execute(
        update(Session)
        .where(Session.id == session_id, Session.expires_at > clock.now())
        .values(id=crypto.digest(secret), mfa_complete=True, expires_at=clock.now() + full_ttl())
        .execution_options(synchronize_session=False)
    ).rowcount
    if moved != 1:  # ended meanwhile (logout, password change): nothing to elevate
        raise Unauthenticated("the session has ended; sign in again")
    return secret


def end(session_id: str) -> None:
    db.session.execute(delete(Session).where(Session.id == session_id))


def end_cookie(cookie: str | None) -> None:
    """Logout: forget the session behind a cookie value (nothing to do without one)."""
    if cookie:
        end(crypto.digest(cookie))


def end_all_for_user(user_id: int) -> None:
    db.session.execute(delete(Session).where(Session.user_id == user_id))


def touch_user(user_id: int) -> None:
    """Record that the user was seen (shown by `user list`)."""
    db.session.execute(update(User).where(User.id == user_id).values(last_seen_at=clock.now()))


@dataclass(frozen=True)
class LoginResult:
    cookie: str
    has_passkeys: bool


def _text_field(body: dict, key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or value == "":
        raise BadRequest(f"{key} is required and must be a string")
    return value


def login(body: dict, *, replacing: str | None = None) -> LoginResult:
    """Password check -> half-session (SPEC Session row 1), behind the per-email throttle.

    `replacing` is the cookie the browser already held; that session ends on success.

    A wrong password and an unknown email take the same path: the same argon2
    verification (against a dummy hash when there is no user), the same counted
    failure and the same 401 sentence.
    """
    email = users.normalise_email(_text_field(body, "email"))
    if len(email) > EMAIL_MAX:  # no account can have it; keeps the throttle key in bounds
        raise BadRequest(f"email must be at most {EMAIL_MAX} characters")
    password = _text_field(body, "password")
    dummy = passwords.dummy_hash()  # paid on both paths, so the first call costs the same
    throttle.check(email)
    user = users.find_user(email)
    matches, new_hash = passwords.verify(password, user.password_hash if user else dummy)
    if user is None or not matches:
        throttle.record_failure(email)
        raise Unauthenticated(LOGIN_REFUSED, commit=True)
    throttle.clear(email)
    if new_hash:
        user.password_hash = new_hash
    # Expired sessions of this user are dead weight: drop them while we are here.
    db.session.execute(
        delete(Session).where(Session.user_id == user.id, Session.expires_at <= clock.now())
    )
    end_cookie(replacing)  # signing in again replaces the browser's previous session
    touch_user(user.id)
    cookie = create(user.id, mfa_complete=False)
    return LoginResult(cookie=cookie, has_passkeys=passkeys.count_for(user.id) > 0)


def change_password(user_id: int, body: dict) -> None:
    """POST /auth/password: ends every session of the user and revokes every token."""
    current = body.get("current_password")
    new = body.get("new_password")
    if not isinstance(current, str) or not isinstance(new, str):
        raise BadRequest("current_password and new_password are required strings")
    user = db.session.get(User, user_id)
    if user is None:
        raise Unauthenticated("authentication required")
    matches, _ = passwords.verify(current, user.password_hash)
    if not matches:
        raise BadRequest("the current password is wrong")
    users.check_password_strength(new)
    user.password_hash = passwords.hash_password(new)
    users.end_all_sessions_and_tokens(user.id)
    db.session.flush()
