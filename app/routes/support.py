"""Shared plumbing for the HTTP adapters: access tiers, body parsing, the principal, the
once-per-Idempotency-Key answer of a creating POST (created_once).

Access is default-deny: a view is full tier (bearer token or full session)
unless it is marked @open_route or @half_session. @session_only additionally
refuses bearer tokens (credential-issuing and credential-destroying routes).
"""

from __future__ import annotations

from functools import wraps

from flask import current_app, g, jsonify, request

from .. import store
from ..json_provider import BodyNotJSON, parse_body
from ..services.errors import (
    BadRequestError,
    ForbiddenError,
    UnauthenticatedError,
    UnsupportedMediaTypeError,
)
from ..services.identity import credentials
from ..services.ledger import audit, idempotency

SESSION_COOKIE = "svc_session"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def open_route(view):
    view._tier = "open"
    return view


def half_session(view):
    view._tier = "half"
    return view


def writes(view):
    """Mark a safe-method (GET) view that writes: its unit of work begins as a writer.

    load_principal sets the write intent before the unit's first statement, so on
    SQLite it begins with BEGIN IMMEDIATE; set inside the view it would come after
    the credential lookup had begun a read transaction, whose later upgrade SQLite
    refuses ("database is locked") when another writer committed meanwhile.
    """
    view._writes = True
    return view


def reads(view):
    """Mark an unsafe-method (POST) view whose unit begins as a reader.

    POST /mcp: the credential lookup reads, and each tool then runs in a unit of its
    own with the intent the tool declares (mcp/jsonrpc.py run_tool).
    """
    view._writes = False
    return view


def checks_origin(view):
    """Mark a view that refuses a foreign `Origin` (403) before any credential counts.

    POST /mcp: the MCP transport requires servers to validate Origin against DNS
    rebinding. A request without Origin (scripts, SDK clients) is unaffected; one whose
    Origin is neither WEB_ORIGIN nor API_ORIGIN is 403 `{error}`, whatever it carries.
    """
    view._checks_origin = True
    return view


def _foreign_origin(origin: str | None) -> bool:
    if origin is None:
        return False
    ours = {current_app.config[name].rstrip("/").lower() for name in ("WEB_ORIGIN", "API_ORIGIN")}
    return origin.rstrip("/").lower() not in ours


MULTIPART = "multipart/form-data"


def refuse_cross_site(method: str) -> None:
    """The one rule for every write the session cookie authenticates, whatever the route.

    A browser attaches the cookie to a request from any page of the same site (another
    port, a sibling subdomain), and sends a form (urlencoded, multipart or text/plain)
    or a body-less POST without asking first. So a cookie write (any method but GET,
    HEAD, OPTIONS) is refused before its view runs, nothing changed:
    - whose Origin is present and is neither WEB_ORIGIN nor API_ORIGIN: 403 (every
      route);
    - on a route that is not open: multipart/form-data (an upload) without Origin: 403
      (the web app's fetch always sends it); any other declared content type than
      JSON: 415, as a JSON route answers a form, body-less routes (an approval, a
      delete) included.
    On an open route the cookie authorizes nothing (the OAuth form endpoints read forms
    for reasons of their own; logout refuses a form itself). A bearer token cannot be
    attached by a foreign page, so none of this applies to it (docs/auth.md,
    "Cross-site requests").
    """
    if method in _SAFE_METHODS:
        return
    origin = request.headers.get("Origin")
    if _foreign_origin(origin):
        raise ForbiddenError("a signed-in change from a page of another origin is not allowed")
    view = current_app.view_functions.get(request.endpoint) if request.endpoint else None
    if getattr(view, "_tier", "full") == "open":
        return  # the cookie authorizes nothing there; logout checks its body itself
    if request.mimetype == MULTIPART:
        if origin is None:
            raise ForbiddenError("an upload with the session cookie must carry its Origin")
        return
    if request.mimetype and not request.is_json:
        raise UnsupportedMediaTypeError(
            "the request body must be JSON (Content-Type: application/json)"
        )


def route_writes(view, method: str) -> bool:
    """The route's declared intent: its @writes / @reads mark, else by method.

    GET, HEAD and OPTIONS read; every other method writes.
    """
    if method == "OPTIONS":
        return False
    marked = getattr(view, "_writes", None)
    if marked is not None:
        return marked
    return method not in _SAFE_METHODS


