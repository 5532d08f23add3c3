"""REFRESH-FAMILY STATE MACHINE (docs/oauth.md "Tokens"; this table is the rule).

State    Trigger                       Condition                  Next            Also
live     token, refresh_token          valid, client matches      retired         new pair chained
retired  presented again               within 10 s of retirement  retired         invalid_grant;
                                                                                  grant untouched
retired  presented again               more than 10 s after       family revoked  every token of it
live     revoke, DELETE /auth/tokens                              revoked         its descendants

Rotation is a conditional UPDATE (`retired_at IS NULL AND revoked_at IS NULL`) that
must touch exactly one row; of two concurrent refreshes only that one mints a pair.
"""

from __future__ import annotations

from datetime import timedelta
from typing import cast

from sqlalchemy import CursorResult, select, update

from ...extensions import db
from ...models import Token
from .. import clock, crypto
from ..identity import token_trees
from .clients import check_resource, require
from .errors import InvalidGrant
from .tokens import issue_pair

REUSE_GRACE = timedelta(seconds=10)
NOT_REDEEMABLE = "the refresh token is not redeemable"


def rotate(form) -> dict:
    """grant_type=refresh_token: retire the presented token and issue its successor pair."""
    require(form, "refresh_token", "client_id")
    check_resource(form.get("resource"), required=False)
    now = clock.now()
    token = db.session.execute(
        select(Token).where(
            Token.id == crypto.digest(form["refresh_token"]), Token.kind == "refresh"
        )
    ).scalar_one_or_none()
    if (
        token is None
        or token.revoked_at is not None
        or not crypto.same(token.client_id, form["client_id"])
        or token.expires_at <= now
    ):
        raise InvalidGrant(NOT_REDEEMABLE)
    if token.retired_at is not None:
        if now - token.retired_at > REUSE_GRACE:
            # Reuse after the grace: assume theft, end the whole grant.
            assert token.family_id is not None  # every refresh token belongs to a family
            token_trees.revoke_family(token.family_id)
            raise InvalidGrant(NOT_REDEEMABLE, commit=True)
        raise InvalidGrant(NOT_REDEEMABLE)
    retired = cast(
        CursorResult,
        db.session.execute(
            update(Token)
            .where(Token.id == token.id, Token.retired_at.is_(None), Token.revoked_at.is_(None))
            .values(retired_at=now)
            .execution_options(synchronize_session=False)
        ),
    ).rowcount
    if retired != 1:  # a concurrent refresh (or revocation) got there first
        raise InvalidGrant(NOT_REDEEMABLE)
    return issue_pair(token.user_id, token.client_id, parent=token)
