"""The authorization request (RFC 6749 4.1.1 with PKCE, RFC 7636), validated once.

GET /oauth/authorize and POST /oauth/authorize/approve both call validate(): the
approve call re-validates the whole request, so the consent page can never widen
what the client asked for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

from .clients import (
    check_redirect,
    check_resource,
    compat,
    get_client,
    printable_ascii,
    require,
)
from .errors import InvalidRequest

REQUIRED = ("client_id", "redirect_uri", "response_type", "code_challenge", "code_challenge_method")
OPTIONAL = ("resource", "state")
# RFC 7636 4.2: BASE64URL(SHA256(verifier)) is 43 characters; the grammar allows 43..128.
_CHALLENGE = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")


@dataclass(frozen=True)
class AuthorizationRequest:
    client_id: str
    redirect_uri: str
    code_challenge: str
    resource: str
    state: str | None


def missing_params(params) -> list[str]:
    """Required query parameters that are absent (a plain-text 400 before the
    handler, docs/oauth.md "Errors").

        `resource` is required too, unless OAUTH_CLIENT_COMPAT lets it default.
    """
    names = REQUIRED + (() if compat() else ("resource",))
    return [name for name in names if params.get(name) is None]


def raw_query_is_printable(raw: bytes) -> bool:
    """Every byte of the raw query, literal or percent-encoded, is printable ASCII."""
    if not all(0x20 <= b <= 0x7E for b in raw):
        return False
    return all(0x20 <= b <= 0x7E for b in unquote_to_bytes(raw.replace(b"+", b" ")))


def validate(params, *, lock: bool = False) -> AuthorizationRequest:
    """The whole authorization request, or the first InvalidRequest/InvalidClient.

    `lock`: the unit will write a code for the client (clients.get_client)."""
    for name in REQUIRED + OPTIONAL:
        value = params.get(name)
        if value is not None and (not isinstance(value, str) or not printable_ascii(value)):
            raise InvalidRequest(f"{name} must be a string of printable ASCII characters")
    require(params, *REQUIRED)
    client = get_client(params["client_id"], lock=lock)
    redirect_uri = check_redirect(client, params["redirect_uri"])
    if params["response_type"] != "code":
        raise InvalidRequest("response_type must be code")
    if params["code_challenge_method"] != "S256":
        raise InvalidRequest("code_challenge_method must be S256 (plain is not accepted)")
    if not _CHALLENGE.match(params["code_challenge"]):
        raise InvalidRequest("code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~")
    resource = check_resource(params.get("resource"), required=True)
    return AuthorizationRequest(
        client_id=client.id,
        redirect_uri=redirect_uri,
        code_challenge=params["code_challenge"],
        resource=resource,
        state=params.get("state"),
    )
