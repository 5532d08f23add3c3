"""HTTP adapters for the OAuth authorization server (blueprint "oauth").

Every response of this blueprint carries `Cache-Control: no-store`, except the 303 of
GET /oauth/authorize, which carries only its Location. The plain-text rejections that
docs/oauth.md "Errors" places "before the handlers" (a missing query parameter, a token
request with the wrong content type or no grant_type) are answered here and change nothing.

The four requests that name a client by its id (authorize, client_info, approve,
device_authorization) first make sure a metadata-document client's stored copy is
fresh (fresh_document): the fetch runs between units of work, never inside one, and
what it found is committed only with a request that succeeds (each of the four
commits its unit at the end), so a refused request stores no client and no copy.
"""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify, request

from .. import store
from ..services.oauth import authorize, clients, codes, device, metadata_documents, refresh, revoke
from ..services.oauth.errors import (
    InvalidClient,
    InvalidRequest,
    UnsupportedGrantType,
    session_only_refusal,
)
from ..services.oauth.metadata import DEVICE_GRANT
from .support import json_body, open_route, principal, session_only, writes

bp = Blueprint("oauth", __name__, url_prefix="/oauth")

FORM = "application/x-www-form-urlencoded"
GRANTS = {
    "authorization_code": codes.redeem,
    "refresh_token": refresh.rotate,
    DEVICE_GRANT: device.poll,
}


def plain(message: str, status: int) -> Response:
    return Response(message + "\n", status=status, mimetype="text/plain")


def form_or_415() -> Response | None:
    if request.mimetype != FORM:
        return plain(f"Unsupported Media Type: expected {FORM}", 415)
    return None


def fresh_document(client_id) -> None:
    """A client id naming a metadata document whose stored copy is missing or stale:
    fetch it with no database transaction open (the unit begun by the credential
    lookup, which wrote nothing, is ended first; a 5-second fetch must not hold the
    SQLite writer lock or a PostgreSQL snapshot). A usable document is written into
    the handler's unit, which begins as a writer and commits only if the request
    succeeds; a failed fetch is stored in a unit of its own (the copy dropped, the
    failure remembered for 60 s) and, like a fetch that found no free slot, answers
    401 invalid_client at once."""
    if not metadata_documents.is_document_url(client_id):
        return
    if not metadata_documents.needs_fetch(client_id):
        return
    store.commit()
    outcome = metadata_documents.fetch(client_id)
    if isinstance(outcome, metadata_documents.Fetched):
        store.declare(True)
        metadata_documents.keep(client_id, outcome)
        return
    if isinstance(outcome, metadata_documents.Unusable):
        with store.writing():
            store.run_unit(metadata_documents.forget, client_id)
    raise InvalidClient(metadata_documents.UNKNOWN)


def _session_id() -> str:
    """The signed-in session's id (session_only routes: a bearer token never gets here)."""
    session_id = principal().session_id
    assert session_id is not None
    return session_id


@bp.after_request
def no_store(response: Response) -> Response:
    if response.status_code != 303:
        response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/authorize")
@open_route
def authorize_redirect():
    missing = authorize.missing_params(request.args)
    if missing:
        return plain("Failed to deserialize query string: missing field `" + missing[0] + "`", 400)
    if not authorize.raw_query_is_printable(request.query_string):
        raise InvalidRequest("the query string may contain only printable ASCII characters")
    fresh_document(request.args.get("client_id"))
    authorize.validate(request.args.to_dict())
    query = request.query_string.decode("ascii")
    response = Response(status=303)
    response.headers["Location"] = f"{current_app.config['WEB_ORIGIN']}/authorize?{query}"
    return response


@bp.get("/client_info")
def client_info():
    client_id = request.args.get("client_id")
    if not client_id:
        raise InvalidRequest("client_id is required")
    fresh_document(client_id)
    info = clients.client_info(clients.get_client(client_id))
    return jsonify(info)


@bp.post("/authorize/approve")
@session_only(refusal=session_only_refusal)
def approve():
    body = json_body()
    decision = body.get("approve")
    fresh_document(body.get("client_id"))
    auth_request = authorize.validate(body, lock=True)
    if not isinstance(decision, bool):
        raise InvalidRequest("approve must be true or false")
    me = principal()
    redirect = codes.decide(
        auth_request, user_id=me.user_id, session_id=_session_id(), approve=decision
    )
    return jsonify({"redirect": redirect})


@bp.post("/token")
@open_route
def token():
    refused = form_or_415()
    if refused:
        return refused
    grant_type = request.form.get("grant_type")
    if grant_type is None:
        return plain("Failed to deserialize form body: missing field `grant_type`", 422)
    grant = GRANTS.get(grant_type)
    if grant is None:
        raise UnsupportedGrantType(f"grant_type {grant_type!r} is not supported")
    result = grant(request.form)
    return jsonify(result)


@bp.post("/device_authorization")
@open_route
def device_authorization():
    refused = form_or_415()
    if refused:
        return refused
    # remote_addr is the caller's address after ProxyFix (TRUSTED_PROXIES), if set up.
    device.check_rate(request.form.get("client_id"), request.remote_addr)  # before a fetch
    fresh_document(request.form.get("client_id"))
    result = device.start(request.form, address=request.remote_addr)
    return jsonify(result)


@bp.get("/device_info")
@writes  # a miss is counted against the session
@session_only(refusal=session_only_refusal)
def device_info():
    result = device.info(request.args.get("user_code"), session_id=_session_id())
    return jsonify(result)


@bp.post("/device/approve")
@session_only(refusal=session_only_refusal)
def device_approve():
    body = json_body()
    me = principal()
    device.decide(
        body.get("user_code"), body.get("approve"), session_id=_session_id(), user_id=me.user_id
    )
    return "", 204


@bp.post("/register")
@open_route
def register():
    body = json_body()
    result = clients.register(body)
    return jsonify(result), 201


@bp.post("/revoke")
@open_route
def revoke_token():
    refused = form_or_415()
    if refused:
        return refused
    revoke.revoke(request.form)
    return "", 200
