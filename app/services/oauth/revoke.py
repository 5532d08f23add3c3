"""Token revocation (RFC 7009). Always "fine" to the caller: it learns nothing.

A refresh token is revoked with its whole subtree (the access token minted with it,
and everything chained after it); an access token alone, leaving its refresh token.
With `client_id` given, a token of another client is left untouched.
"""

from __future__ import annotations

from sqlalchemy import select, update

from ...extensions import db
from ...models import Token
from .. import clock, crypto
from ..identity import token_trees
from .errors import InvalidRequest


def revoke(form) -> None:
    value = form.get("token")
    if not value:
        raise InvalidRequest("token is required")
    row = db.session.execute(
        select(Token.id, Token.kind, Token.client_id).where(Token.id == crypto.digest(value))
    ).first()
    if row is None:
        return
    client_id = form.get("client_id")
    if client_id and not crypto.same(client_id, row.client_id):
        return
    if row.kind == "refresh":
        token_trees.revoke_tree(row.id)
    else:
        db.session.execute(
            update(Token)
            .where(Token.id == row.id, Token.revoked_at.is_(None))
            .values(revoked_at=clock.now())
            .execution_options(synchronize_session=False)
        )
