"""Interoperability: Authlib's OAuth2Session (an independent OAuth client) against the
service running under waitress on 127.0.0.1, port chosen by the OS.

The library drives discovery, dynamic registration (RFC 7591, posted through the
library's own HTTP session), the authorization-code flow with PKCE S256 and `resource`,
refresh and revocation. The test only plays the human at the consent step.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

pytest.importorskip("authlib", reason="Authlib (the independent OAuth client) is not installed")
requests = pytest.importorskip("requests", reason="requests is not installed")

from authlib.common.security import generate_token  # noqa: E402
from authlib.integrations.requests_client import OAuth2Session  # noqa: E402

from app import create_app, store  # noqa: E402
from app.services.identity import sessions, users  # noqa: E402
from harness.inprocess import InProcessServer  # noqa: E402
from tests.support import free_port  # noqa: E402


@pytest.fixture
def live_server(app, app_config):
    """The service under waitress (harness/inprocess.py); API_ORIGIN is the address it
    really listens on."""
    port = free_port()
    origin = f"http://127.0.0.1:{port}"
    served = create_app({**app_config, "API_ORIGIN": origin})
    try:
        with InProcessServer(served, ports=[port]):
            yield served, origin
    finally:
        with served.app_context():
            from app.extensions import db

            db.session.remove()
            db.engine.dispose()


def full_session_cookie(served, email="alice@example.com") -> str:
    with served.app_context():
        user = users.add_user(email, "correct horse battery staple")
        cookie = sessions.create(user.id, mfa_complete=True)
        store.commit()
        return cookie


def test_authlib_client_full_lifecycle(live_server):
    served, origin = live_server
    http = requests.Session()
    meta = http.get(f"{origin}/.well-known/oauth-authorization-server").json()
    assert meta["issuer"] == origin
    resource = http.get(f"{origin}/.well-known/oauth-protected-resource").json()["resource"]
    assert resource == origin

    # Dynamic registration, from the library's HTTP session.
    redirect_uri = "http://127.0.0.1:8765/callback"  # registered without a port
    probe = OAuth2Session()
    registered = probe.post(
        meta["registration_endpoint"],
        json={
            "client_name": "Authlib interop",
            "redirect_uris": ["http://127.0.0.1/callback"],
        },
        withhold_token=True,
    )
    assert registered.status_code == 201, registered.text
    client_id = registered.json()["client_id"]
    assert registered.json()["token_endpoint_auth_method"] == "none"

    client = OAuth2Session(
        client_id=client_id,
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
        token_endpoint_auth_method="none",
    )
    verifier = generate_token(64)
    url, state = client.create_authorization_url(
        meta["authorization_endpoint"], code_verifier=verifier, resource=resource
    )
    hop = client.get(url, allow_redirects=False, withhold_token=True)
    assert hop.status_code == 303
    consent = hop.headers["Location"]
    assert consent.startswith("http://localhost:38080/authorize?")
    assert urlsplit(consent).query == urlsplit(url).query

    # The human approves in the web app: the page posts the query back with a session.
    cookie = full_session_cookie(served)
    query = dict(p.split("=", 1) for p in urlsplit(url).query.split("&"))
    from urllib.parse import unquote_plus

    fields = {k: unquote_plus(v) for k, v in query.items()}
    approved = requests.post(
        f"{origin}/oauth/authorize/approve",
        json={**fields, "approve": True},
        cookies={"svc_session": cookie},
    )
    assert approved.status_code == 200, approved.text
    callback = approved.json()["redirect"]
    assert callback.startswith(redirect_uri + "?")

    token = client.fetch_token(
        meta["token_endpoint"],
        authorization_response=callback,
        code_verifier=verifier,
        resource=resource,
    )
    assert token["token_type"] == "Bearer" and token["expires_in"] == 3600
    assert client.get(f"{origin}/accounts").status_code == 200

    first_refresh = token["refresh_token"]
    refreshed = client.refresh_token(
        meta["token_endpoint"], refresh_token=first_refresh, resource=resource
    )
    assert refreshed["refresh_token"] != first_refresh
    assert client.get(f"{origin}/accounts").status_code == 200  # uses the new access token

    # The retired refresh token is refused in the library's own error shape.
    from authlib.integrations.base_client.errors import OAuthError

    with pytest.raises(OAuthError) as refused:
        client.refresh_token(meta["token_endpoint"], refresh_token=first_refresh)
    assert refused.value.error == "invalid_grant"
    client.token = refreshed

    revoked = client.revoke_token(
        meta["revocation_endpoint"],
        token=refreshed["refresh_token"],
        token_type_hint="refresh_token",
    )
    assert revoked.status_code == 200
    assert revoked.headers["Cache-Control"] == "no-store"
    # The access token minted with that refresh token went with it.
    assert client.get(f"{origin}/accounts").status_code == 401
    with pytest.raises(OAuthError) as gone:
        client.refresh_token(meta["token_endpoint"], refresh_token=refreshed["refresh_token"])
    assert gone.value.error == "invalid_grant"
