"""AUTHORIZATION-CODE STATE MACHINE (docs/oauth.md "Authorization code with PKCE";
this table is the rule).

State    Trigger                          Condition                       Next
none     approve, `approve` true          full cookie session (still      issued (client used)
                                          live when the code is written),
                                          valid
none     approve, `approve` false                                         none (access_denied)
issued   token, authorization_code        code, client, redirect URI and  redeemed (pair issued)
                                          PKCE verifier match, < 60 s
issued   token with any mismatch, replay                                  killed
issued   60 seconds elapse                                                expired
issued   the user's password changes or                                   killed
         the user is removed (users.end_all_sessions_and_tokens)

Killing a code is deleting its row. Redemption deletes the row first and requires
exactly one deleted row, then checks it: whatever the outcome the code is gone, and of
two concurrent redemptions only the one whose DELETE removed the row can win. The
deletion commits together with the tokens, or alone (commit=True) on failure.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import timedelta
from typing import cast
from urllib.parse import urlencode

from flask import current_app
from sqlalchemy import CursorResult, delete, select

from ...extensions import db
from ...models import AuthorizationCode
from .. import clock, crypto
from ..identity import sessions
from .authorize import AuthorizationRequest
from .clients import check_resource, mark_used, require
from .errors import InvalidGrant, InvalidRequest
from .tokens import issue_pair

CODE_TTL = timedelta(seconds=60)
NOT_REDEEMABLE = "the authorization code is not redeemable"


def _with_query(uri: str, params: dict) -> str:
    params = {k: v for k, v in params.items() if v is not None}
    return uri + ("&" if "?" in uri else "?") + urlencode(params)


def _answer(uri: str, params: dict) -> str:
    """An authorization response: the parameters docs/openapi.yaml documents for
    /oauth/authorize plus `iss` (RFC 9207), so a client talking to several servers can
    tell which one answered (mix-up attacks)."""
    return _with_query(uri, {**params, "iss": current_app.config["API_ORIGIN"]})


def decide(request: AuthorizationRequest, *, user_id: int, session_id: str, approve: bool) -> str:
    """The human's answer; returns where the browser goes next (code or access_denied).

    An approval first holds its session row (sessions.hold): 401 if a password change
    ended the session since the request's session check, and a password change that
    comes later waits for this code to commit and then kills it.
    """
    if not approve:
        return _answer(request.redirect_uri, {"error": "access_denied", "state": request.state})
    sessions.hold(session_id)
    code = crypto.new_secret()
    now = clock.now()
    db.session.add(
        AuthorizationCode(
            id=crypto.digest(code),
            client_id=request.client_id,
            user_id=user_id,
            redirect_uri=request.redirect_uri,
            code_challenge=request.code_challenge,
            resource=request.resource,
            created_at=now,
            expires_at=now + CODE_TTL,
        )
    )
    mark_used(request.client_id)
    db.session.flush()
    return _answer(request.redirect_uri, {"code": code, "state": request.state})


def kill_all_for_user(user_id: int) -> None:
    """Kill every unredeemed code of the user (password change, reset, removal)."""
    db.session.execute(
        delete(AuthorizationCode)
        .where(AuthorizationCode.user_id == user_id)
        .execution_options(synchronize_session=False)
    )


def pkce_s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _take(code: str) -> AuthorizationCode | None:
    """Delete the code's row and return it, or None if it was not there (replay, race)."""
    code_id = crypto.digest(code)
    row = db.session.execute(
        select(AuthorizationCode).where(AuthorizationCode.id == code_id)
    ).scalar_one_or_none()
    if row is None:
        return None
    db.session.expunge(row)
    deleted = cast(
        CursorResult,
        db.session.execute(
            delete(AuthorizationCode)
            .where(AuthorizationCode.id == code_id)
            .execution_options(synchronize_session=False)
        ),
    ).rowcount
    return row if deleted == 1 else None


def redeem(form) -> dict:
    """grant_type=authorization_code: the code dies here whatever happens."""
    code = form.get("code")
    row = _take(code) if code else None
    killed = row is not None  # a refusal must still commit the deletion
    require(form, "code", "redirect_uri", "client_id", "code_verifier", commit=killed)
    try:
        check_resource(form.get("resource"), required=False)
    except InvalidRequest as err:
        err.commit = killed
        raise
    if row is None or row.expires_at <= clock.now():
        raise InvalidGrant(NOT_REDEEMABLE, commit=killed)
    if not (
        crypto.same(row.client_id, form["client_id"])
        and crypto.same(row.redirect_uri, form["redirect_uri"])
        and crypto.same(row.code_challenge, pkce_s256(form["code_verifier"]))
    ):
        raise InvalidGrant(NOT_REDEEMABLE, commit=True)
    return issue_pair(row.user_id, row.client_id)
