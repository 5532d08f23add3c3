"""HTTP adapters for sign-in, sessions, passkeys and connections (bp "auth").

Tiers (see support.py): login and logout are open; the four WebAuthn routes take
a cookie session at any stage; everything else is full tier, and the password
change and the two deletes refuse bearer tokens (session only).
"""

from flask import Blueprint, Response, current_app, jsonify, request

from .. import store
from ..services.errors import UnsupportedMediaTypeError
from ..services.identity import credentials, passkeys, sessions, signin, webauthn
from .boundary import steps
from .support import SESSION_COOKIE, half_session, json_body, open_route, principal, session_only

bp = Blueprint("auth", __name__, url_prefix="/auth")


def _set_session_cookie(response, cookie: str, max_age: int):
    response.set_cookie(
        SESSION_COOKIE,
        cookie,
        max_age=max_age,
        path="/",
        secure=current_app.config["API_ORIGIN"].startswith("https://"),
        httponly=True,
        samesite="Lax",
    )
    return response


def _clear_session_cookie(response):
    response.delete_cookie(
        SESSION_COOKIE,
        path="/",
        secure=current_app.config["API_ORIGIN"].startswith("https://"),
        httponly=True,
        samesite="Lax",
    )
    return response


def _full_session_seconds() -> int:
    return int(sessions.full_ttl().total_seconds())


def _no_form_body() -> None:
    """Logout may carry nothing or JSON; anything else is refused (CSRF rule). Every
    other body-less cookie write gets the same answer from support.refuse_cross_site.

    A declared non-JSON type is refused even with an empty body: an empty HTML form
    posts `application/x-www-form-urlencoded` with Content-Length 0.
    """
    if (request.content_length or request.mimetype) and not request.is_json:
        raise UnsupportedMediaTypeError(
            "the request body must be JSON (Content-Type: application/json)"
        )


def _options(options_json: str) -> Response:
    response = Response(options_json, mimetype="application/json")
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.post("/login")
@open_route
@steps
def login():
    # Two units: the attempt is counted (or refused, 429) and committed before the
    # password is checked, so argon2 runs with no transaction open and no SQLite writer
    # lock held; then the check and the half-session. Each is retried on its own.
    attempt = store.run_unit(signin.admit_login, json_body())
    result = store.run_unit(
        signin.complete_login, attempt, replacing=request.cookies.get(SESSION_COOKIE)
    )
    response = jsonify({"has_passkeys": result.has_passkeys, "mfa_complete": False})
    return _set_session_cookie(
        response, result.cookie, int(sessions.HALF_SESSION_TTL.total_seconds())
    )


@bp.post("/logout")
@open_route
def logout():
    _no_form_body()
    sessions.end_cookie(request.cookies.get(SESSION_COOKIE))
    return _clear_session_cookie(Response(status=204))


@bp.get("/me")
def me():
    who = principal()
    return jsonify(
        {
            "email": who.email,
            "mfa_complete": who.mfa_complete,
            "has_passkeys": passkeys.count_for(who.user_id) > 0,
            "auth": who.via,
        }
    )


@bp.post("/password")
@session_only()
@steps
def change_password():
    # Two units, as in login: counted against the sign-in throttle and committed before
    # argon2; then the check and the change.
    change = store.run_unit(signin.admit_password_change, principal().user_id, json_body())
    store.run_unit(signin.complete_password_change, change)
    return _clear_session_cookie(Response(status=204))


@bp.post("/webauthn/register/begin")
@half_session
def register_begin():
    options = webauthn.register_begin(principal())
    return _options(options)


@bp.post("/webauthn/register/finish")
@half_session
def register_finish():
    cookie = webauthn.register_finish(principal(), json_body())
    return _set_session_cookie(jsonify({"mfa_complete": True}), cookie, _full_session_seconds())


@bp.post("/webauthn/auth/begin")
@half_session
def auth_begin():
    options = webauthn.auth_begin(principal())
    return _options(options)


@bp.post("/webauthn/auth/finish")
@half_session
def auth_finish():
    cookie = webauthn.auth_finish(principal(), json_body())
    return _set_session_cookie(jsonify({"mfa_complete": True}), cookie, _full_session_seconds())


@bp.get("/passkeys")
def list_passkeys():
    return jsonify(passkeys.list_passkeys(principal().user_id))


@bp.delete("/passkeys/<passkey_id>")
@session_only()
def delete_passkey(passkey_id: str):
    passkeys.delete_passkey(principal().user_id, passkey_id)
    return Response(status=204)


@bp.get("/tokens")
def list_tokens():
    return jsonify(credentials.list_connections(principal().user_id))


@bp.delete("/tokens/<token_id>")
@session_only()
def revoke_token(token_id: str):
    credentials.revoke_connection(principal().user_id, token_id)
    return Response(status=204)
