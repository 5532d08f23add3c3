"""Sign-in flows: login and password change, each in two steps around argon2.

Step 1 (admit_*) counts the attempt against the throttle in a write unit of its own,
committed by the caller (store.run_unit); step 2 (complete_*) verifies the password
with no transaction open, then opens a half-session (sessions.create) or ends every
session and token of the user (users.end_all_sessions_and_tokens).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from sqlalchemy import CursorResult, delete, select, update

from ...extensions import db
from ...models import Session, User
from .. import clock
from ..errors import BadRequestError, UnauthenticatedError
from . import passkeys, passwords, sessions, throttle, users

LOGIN_REFUSED = "wrong email or password"
EMAIL_MAX = 254


@dataclass(frozen=True)
class LoginResult:
    cookie: str
    has_passkeys: bool


def _text_field(body: dict, key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or value == "":
        raise BadRequestError(f"{key} is required and must be a string")
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
        raise BadRequestError(f"email must be at most {EMAIL_MAX} characters")
    if "\x00" in email:  # no account can have it; PostgreSQL text cannot hold it
        raise BadRequestError("email must not contain NUL characters")
    password = _text_field(body, "password")
    throttle.reserve(email)
    user = db.session.execute(
        select(User.id, User.password_hash).where(User.email == email)
    ).first()
    return LoginAttempt(
        email, password, user.id if user else None, user.password_hash if user else None
    )


def complete_login(attempt: LoginAttempt, *, replacing: str | None = None) -> LoginResult:
    """Login, step 2: password check -> half-session (docs/auth.md "The flow").

    `replacing` is the cookie the browser already held; that session ends on success.

    A wrong password and an unknown email take the same path: the same argon2
    verification (against a dummy hash when there is no user) and the same 401
    sentence; the attempt was already counted by admit_login. A right password
    clears the throttle and opens the half-session in the caller's unit of work.
    """
    dummy = passwords.dummy_hash()  # paid on both paths, so the first call costs the same
    matches, new_hash = passwords.verify(attempt.password, attempt.password_hash or dummy)
    if attempt.user_id is None or not matches:
        raise UnauthenticatedError(LOGIN_REFUSED)
    user_id = attempt.user_id
    unchanged = User.id == user_id, User.password_hash == attempt.password_hash
    # FOR SHARE (PostgreSQL): a password change or removal that commits after this
    # check would otherwise miss the session created below; holding the user row
    # makes it wait until this login has committed, and then end that session too.
    held = select(User.id).where(*unchanged).with_for_update(read=True)
    if db.session.execute(held).first() is None:
        raise UnauthenticatedError(LOGIN_REFUSED)  # removed, or its password changed, meanwhile
    throttle.clear(attempt.email)
    if new_hash:
        db.session.execute(update(User).where(*unchanged).values(password_hash=new_hash))
    # Expired sessions of this user are dead weight: drop them while we are here.
    db.session.execute(
        delete(Session).where(Session.user_id == user_id, Session.expires_at <= clock.now())
    )
    sessions.end_cookie(replacing)  # signing in again replaces the browser's previous session
    sessions.touch_user(user_id)
    cookie = sessions.create(user_id, mfa_complete=False)
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
        raise BadRequestError("current_password and new_password are required strings")
    users.check_password_strength(new)  # a request that cannot succeed spends no attempt
    account = db.session.execute(
        select(User.email, User.password_hash).where(User.id == user_id)
    ).first()
    if account is None:
        raise UnauthenticatedError("authentication required")
    throttle.reserve(account.email)
    return PasswordChange(user_id, account.email, current, new, account.password_hash)


def complete_password_change(change: PasswordChange) -> None:
    """Step 2: check the current password; then end every session and revoke every token.

    A wrong current password is a 400 (already counted by admit_password_change);
    a right one clears the throttle.
    """
    matches, _ = passwords.verify(change.current, change.password_hash)
    if not matches:
        raise BadRequestError("the current password is wrong")
    new_hash = passwords.hash_password(change.new)  # argon2 too, before the write unit
    changed = cast(
        CursorResult,
        db.session.execute(
            update(User)
            .where(User.id == change.user_id, User.password_hash == change.password_hash)
            .values(password_hash=new_hash)
        ),
    ).rowcount
    if changed != 1:  # changed (or removed) by someone else meanwhile
        raise BadRequestError("the current password is wrong")
    throttle.clear(change.email)
    users.end_all_sessions_and_tokens(change.user_id)
    db.session.flush()
