"""User administration (the CLI's commands call these; never reachable over HTTP)."""

from __future__ import annotations

import re
import secrets

from sqlalchemy import delete, func, select, update

from ...extensions import db
from ...models import Passkey, Token, User
from .. import clock
from ..errors import BadRequestError, NotFoundError
from ..oauth import codes as oauth_codes
from ..oauth import device as oauth_device
from . import passwords, sessions

_EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
PASSWORD_MIN = 8


def normalise_email(email) -> str:
    if not isinstance(email, str):
        raise BadRequestError("email must be a string")
    return email.strip().lower()


def valid_email(email) -> str:
    email = normalise_email(email)
    if len(email) > 254 or not _EMAIL_RE.match(email):
        raise BadRequestError(f"not a valid email address: {email!r}")
    return email


def generate_password() -> str:
    return secrets.token_urlsafe(15)


def check_password_strength(password) -> str:
    if not isinstance(password, str) or len(password) < PASSWORD_MIN:
        raise BadRequestError(f"the password must be at least {PASSWORD_MIN} characters")
    return password


def find_user(email) -> User | None:
    if isinstance(email, str) and "\x00" in email:
        return None  # no stored address holds a NUL, and PostgreSQL refuses to compare one
    return db.session.execute(
        select(User).where(User.email == normalise_email(email))
    ).scalar_one_or_none()


def get_user(email) -> User:
    user = find_user(email)
    if user is None:
        raise NotFoundError(f"no user with email {normalise_email(email)!r}")
    return user


def add_user(email, password: str) -> User:
    """Create a user with an argon2 hash of the password."""
    email = valid_email(email)
    check_password_strength(password)
    if find_user(email) is not None:
        raise BadRequestError(f"a user with email {email!r} already exists")
    user = User(
        email=email,
        password_hash=passwords.hash_password(password),
        webauthn_handle=secrets.token_bytes(32),
        created_at=clock.now(),
    )
    db.session.add(user)
    db.session.flush()
    return user


def end_all_sessions_and_tokens(user_id: int) -> None:
    """A password change, reset or removal ends every session and revokes every token
    (docs/auth.md "POST /auth/password").

    Grants given before it die too: every unredeemed authorization code of the user and
    every device record the user approved (or one of their sessions decided), so nothing
    approved under the old password can be exchanged for tokens afterwards.

    The user's session rows are locked first: an approval in flight holds its own
    session row (sessions.hold), so this waits until it has committed and the
    statements below see its code or device decision; one that comes later is
    refused because its session is gone (docs/auth.md).
    """
    sessions.lock_all_for_user(user_id)
    oauth_codes.kill_all_for_user(user_id)
    oauth_device.forget_user(user_id)  # before the sessions go: it matches on them
    sessions.end_all_for_user(user_id)
    db.session.execute(
        update(Token)
        .where(Token.user_id == user_id, Token.revoked_at.is_(None))
        .values(revoked_at=clock.now())
    )


def set_password(email, password: str) -> User:
    user = get_user(email)
    check_password_strength(password)
    user.password_hash = passwords.hash_password(password)
    end_all_sessions_and_tokens(user.id)
    db.session.flush()
    return user


def remove_user(email) -> None:
    """Delete the user; sessions, passkeys and tokens cascade; transactions keep created_by NULL."""
    user = get_user(email)
    end_all_sessions_and_tokens(user.id)
    db.session.execute(delete(User).where(User.id == user.id))


def list_users() -> list[dict]:
    count = select(func.count(Passkey.id)).where(Passkey.user_id == User.id).scalar_subquery()
    rows = db.session.execute(
        select(User.email, count.label("passkeys"), User.last_seen_at).order_by(User.email)
    )
    return [
        {"email": r.email, "passkeys": r.passkeys, "last_seen_at": clock.iso(r.last_seen_at)}
        for r in rows
    ]
