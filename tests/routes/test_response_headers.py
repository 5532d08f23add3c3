"""Every API response carries `X-Content-Type-Options: nosniff` and `Vary: Origin`:
successes, errors, 401s, OAuth errors, /mcp, /health, 404s and CORS preflights, with
or without an Origin header (one after_request hook, app.routes.support.common_headers).
The web app's server sends nosniff on everything too."""

from __future__ import annotations

import pytest

from app.web import create_web_app
from tests.services.oauth.flow import API_ORIGIN, FORM, REDIRECT, pkce_pair

WEB = "http://localhost:38080"
AUTHORIZE = {
    "client_id": "svc-cli",
    "redirect_uri": REDIRECT,
    "response_type": "code",
    "code_challenge": pkce_pair()[1],
    "code_challenge_method": "S256",
    "resource": API_ORIGIN,
    "state": "xyz",
}
ORIGINS = [{}, {"Origin": WEB}, {"Origin": "http://evil.example"}]


def mcp_status(status: int, origin: dict) -> int:
    """POST /mcp refuses a foreign Origin with 403 before anything else (docs/mcp.md)."""
    return 403 if origin.get("Origin") == "http://evil.example" else status


def assert_common_headers(response):
    assert response.headers.get("X-Content-Type-Options") == "nosniff", response.headers
    vary = [v.strip().lower() for v in response.headers.get("Vary", "").split(",")]
    assert vary.count("origin") == 1, response.headers.get("Vary")


REQUESTS = {
    "health": ("GET", "/health", {}, 200),
    "401": ("GET", "/accounts", {}, 401),
    "404": ("GET", "/no/such/route", {}, 404),
    "405": ("DELETE", "/accounts", {}, 405),
    "415": ("POST", "/auth/login", {"data": "email=a", "content_type": FORM}, 415),
    "400": ("POST", "/auth/login", {"json": {"email": 5}}, 400),
    "oauth-error": (
        "POST",
        "/oauth/token",
        {"data": {"grant_type": "authorization_code", "code": "x"}, "content_type": FORM},
        400,
    ),
    "oauth-plain-415": ("POST", "/oauth/token", {"json": {}}, 415),
    "oauth-plain-400": (
        "GET",
        "/oauth/authorize",
        {"query_string": {"response_type": "code"}},
        400,
    ),
    "oauth-303": ("GET", "/oauth/authorize", {"query_string": AUTHORIZE}, 303),
    "well-known": ("GET", "/.well-known/oauth-authorization-server", {}, 200),
    "mcp-401": ("POST", "/mcp", {"json": {"jsonrpc": "2.0", "id": 1, "method": "ping"}}, 401),
    "preflight": (
        "OPTIONS",
        "/transactions",
        {"headers": {"Access-Control-Request-Method": "POST"}},
        200,
    ),
}


@pytest.mark.parametrize("origin", ORIGINS, ids=["no-origin", "web-origin", "other-origin"])
@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_anonymous_responses_carry_the_common_headers(client, name, origin):
    method, path, kw, status = REQUESTS[name]
    kw = {**kw, "headers": {**kw.get("headers", {}), **origin}}
    if path == "/mcp":
        status = mcp_status(status, origin)
    response = client.open(path, method=method, **kw)
    assert response.status_code == status, response.get_data(as_text=True)
    assert_common_headers(response)


@pytest.mark.parametrize("origin", ORIGINS, ids=["no-origin", "web-origin", "other-origin"])
def test_authenticated_responses_carry_the_common_headers(api, origin):
    samples = [
        (api.get("/accounts", headers=origin), 200),
        (api.post("/accounts", json={"name": "Bank", "kind": "asset"}, headers=origin), 201),
        (api.post("/accounts", json={"name": "Bank", "kind": "nope"}, headers=origin), 400),
        (api.delete("/transactions/99", headers=origin), 404),
        (api.get("/auth/me", headers=origin), 200),
        (
            api.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=origin),
            mcp_status(200, origin),
        ),
        (
            api.post(
                "/mcp",
                json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                headers=origin,
            ),
            mcp_status(202, origin),
        ),
        (api.delete("/auth/tokens/x", headers=origin), 403),
    ]
    for response, status in samples:
        assert response.status_code == status, response.get_data(as_text=True)
        assert_common_headers(response)


def test_a_server_fault_carries_the_common_headers(generic_500, api, monkeypatch):
    from app.services.ledger import accounts

    def broken():
        raise RuntimeError("boom")

    monkeypatch.setattr(accounts, "list_accounts", broken)
    response = api.get("/accounts")
    assert response.status_code == 500
    assert_common_headers(response)


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/signin",
        "/static/js/api.js",
        "/config.js",
        "/static/nothing.js",
        "/static/x.exe",
        "/missing",
    ],
)
def test_the_web_app_sends_nosniff_on_everything(path):
    with create_web_app("http://localhost:38081", WEB).test_client().get(path) as response:
        assert response.headers.get("X-Content-Type-Options") == "nosniff"
