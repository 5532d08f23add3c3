"""Accounts: listing and creation."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from ...extensions import db
from ...models import Account
from ..errors import BadRequest
from . import audit, validate

NAME_MAX = 200


def as_dict(account: Account) -> dict:
    return {"id": account.id, "name": account.name, "kind": account.kind}


def list_accounts() -> list[dict]:
    """Every account, ordered by kind then name (SPEC)."""
    rows = db.session.execute(
        select(Account.id, Account.name, Account.kind).order_by(Account.kind, Account.name)
    )
    return [{"id": r.id, "name": r.name, "kind": r.kind} for r in rows]


def create_account(name, kind) -> dict:
    """Create an account; the name is trimmed, non-empty and unique."""
    name = validate.text("name", name, max_length=NAME_MAX)
    kind = validate.kind(kind)
    exists = db.session.execute(select(Account.id).where(Account.name == name)).first()
    if exists:
        raise BadRequest(f"an account named '{name}' already exists")
    account = Account(name=name, kind=kind)
    db.session.add(account)
    try:
        with db.session.begin_nested():
            db.session.flush()
    except IntegrityError as exc:  # lost a race with a concurrent create of the same name
        raise BadRequest(f"an account named '{name}' already exists") from exc
    created = as_dict(account)
    audit.record("account.created", {"account": {**created, "archived": False}})
    return created
