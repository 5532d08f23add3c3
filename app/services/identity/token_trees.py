"""Token trees: the one place that revokes a token together with its descendants.

A refresh token's children are the refresh token that replaced it and the access
token minted with that replacement; the access token minted alongside a refresh
token records that refresh token as its parent. Revoking a node therefore
revokes everything minted from it, and nothing above it.
"""

from __future__ import annotations

from typing import cast

from sqlalchemy import CursorResult, select, update

from ...extensions import db
from ...models import Token
from .. import clock


def tree_ids(token_id: str):
    """A selectable of token_id and every descendant id (recursive on parent_id)."""
    tree = (
        select(Token.id).where(Token.id == token_id).cte("token_tree", recursive=True, nesting=True)
    )
    tree = tree.union_all(select(Token.id).where(Token.parent_id == tree.c.id))
    return select(tree.c.id)


def revoke_tree(token_id: str) -> int:
    """Revoke a token and all its descendants; returns how many were newly revoked."""
    result = cast(
        CursorResult,
        db.session.execute(
            update(Token)
            .where(Token.id.in_(tree_ids(token_id)), Token.revoked_at.is_(None))
            .values(revoked_at=clock.now())
            .execution_options(synchronize_session=False)
        ),
    )
    return result.rowcount


def revoke_family(family_id: str) -> int:
    """Revoke every token of a refresh family (reuse detected)."""
    result = cast(
        CursorResult,
        db.session.execute(
            update(Token)
            .where(Token.family_id == family_id, Token.revoked_at.is_(None))
            .values(revoked_at=clock.now())
            .execution_options(synchronize_session=False)
        ),
    )
    return result.rowcount
