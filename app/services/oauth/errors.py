"""OAuth errors: one class per error code (authlib rfc6749/errors.py shape).

Each maps to `{error, error_description}` with `Cache-Control: no-store` (app.errors).
They are ServiceErrors, so `commit=True` works the same way: a refusal that is itself
a state change (a code killed, a refresh family revoked, a poll time stored, a device
attempt counted, unused clients reaped) is committed by the boundary, not rolled back.
"""

from __future__ import annotations

from ..errors import GENERIC_FAULT, ServiceError


class OAuthError(ServiceError):
    error = "server_error"
    status = 500

    def __init__(
        self,
        description: str,
        *,
        status: int | None = None,
        commit: bool | None = None,
        retry_after: int | None = None,
    ):
        super().__init__(description, commit=commit)
        self.description = description
        if status is not None:
            self.status = status
        self.retry_after = retry_after  # seconds, sent as Retry-After when set


class InvalidRequest(OAuthError):
    error = "invalid_request"
    status = 400  # 429 at the device attempt cap


class InvalidGrant(OAuthError):
    error = "invalid_grant"
    status = 400


class InvalidClient(OAuthError):
    error = "invalid_client"
    status = 401  # 403 where only a session is accepted


class InvalidRedirectUri(OAuthError):
    error = "invalid_redirect_uri"
    status = 400


class InvalidClientMetadata(OAuthError):
    error = "invalid_client_metadata"  # RFC 7591 3.2.2
    status = 400


class UnsupportedGrantType(OAuthError):
    error = "unsupported_grant_type"
    status = 400


class AuthorizationPending(OAuthError):
    error = "authorization_pending"
    status = 400


class SlowDown(OAuthError):
    error = "slow_down"
    status = 400


class AccessDenied(OAuthError):
    error = "access_denied"
    status = 400


class ExpiredToken(OAuthError):
    error = "expired_token"
    status = 400


class TemporarilyUnavailable(OAuthError):
    error = "temporarily_unavailable"
    status = 429


class ServerError(OAuthError):
    error = "server_error"
    status = 500


GENERIC_SERVER_ERROR = GENERIC_FAULT


def session_only_refusal() -> InvalidClient:
    """The 403 for a bearer token on a route that needs a signed-in browser session."""
    return InvalidClient(
        "approve this from the web app while signed in; a token cannot approve or mint "
        "another credential",
        status=403,
    )
