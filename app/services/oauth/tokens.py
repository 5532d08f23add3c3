"""Token issuance for every grant: one access + refresh pair, stored as digests only.

Family tree (see models/oauth.py): the refresh token's parent is the refresh token it
replaces (none for a fresh grant); the access token's parent is the refresh token
issued with it, so revoking a refresh token takes its access token along. `family_id`
is the digest of the grant's first refresh token.
"""

from __future__ import annotations

from datetime import timedelta

from flask import current_app

from ...extensions import db
from ...models import Token
from .. import clock, crypto

ACCESS_TTL = timedelta(hours=1)
REFRESH_TTL = timedelta(days=60)
# The label of a grant approved through the device flow (RFC 8628); a grant's
# rotations keep the label, so the connections list can say "device".
DEVICE_LABEL = "device sign-in"


def issue_pair(user_id: int, client_id: str, parent: Token | None = None, label: str = "") -> dict:
    """Mint access (1 h) + refresh (60 d), audience = API_ORIGIN; returns the token response."""
    now = clock.now()
    if parent is not None:
        label = parent.label
    audience = current_app.config["API_ORIGIN"]
    refresh, access = crypto.new_token(), crypto.new_token()
    refresh_id = crypto.digest(refresh)
    family = parent.family_id if parent is not None else refresh_id
    common = {
        "user_id": user_id,
        "client_id": client_id,
        "audience": audience,
        "family_id": family,
        "created_at": now,
        "label": label,
    }
    db.session.add(
        Token(
            id=refresh_id,
            kind="refresh",
            expires_at=now + REFRESH_TTL,
            parent_id=parent.id if parent is not None else None,
            **common,
        )
    )
    db.session.add(
        Token(
            id=crypto.digest(access),
            kind="access",
            expires_at=now + ACCESS_TTL,
            parent_id=refresh_id,
            **common,
        )
    )
    db.session.flush()
    return {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": int(ACCESS_TTL.total_seconds()),
        "refresh_token": refresh,
    }
