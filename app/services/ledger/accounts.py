"""Accounts: listing, creation, rename and archive.

Names are unique after normalisation (name_key): trimmed, case-folded, inner runs of
spaces collapsed, so "Cash box" and "cash  box" are the same name. The database holds
the key in a unique column, so two racing requests cannot both win.
An archived account refuses new entries (postable.refuse_at_post) and keeps
its history and its report lines.
"""

from __future__ import annotations

from sqlalchemy import bindparam, select, text, update
from sqlalchemy.exc import IntegrityError

from ... import store
from ...extensions import db
from ...models import Account
from ...store import dialect
from ..errors import BadRequestError, NotFoundError
from . import audit, validate

NAME_MAX = 200


def name_key(name: str) -> str:
    """The form two names are compared in: trimmed, case-folded, inner spaces collapsed."""
    return " ".join(name.casefold().split())


def as_dict(account: Account) -> dict:
    return {
        "id": account.id,
        "name": account.name,
        "kind": account.kind,
        "archived": bool(account.archived),
    }


def list_accounts() -> list[dict]:
    """Every account, archived ones included, ordered by kind then name (docs/openapi.yaml)."""
    rows = db.session.execute(
        select(Account.id, Account.name, Account.kind, Account.archived).order_by(
            Account.kind, Account.name
        )
    )
    return [
        {"id": r.id, "name": r.name, "kind": r.kind, "archived": bool(r.archived)} for r in rows
    ]


def _name_taken(name: str) -> BadRequestError:
    return BadRequestError(f"an account named '{name}' already exists")


def name_holder(model, key: str, except_id: int | None = None) -> str | None:
    """The stored name of model's row (an account, budget or rule: each has name and
    name_key) whose name_key is key, leaving out row except_id; None when the name is free."""
    query = select(model.name).where(model.name_key == key)
    if except_id is not None:
        query = query.where(model.id != except_id)
    return db.session.execute(query).scalar()


def _refuse_taken(key: str, name: str, except_id: int | None = None) -> None:
    existing = name_holder(Account, key, except_id)
    if existing is not None:
        raise _name_taken(existing)


def create_account(name, kind) -> dict:
    """Create an account; the name is trimmed, non-empty and unique after normalisation."""
    name = validate.text("name", name, max_length=NAME_MAX)
    kind = validate.kind(kind)
    key = name_key(name)
    connection = db.session.connection()
    insert_account = _INSERT_ACCOUNT[dialect.name(connection)]
    account_id = connection.execute(
        insert_account, {"new_name": name, "new_kind": kind, "new_key": key}
    ).scalar()
    if account_id is None:  # the name is taken (perhaps by a concurrent request)
        existing = connection.execute(_NAME_TAKEN, {"taken_key": key}).scalar()
        raise _name_taken(existing if existing is not None else name)
    created = {"id": account_id, "name": name, "kind": kind, "archived": False}
    audit.record("account.created", {"account": created})
    return created


# One statement per new account, built once: the insert does nothing when the name (or
# its normalised key) is taken, so neither a look-up before it nor a savepoint around
# it is needed, and a request racing another for the same name waits for it and then
# finds the name taken (docs/performance.md, "The write path, issue 30").
_INSERT_ACCOUNT = dialect.per_dialect(
    lambda insert: (
        insert(Account)
        .values(
            name=bindparam("new_name"),
            kind=bindparam("new_kind"),
            name_key=bindparam("new_key"),
            archived=False,
        )
        .on_conflict_do_nothing()
        .returning(Account.id)
    )
)
_NAME_TAKEN = select(Account.name).where(Account.name_key == bindparam("taken_key"))


def get_account(account_id: int) -> Account:
    """The account, or NotFoundError."""
    account = validate.get_row(Account, account_id)
    if account is None:
        raise NotFoundError("no such account")
    return account


# The fields as_dict gives, read as one fixed statement (store.FixedStatement): a read
# that needs the account only to show it (the register page) builds no ORM object.
_AS_DICT = store.FixedStatement(
    text("SELECT id, name, kind, archived FROM accounts WHERE id = :account_id")
)


def account_dict(account_id: int) -> dict:
    """as_dict of the account, or NotFoundError (as get_account)."""
    row = None
    if validate.id_in_range(account_id):
        row = _AS_DICT.execute(db.session.connection(), {"account_id": account_id}).first()
    if row is None:
        raise NotFoundError("no such account")
    return as_dict(row)


def lock_account(account_id: int) -> Account:
    """The account, its row locked until the unit ends (PostgreSQL; SQLite has one writer).

    FOR NO KEY UPDATE: postings (whose foreign-key check takes KEY SHARE) go on; another
    clearing, reconciliation or deletion touching the account waits.
    """
    get_account(account_id)
    return db.session.execute(
        select(Account)
        .where(Account.id == account_id)
        .with_for_update(key_share=True)
        .execution_options(populate_existing=True)
    ).scalar_one()


def update_account(account_id: int, body: dict) -> dict:
    """PUT /accounts/{id}: rename and/or (un)archive; a field left out keeps its value."""
    account = get_account(account_id)
    if "kind" in body and body["kind"] != account.kind:
        if body["kind"] is None or isinstance(body["kind"], str):
            raise BadRequestError("an account's kind cannot change")
        raise BadRequestError("'kind' must be a string")
    name = account.name
    if "name" in body:
        name = validate.text("name", body["name"], max_length=NAME_MAX)
    archived = bool(account.archived)
    if "archived" in body:
        archived = validate.boolean("archived", body["archived"])
    previous_name = account.name
    renamed = name != account.name
    archive_changed = archived != bool(account.archived)
    values: dict = {}
    if renamed:
        key = name_key(name)
        _refuse_taken(key, name, except_id=account.id)
        values.update(name=name, name_key=key)
    if archive_changed:
        values["archived"] = archived
    if values:
        try:
            with db.session.begin_nested():
                db.session.execute(update(Account).where(Account.id == account.id).values(**values))
        except IntegrityError as exc:  # lost a race with a concurrent write of the same name
            raise _name_taken(name) from exc
        db.session.refresh(account)
    shown = as_dict(account)
    if renamed:
        audit.record("account.renamed", {"account": shown, "previous_name": previous_name})
    if archive_changed:
        audit.record("account.archived" if archived else "account.unarchived", {"account": shown})
    return shown