def session_only(refusal=None):
    """Full tier, but refuse bearer tokens with 403 (refusal builds the error to raise)."""

    def decorate(view):
        @wraps(view)
        def wrapper(*args, **kwargs):
            if g.principal is not None and g.principal.via == "bearer":
                raise (
                    refusal()
                    if refusal
                    else ForbiddenError("this action needs a signed-in session, not a token")
                )
            return view(*args, **kwargs)

        wrapper._tier = "full"  # type: ignore[attr-defined]
        # lets tests find every session-only route
        wrapper._session_only = True  # type: ignore[attr-defined]
        return wrapper

    return decorate


def load_principal():
    """before_request: resolve the caller and enforce the route's tier."""
    view = current_app.view_functions.get(request.endpoint) if request.endpoint else None
    # The request's unit of work begins with the route's declared intent.
    store.declare(route_writes(view, request.method))
    g.principal = None
    audit.set_actor(audit.Actor(via="api"))  # every request starts anonymous
    if request.method == "OPTIONS":  # CORS preflight carries no credentials
        return None
    if view is None:  # no such route: let routing answer 404/405
        return None
    if getattr(view, "_checks_origin", False) and _foreign_origin(request.headers.get("Origin")):
        raise ForbiddenError("the Origin of this request is not allowed here")
    tier = getattr(view, "_tier", "full")
    g.principal = credentials.resolve(
        cookie=request.cookies.get(SESSION_COOKIE),
        authorization=request.headers.get("Authorization"),
        audience=current_app.config["API_ORIGIN"],
    )
    if g.principal is not None and g.principal.stale_use:
        # Last-use bookkeeping writes: give it a unit of work of its own that begins as
        # a writer (BEGIN IMMEDIATE on SQLite, waiting under busy_timeout) instead of
        # upgrading the lookup's read snapshot, which SQLite refuses at once ("database
        # is locked") when a concurrent writer committed first. Committed on its own, so
        # it is kept even if the request then fails.
        store.commit()  # end the lookup's unit of work (it wrote nothing)
        with store.writing():
            credentials.record_use(g.principal)
            store.commit()
    # Otherwise the request carries on in the same database transaction.
    if g.principal is not None and g.principal.via == "session":
        refuse_cross_site(request.method)
    if g.principal is not None:
        audit.set_actor(audit.actor_for(g.principal))
    if tier == "full" and (g.principal is None or not g.principal.full):
        raise UnauthenticatedError("authentication required")
    if tier == "half" and (g.principal is None or g.principal.via != "session"):
        raise UnauthenticatedError("authentication required")
    return None


def forget_principal(_error=None) -> None:
    """teardown_request: the thread's next request (or a CLI command run in the same
    thread, as in tests) must not inherit this caller as the audit trail's actor."""
    audit.set_actor(audit.Actor())


def common_headers(response):
    """after_request on every API response: errors, 401s, 404s, /mcp and preflights too.

    nosniff: a browser never guesses another type than the one declared (a JSON error
    echoing input is never read as HTML or script). Vary: Origin: the CORS headers
    depend on the request's Origin, so a cache must not hand one origin's answer (with
    or without Access-Control-Allow-Origin) to another; flask-cors adds it only when
    the origin is allowed.
    """
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.vary.add("Origin")
    return response


def json_body() -> dict:
    """The JSON object in the body: 415 unless application/json, 400 if malformed.

    Malformed includes nesting too deep to parse and a lone surrogate in any string
    (text no database column can hold): 400, before any handler sees the body.
    """
    if not request.is_json:
        raise UnsupportedMediaTypeError(
            "the request body must be JSON (Content-Type: application/json)"
        )
    try:
        data = parse_body(request.get_data(cache=True))
    except BodyNotJSON as err:
        raise BadRequestError(f"the request body is {err.reason}") from err
    if not isinstance(data, dict):
        raise BadRequestError("the request body must be a JSON object")
    return data


def principal() -> credentials.Principal:
    return g.principal


def created_once(operation: str, body: dict, fn, *args):
    """201 and fn's data, once per Idempotency-Key (services/ledger/idempotency.py)."""
    key = idempotency.header_key(request.headers.get(idempotency.HEADER))
    answer = idempotency.once(principal().user_id, key, operation, body, 201, fn, *args)
    response = jsonify(answer.data)
    response.status_code = answer.status
    if answer.replayed:
        response.headers["Idempotency-Replayed"] = "true"
    return response
