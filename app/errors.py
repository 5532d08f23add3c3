"""The HTTP error mapping, registered once.

OAuthError -> {error, error_description} with Cache-Control: no-store (and, like
every ServiceError, committed when it is a state change, else rolled back);
ServiceError -> {error} with its status (401 adds the WWW-Authenticate challenge,
429 adds Retry-After); werkzeug HTTP errors -> {error}; anything else -> a fixed
generic 500 sentence, with details in the server log only.

Under TESTING the catch-all rolls back and then re-raises (as indico's handler does under
testing), so a test sees the traceback instead of the generic sentence; a test that
asserts the generic 500 itself sets GENERIC_500_UNDER_TEST (tests/conftest.py, the
`generic_500` fixture).
"""

from __future__ import annotations

import logging

from flask import current_app, has_request_context, jsonify, request
from werkzeug.exceptions import HTTPException

from . import store
from .services.errors import GENERIC_FAULT, ServiceError, TooManyAttempts, UnauthenticatedError
from .services.oauth.errors import GENERIC_SERVER_ERROR, OAuthError

log = logging.getLogger("app.errors")

GENERIC_500 = GENERIC_FAULT


def challenge_header() -> str:
    origin = current_app.config["API_ORIGIN"]
    return f'Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource"'


def error_response(message: str, status: int, extra: dict | None = None):
    response = jsonify({"error": message, **(extra or {})})
    response.status_code = status
    return response


def handle_service_error(err: ServiceError):
    store.finish(err)
    response = error_response(err.message, err.status, err.extra)
    if isinstance(err, UnauthenticatedError):
        response.headers["WWW-Authenticate"] = challenge_header()
    if isinstance(err, TooManyAttempts):
        response.headers["Retry-After"] = str(max(1, int(err.retry_after)))
    return response


def oauth_response(error: str, description: str, status: int):
    response = jsonify({"error": error, "error_description": description})
    response.status_code = status
    response.headers["Cache-Control"] = "no-store"
    return response


def handle_oauth_error(err: OAuthError):
    store.finish(err)
    response = oauth_response(err.error, err.description, err.status)
    if err.retry_after is not None:
        response.headers["Retry-After"] = str(max(1, int(err.retry_after)))
    return response


def handle_http_error(err: HTTPException):
    store.rollback()
    response = error_response((err.name or "error").lower(), err.code or 500)
    allowed = getattr(err, "valid_methods", None)  # MethodNotAllowed's
    if err.code == 405 and allowed:
        response.headers["Allow"] = ", ".join(allowed)
    return response


def handle_unexpected(err: Exception):
    log.exception("unhandled error: %s", err)
    try:
        store.rollback()
    except Exception:  # the connection itself may be what failed
        log.exception("rollback failed")
    if current_app.testing and not current_app.config.get("GENERIC_500_UNDER_TEST"):
        raise err
    if has_request_context() and request.blueprint == "oauth":
        return oauth_response("server_error", GENERIC_SERVER_ERROR, 500)
    return error_response(GENERIC_500, 500)


def register(app) -> None:
    app.register_error_handler(OAuthError, handle_oauth_error)
    app.register_error_handler(ServiceError, handle_service_error)
    app.register_error_handler(HTTPException, handle_http_error)
    app.register_error_handler(Exception, handle_unexpected)
