"""A user's enrolled passkeys: count, list, delete (never the last one: 409,
docs/auth.md "Passkeys")."""

from __future__ import annotations

from sqlalchemy import delete, func, select

from ...extensions import db
from ...models import Passkey, User
from .. import clock
from ..errors import ConflictError, NotFoundError


def count_for(user_id: int) -> int:
    return db.session.execute(
        select(func.count(Passkey.id)).where(Passkey.user_id == user_id)
    ).scalar_one()


def for_user(user_id: int) -> list[Passkey]:
    return list(
        db.session.execute(
            select(Passkey).where(Passkey.user_id == user_id).order_by(Passkey.id)
        ).scalars()
    )


def lock_user(user_id: int) -> None:
    """Serialise credential changes of one user (PostgreSQL row lock; SQLite writers
    are already serialised by BEGIN IMMEDIATE)."""
    db.session.execute(select(User.id).where(User.id == user_id).with_for_update())


def list_passkeys(user_id: int) -> list[dict]:
    """GET /auth/passkeys: `{id, name, created_at, last_used_at}` per passkey."""
    return [
        {
            "id": str(p.id),
            "name": p.name,
            "created_at": clock.iso(p.created_at),
            "last_used_at": clock.iso(p.last_used_at),
        }
        for p in for_user(user_id)
    ]


def delete_passkey(user_id: int, passkey_id: str) -> None:
    """Delete one of the caller's passkeys: 404 unknown or foreign, 409 the last one."""
    if not passkey_id.isascii() or not passkey_id.isdigit() or len(passkey_id) > 18:
        raise NotFoundError("no such passkey")
    lock_user(user_id)
    owned = [p.id for p in for_user(user_id)]
    if int(passkey_id) not in owned:
        raise NotFoundError("no such passkey")
    if len(owned) == 1:
        raise ConflictError("this is your last passkey; enrol another before deleting it")
    db.session.execute(
        delete(Passkey).where(Passkey.id == int(passkey_id), Passkey.user_id == user_id)
    )
