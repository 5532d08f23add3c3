"""The credential layer: who is calling, and how.

resolve() turns the request's credentials into a Principal or None. A bearer
token is looked up by the SHA-256 digest of what was presented (never compared
raw); it must be live (not expired, retired or revoked), of kind 'access', and
bound to this API's canonical origin. Cookie sessions are resolved by
services.sessions (the sign-in issue) through the same Principal.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import and_, bindparam, func, or_, select, update

from ... import store
from ...extensions import db
from ...models import OAuthClient, Token, User
from ...models.types import UTCDateTime
from .. import clock, crypto
from ..errors import BadRequestError, NotFoundError
from . import sessions, token_trees
from .users import get_user

# last_used_at is refreshed at most this often, so reads do not write on every request.
LAST_USED_RESOLUTION = timedelta(seconds=60)
ADMIN_CLIENT_ID = "svc-cli"


@dataclass(frozen=True)
class Principal:
    user_id: int
    email: str
    via: str  # "session" | "bearer"
    mfa_complete: bool
    session_id: str | None = None  # digest of the cookie session, when via == "session"
    token_id: str | None = None  # digest of the bearer token, when via == "bearer"
    # The bearer token's last use is older than LAST_USED_RESOLUTION: record_use() is due.
    stale_use: bool = False
    # The OAuth client the bearer token was issued to (svc-cli for a minted token).
    client_id: str | None = None
    client_name: str | None = None

    @property
    def full(self) -> bool:
        return self.via == "bearer" or self.mfa_complete


def bearer_from_header(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


# Built once: a statement object made per request costs more Python than the query
# (SQLAlchemy then only looks the compiled form up in its cache).
_BEARER_LOOKUP = (
    select(
        Token.id,
        Token.user_id,
        Token.expires_at,
        Token.last_used_at,
        Token.audience,
        User.email,
        Token.client_id,
        OAuthClient.name.label("client_name"),
    )
    .join(User, User.id == Token.user_id)
    .join(OAuthClient, OAuthClient.id == Token.client_id)
    .where(
        Token.id == bindparam("digest"),
        Token.kind == "access",
        Token.revoked_at.is_(None),
        Token.retired_at.is_(None),
    )
)


def resolve_bearer(token: str, audience: str) -> Principal | None:
    """The bearer token's Principal, or None (unknown, not live, or another audience).

    One primary-key lookup per request, run as a Core statement on the session's
    connection (the ORM's execution path cost a third of a posting's Python time,
    docs/performance.md "The write path, issue 30"); never cached across requests, so
    a revocation counts from the very next request in every worker.
    """
    now = clock.now()
    connection = db.session.connection()
    # A read that needs no transaction: on PostgreSQL it runs as one of its own, so the
    # unit's BEGIN goes with the view's first statement (or never, for a sole write).
    with store.on_its_own(connection):
        row = connection.execute(_BEARER_LOOKUP, {"digest": crypto.digest(token)}).first()
    if row is None:
        return None
    token_id, user_id, expires_at, last_used_at, token_audience, email, client_id, client = row
    if expires_at <= now or not crypto.same(token_audience, audience):
        return None
    stale = last_used_at is None or now - last_used_at >= LAST_USED_RESOLUTION
    return Principal(
        user_id=user_id,
        email=email,
        via="bearer",
        mfa_complete=True,
        token_id=token_id,
        stale_use=stale,
        client_id=client_id,
        client_name=client,
    )


def record_use(principal: Principal) -> None:
    """Last-use bookkeeping for a bearer token (and its user), when stale_use says it is due.

    Kept out of resolve() so the caller can run it as a unit of work of its own that
    starts as a writer: on SQLite a read transaction that later tries to write fails
    at once with "database is locked" when another writer got in first.
    """
    now = clock.now()
    connection = db.session.connection()
    connection.execute(_TOKEN_USED, {"used_id": principal.token_id, "used_at": now})
    connection.execute(_USER_SEEN, {"seen_id": principal.user_id, "seen_at": now})


# Built once, as the lookup.
_TOKEN_USED = (
    update(Token)
    .where(Token.id == bindparam("used_id"))
    .values(last_used_at=bindparam("used_at", type_=UTCDateTime()))
)
_USER_SEEN = (
    update(User)
    .where(User.id == bindparam("seen_id"))
    .values(last_seen_at=bindparam("seen_at", type_=UTCDateTime()))
)


def resolve(*, cookie: str | None, authorization: str | None, audience: str) -> Principal | None:
    """The caller, from an Authorization header or else the session cookie.

    A presented Authorization header is authoritative: an invalid bearer token does
    not fall back to the cookie.
    """
    if authorization is not None:
        token = bearer_from_header(authorization)
        return resolve_bearer(token, audience) if token else None
    if cookie:
        return resolve_session(cookie)
    return None


def resolve_session(cookie: str) -> Principal | None:
    live = sessions.lookup(cookie)
    if live is None:
        return None
    return Principal(
        user_id=live.user_id,
        email=live.email,
        via="session",
        mfa_complete=live.mfa_complete,
        session_id=live.id,
    )


def mint_token(email, *, label: str | None, days: int, audience: str) -> str:
    """An administratively minted access token for scripts and clients.

    docs/auth.md "Administration".
    """
    user = get_user(email)
    if days < 1:
        raise BadRequestError("--days must be at least 1")
    token = crypto.new_token()
    now = clock.now()
    db.session.add(
        Token(
            id=crypto.digest(token),
            user_id=user.id,
            client_id=ADMIN_CLIENT_ID,
            kind="access",
            label=label or "cli",
            audience=audience,
            created_at=now,
            expires_at=now + timedelta(days=days),
        )
    )
    db.session.flush()
    return token


def _live(now):
    return and_(Token.revoked_at.is_(None), Token.retired_at.is_(None), Token.expires_at > now)


def list_connections(user_id: int) -> list[dict]:
    """GET /auth/tokens: one Connection row per live credential of the user.

    A connection is an administratively minted token (kind access, no parent) or
    the single live refresh token of an OAuth grant; the access tokens an OAuth
    grant mints are not connections of their own. A grant's last use is the latest
    use of its refresh token or of an access token minted with it.
    """
    now = clock.now()
    rows = db.session.execute(
        select(Token, OAuthClient.name)
        .join(OAuthClient, OAuthClient.id == Token.client_id)
        .where(
            Token.user_id == user_id,
            _live(now),
            or_(and_(Token.kind == "access", Token.parent_id.is_(None)), Token.kind == "refresh"),
        )
        .order_by(Token.created_at, Token.id)
    ).all()
    refresh_ids = [t.id for t, _ in rows if t.kind == "refresh"]
    child_use = {}
    if refresh_ids:
        child_use = dict(
            db.session.execute(
                select(Token.parent_id, func.max(Token.last_used_at))
                .where(Token.parent_id.in_(refresh_ids), Token.kind == "access")
                .group_by(Token.parent_id)
            ).all()
        )
    # A grant began when its first refresh token was issued (rotations keep family_id).
    families = {t.family_id for t, _ in rows if t.kind == "refresh" and t.family_id}
    began = {}
    if families:
        began = dict(
            db.session.execute(
                select(Token.id, Token.created_at).where(Token.id.in_(list(families)))
            ).all()
        )
    result = []
    for token, client_name in rows:
        used = [u for u in (token.last_used_at, child_use.get(token.id)) if u is not None]
        created = began.get(token.family_id or "") or token.created_at
        result.append(
            {
                "id": token.id,
                "client_id": token.client_id,
                "client_name": client_name,
                "kind": token.kind,
                "label": token.label,
                "last_used_at": clock.iso(max(used)) if used else None,
                "expires_at": clock.iso(token.expires_at),
                "created_at": clock.iso(created),
                "source": _source(token),
            }
        )
    return result


# Which kind of client holds a connection, in the person's words: a minted token is a
# script's; an OAuth grant is a device's when approved with a device code, else an app's.
DEVICE_GRANT_LABEL = "device sign-in"  # oauth.tokens.DEVICE_LABEL (identity may not import oauth)


def _source(token: Token) -> str:
    if token.kind == "access":
        return "script"
    return "device" if token.label == DEVICE_GRANT_LABEL else "app"


def revoke_connection(user_id: int, token_id: str) -> None:
    """DELETE /auth/tokens/{id}: revoke a live token of the caller and all its descendants.

    404 when the id names nothing live that belongs to the caller (unknown, foreign,
    revoked, retired or expired), with one sentence for all of them.
    """
    found = db.session.execute(
        select(Token.id).where(Token.id == token_id, Token.user_id == user_id, _live(clock.now()))
    ).first()
    if found is None:
        raise NotFoundError("no such live token")
    token_trees.revoke_tree(token_id)
