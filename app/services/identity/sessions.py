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

from dataclasses import dataclass, field
from datetime import timedelta

from flask import current_app
from sqlalchemy import delete, select, update

from ...extensions import db
from ...models import Session, User
from .. import clock, crypto
from . import passkeys, passwords, throttle, users
from ..errors import BadRequest, Unauthenticated

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
        raise Unauthenticated("authentication required")


def lock_all_for_user(user_id: int) -> None:
    """Lock every session row of the user (FOR UPDATE) before their grants are killed.

    A password change takes these locks first: an approval holding its session row
    (hold) commits before it gets them, and its later statements (each a fresh READ
    COMMITTED snapshot) then see what the approval wrote; an approval that comes
    later finds its session gone. SQLite: the unit holds the write lock already.
    """
    db.session.execute(
        select(Session.id).where(Session.user_id == user_id).with_for_update()
    ).all()


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


@dataclass(frozen=True)
class LoginAttempt:
    """An attempt admitted and counted by admit_login, to be completed by complete_login."""

    email: str
    password: str = field(repr=False)
    user_id: int | None  # None: no such user (verified against the dummy hash)
    password_hash: str | None = field(repr=False)


def admit_login(body: dict) -> LoginAttempt:
    """Login, step 1: count the attempt against the email's throttle, or refuse it (429).

    A write unit of its own: the caller commits it (store.run_unit) before calling
    complete_login, so the count is stored before the password is checked and
    argon2 then runs with no transaction open and no SQLite writer lock held.
    A wrong password and an unknown email are counted alike (throttle.reserve).
    """
    email = users.normalise_email(_text_field(body, "email"))
    if len(email) > EMAIL_MAX:  # no account can have it; keeps the throttle key in bounds
        raise BadRequest(f"email must be at most {EMAIL_MAX} characters")
    password = _text_field(body, "password")
    throttle.reserve(email)
    user = db.session.execute(
        select(User.id, User.password_hash).where(User.email == email)
    ).first()
    return LoginAttempt(
        email, password, user.id if user else None, user.password_hash if user else None
    )


def complete_login(attempt: LoginAttempt, *, replacing: str | None = None) -> LoginResult:
    """Login, step 2: password check -> half-session (SPEC Session row 1).

    `replacing` is the cookie the browser already held; that session ends on success.

    A wrong password and an unknown email take the same path: the same argon2
    verification (against a dummy hash when there is no user) and the same 401
    sentence; the attempt was already counted by admit_login. A right password
    clears the throttle and opens the half-session in the caller's unit of work.
    """
    dummy = passwords.dummy_hash()  # paid on both paths, so the first call costs the same
    matches, new_hash = passwords.verify(attempt.password, attempt.password_hash or dummy)
    if attempt.user_id is None or not matches:
        raise Unauthenticated(LOGIN_REFUSED)
    user_id = attempt.user_id
    unchanged = User.id == user_id, User.password_hash == attempt.password_hash
    # FOR SHARE (PostgreSQL): a password change or removal that commits after this
    # check would otherwise miss the session created below; holding the user row
    # makes it wait until this login has committed, and then end that session too.
    held = select(User.id).where(*unchanged).with_for_update(read=True)
    if db.session.execute(held).first() is None:
        raise Unauthenticated(LOGIN_REFUSED)  # removed, or its password changed, meanwhile
    throttle.clear(attempt.email)
    if new_hash:
        db.session.execute(update(User).where(*unchanged).values(password_hash=new_hash))
    # Expired sessions of this user are dead weight: drop them while we are here.
    db.session.execute(
        delete(Session).where(Session.user_id == user_id, Session.expires_at <= clock.now())
    )
    end_cookie(replacing)  # signing in again replaces the browser's previous session
    touch_user(user_id)
    cookie = create(user_id, mfa_complete=False)
    return LoginResult(cookie=cookie, has_passkeys=passkeys.count_for(user_id) > 0)


@dataclass(frozen=True)
class PasswordChange:
    """A password change admitted and counted by admit_password_change."""

    user_id: int
    email: str
    current: str = field(repr=False)
    new: str = field(repr=False)
    password_hash: str = field(repr=False)


def admit_password_change(user_id: int, body: dict) -> PasswordChange:
    """POST /auth/password, step 1: count the current-password check (or refuse it, 429).

    The same per-email throttle and count as a login, so a stolen session cannot
    guess the password faster than the sign-in form. Like admit_login, a write unit
    of its own that the caller commits before complete_password_change.
    """
    current = body.get("current_password")
    new = body.get("new_password")
    if not isinstance(current, str) or not isinstance(new, str):
        raise BadRequest("current_password and new_password are required strings")
    users.check_password_strength(new)  # a request that cannot succeed spends no attempt
    account = db.session.execute(
        select(User.email, User.password_hash).where(User.id == user_id)
    ).first()
    if account is None:
        raise Unauthenticated("authentication required")
    throttle.reserve(account.email)
    return PasswordChange(user_id, account.email, current, new, account.password_hash)


def complete_password_change(change: PasswordChange) -> None:
    """Step 2: check the current password; then end every session and revoke every token.

    A wrong current password is a 400 (already counted by admit_password_change);
    a right one clears the throttle.
    """
    matches, _ = passwords.verify(change.current, change.password_hash)
    if not matches:
        raise BadRequest("the current password is wrong")
    new_hash = passwords.hash_password(change.new)  # argon2 too, before the write unit
    changed = db.session.execute(
        update(User)
        .where(User.id == change.user_id, User.password_hash == change.password_hash)
        .values(password_hash=new_hash)
    ).rowcount
    if changed != 1:  # changed (or removed) by someone else meanwhile
        raise BadRequest("the current password is wrong")
    throttle.clear(change.email)
    users.end_all_sessions_and_tokens(change.user_id)
    db.session.flush()
