"""A real client signing itself in: the official MCP Python SDK (2.x) connects with no
token and goes through its own OAuth client provider (`mcp.client.auth.OAuthClientProvider`)
against the service running under waitress.

The SDK drives everything a user's assistant would: the 401 challenge, protected-resource
metadata, authorization-server metadata, dynamic registration, the authorization request
(PKCE S256, `resource`), the code exchange, the tool calls and, once an hour has passed, the
refresh. The test plays only the human: it signs in through the real password + passkey
ceremonies (software authenticator) over HTTP and approves the request the SDK hands to its
redirect handler, then gives the SDK the code and state as its callback handler.

Differences between the SDK and this service found here are written down in docs/mcp.md
("Signing in with the assistant's own OAuth").
"""

from __future__ import annotations

import asyncio
import time as real_time
from urllib.parse import parse_qsl, urlsplit

import pytest

mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the 'test' extra) is not installed")
httpx2 = pytest.importorskip("httpx2", reason="httpx2 (installed with the MCP SDK) is missing")
requests = pytest.importorskip("requests", reason="requests (the 'test' extra) is not installed")

import anyio  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.auth import (  # noqa: E402
    AuthorizationCodeResult,
    OAuthClientProvider,
    OAuthFlowError,
    OAuthRegistrationError,
)
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.auth import (  # noqa: E402
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from app.extensions import db  # noqa: E402
from app.models import Token  # noqa: E402
from app.services import crypto  # noqa: E402
from app.services.ledger.listing import list_transactions  # noqa: E402
from tests.support import WEB_ORIGIN  # noqa: E402
from tests.testkit import SignIn  # noqa: E402

# slow: not in the quick loop (README, Test it); own_app: a fixture adds an after_request hook
pytestmark = [pytest.mark.slow, pytest.mark.own_app]

REDIRECT_URI = "http://127.0.0.1:53682/callback"
HOUR = 3600


class MemoryStorage:
    """The SDK's TokenStorage protocol, in memory; remembers every token set it was given."""

    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None
        self.token_history: list[OAuthToken] = []

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.token_history.append(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class SdkClock:
    """Stands in for the `time` module inside the SDK's OAuth code, so the test can let an
    hour pass for the client as it does for the server (FakeClock). Only `time()` is
    shifted; everything else is the real module."""

    def __init__(self):
        self.offset = 0.0

    def time(self) -> float:
        return real_time.time() + self.offset

    def __getattr__(self, name):
        return getattr(real_time, name)


class Browser:
    """The human's browser: an HTTP client keeping the service's cookies, shaped for
    tests.testkit.SignIn (post(path, json=) -> response with status_code and get_json())."""

    def __init__(self, origin: str):
        self.origin = origin
        self.http = requests.Session()

    def post(self, path, json=None):
        response = self.http.post(self.origin + path, json=json, timeout=30)
        response.get_json = response.json
        return response


@pytest.fixture
def traffic(app):
    """What the service saw, in order: (verb, path, status, details)."""
    from flask import request

    seen = []

    @app.after_request
    def record(response):
        details = {}
        bearer = request.headers.get("Authorization", "")
        if bearer.startswith("Bearer "):
            details["bearer"] = crypto.digest(bearer[len("Bearer ") :])
        if request.path == "/mcp":
            details["www_authenticate"] = response.headers.get("WWW-Authenticate")
            body = request.get_json(silent=True)
            details["rpc"] = body.get("method") if isinstance(body, dict) else None
        elif request.path == "/oauth/token":
            details["form"] = request.form.to_dict()
        elif request.path == "/oauth/register":
            details["body"] = request.get_json(silent=True)
            details["reply"] = response.get_json(silent=True)
        seen.append((request.method, request.path, response.status_code, details))
        return response

    return seen


@pytest.fixture
def sdk_clock(monkeypatch):
    import mcp.client.auth.oauth2 as oauth2_module
    import mcp.shared.auth_utils as auth_utils_module

    clock = SdkClock()
    # The two places the SDK reads the time for tokens: expiry = time() + expires_in
    # (auth_utils) and the validity check before each request (oauth2).
    monkeypatch.setattr(oauth2_module, "time", clock)
    monkeypatch.setattr(auth_utils_module, "time", clock)
    return clock


class Human:
    """Approves, with a full session, whatever authorization request the SDK shows."""

    def __init__(self, browser: Browser, redirect_uri: str = REDIRECT_URI):
        self.browser = browser
        self.redirect_uri = redirect_uri
        self.shown: list[str] = []  # authorization URLs the SDK handed to its redirect handler
        self.pending: list[AuthorizationCodeResult] = []
        self.web_redirects: list[str] = []

    def approve(self, authorize_url: str) -> AuthorizationCodeResult:
        query = urlsplit(authorize_url).query
        # Following the link: the service sends the browser to the web app's consent page
        # with the identical query string.
        hop = self.browser.http.get(authorize_url, allow_redirects=False, timeout=30)
        assert hop.status_code == 303, (hop.status_code, hop.text)
        self.web_redirects.append(hop.headers["Location"])
        # The consent page posts every query field plus the decision.
        fields = dict(parse_qsl(query, keep_blank_values=True))
        decided = self.browser.post("/oauth/authorize/approve", json={**fields, "approve": True})
        assert decided.status_code == 200, (decided.status_code, decided.text)
        redirect = decided.json()["redirect"]
        assert redirect.startswith(self.redirect_uri + "?"), redirect
        back = dict(parse_qsl(urlsplit(redirect).query))
        # iss (RFC 9207) passed on as a real callback would: the SDK checks it.
        return AuthorizationCodeResult(
            code=back["code"], state=back.get("state"), iss=back.get("iss")
        )

    async def redirect_handler(self, authorize_url: str) -> None:
        self.shown.append(authorize_url)
        self.pending.append(await anyio.to_thread.run_sync(self.approve, authorize_url))

    async def callback_handler(self) -> AuthorizationCodeResult:
        return self.pending.pop(0)


def provider_for(url: str, storage: MemoryStorage, human: Human, redirect_uri=REDIRECT_URI):
    return OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="SDK assistant", redirect_uris=[redirect_uri]
        ),
        storage=storage,
        redirect_handler=human.redirect_handler,
        callback_handler=human.callback_handler,
    )


async def assistant_session(url, provider, checking, salary, an_hour_passes, human_revokes):
    """One assistant session; the two callables run between its tool calls."""
    out: dict = {}
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        out["server_name"] = client.server_info.name
        out["balances_before"] = await client.call_tool("account_balances", {})
        out["recorded"] = await client.call_tool(
            "record_transaction",
            {
                "occurred_on": "2026-01-05",
                "description": "January pay",
                "entries": [
                    {"account_id": checking, "amount_cents": 250000},
                    {"account_id": salary, "amount_cents": -250000},
                ],
            },
        )
        an_hour_passes()
        out["balances_after_the_hour"] = await client.call_tool(
            "account_balances", {"from": "2026-01-01", "to": "2026-01-31"}
        )
        await anyio.to_thread.run_sync(human_revokes)
        out["accounts_after_revocation"] = await client.call_tool("list_accounts", {})
    return out


def token_row(app, raw: str) -> Token | None:
    with app.app_context():
        row = db.session.get(Token, crypto.digest(raw))
        if row is not None:
            db.session.expunge(row)
        return row


def token_rows(app) -> dict[str, Token]:
    """Every stored token, by digest, detached from the session."""
    with app.app_context():
        rows = db.session.execute(db.select(Token)).scalars().all()
        for row in rows:
            db.session.expunge(row)
        return {row.id: row for row in rows}


def test_official_sdk_signs_in_with_its_oauth_provider_and_refreshes(
    app, traffic, live_server, make_user, authenticator, service_account, clock, sdk_clock
):
    origin = live_server.origin
    make_user()
    checking = service_account("Checking", "asset")
    salary = service_account("Salary", "income")

    # The human signs in over HTTP: password, then the first passkey (real ceremonies).
    browser = Browser(origin)
    SignIn(browser, authenticator).full()
    assert browser.http.get(origin + "/auth/me", timeout=30).json()["mfa_complete"] is True
    del traffic[:]  # from here on, only what the assistant (and the consent) caused

    human = Human(browser)
    storage = MemoryStorage()
    provider = provider_for(live_server.url, storage, human)

    def an_hour_passes():
        clock.advance(HOUR + 1)  # the service's clock ...
        sdk_clock.offset += HOUR + 1  # ... and the assistant's

    mark: list[int] = []  # where the traffic stood when the human stepped in
    approvals: list[int] = []  # how many approvals the human had given by then
    stored: dict[str, Token] = {}  # the tokens as they stood then

    def human_revokes():
        """The human checks the old access token, then removes the assistant's connection
        from the token list."""
        mark.append(len(traffic))
        approvals.append(len(human.shown))
        stored.update(token_rows(app))
        first_access_token = storage.token_history[0].access_token
        requests.get(  # answered in `traffic`
            origin + "/accounts",
            headers={"Authorization": f"Bearer {first_access_token}"},
            timeout=30,
        )
        listed = browser.http.get(origin + "/auth/tokens", timeout=30)
        assert listed.status_code == 200, listed.text
        mine = [c for c in listed.json() if c["client_id"].startswith("dyn_")]
        assert len(mine) == 1 and mine[0]["kind"] == "refresh", listed.json()
        gone = browser.http.delete(origin + "/auth/tokens/" + mine[0]["id"], timeout=30)
        assert gone.status_code == 204, gone.text

    out = asyncio.run(
        assistant_session(
            live_server.url, provider, checking, salary, an_hour_passes, human_revokes
        )
    )

    humans_paths = ("/accounts", "/auth/tokens")
    human_steps = [t for t in traffic[mark[0] :] if t[1].startswith(humans_paths)]
    after_revocation = [t for t in traffic[mark[0] :] if not t[1].startswith(humans_paths)]
    del traffic[mark[0] :]
    steps = [(verb, path, status) for verb, path, status, _ in traffic]

    # 1. No token: the first MCP request is refused with the challenge naming the metadata.
    verb, path, status, first = traffic[0]
    assert (verb, path, status) == ("POST", "/mcp", 401)
    assert "bearer" not in first
    assert first["www_authenticate"] == (
        f'Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource"'
    )
    # 2-4. Discovery and dynamic registration, in that order, all from the SDK.
    assert steps[1:4] == [
        ("GET", "/.well-known/oauth-protected-resource", 200),
        ("GET", "/.well-known/oauth-authorization-server", 200),
        ("POST", "/oauth/register", 201),
    ], steps
    registration = traffic[3][3]
    client_id = registration["reply"]["client_id"]
    assert client_id.startswith("dyn_")
    assert registration["body"]["redirect_uris"] == [REDIRECT_URI]
    assert registration["reply"]["token_endpoint_auth_method"] == "none"
    assert storage.client_info is not None and storage.client_info.client_id == client_id

    # 5. Authorization: the SDK showed one URL at the advertised endpoint, carrying PKCE
    # S256 and the resource; the service sent the browser on with the identical query;
    # the human's full session approved it.
    assert approvals == [1]
    shown = urlsplit(human.shown[0])
    assert f"{shown.scheme}://{shown.netloc}{shown.path}" == origin + "/oauth/authorize"
    asked = dict(parse_qsl(shown.query))
    assert asked["client_id"] == client_id
    assert asked["redirect_uri"] == REDIRECT_URI
    assert asked["response_type"] == "code"
    assert asked["code_challenge_method"] == "S256"
    assert asked["resource"] == origin
    assert asked["state"]
    assert "scope" not in asked  # neither metadata document lists scopes
    assert human.web_redirects[0] == f"{WEB_ORIGIN}/authorize?{shown.query}"
    assert steps[4:7] == [
        ("GET", "/oauth/authorize", 303),
        ("POST", "/oauth/authorize/approve", 200),
        ("POST", "/oauth/token", 200),
    ], steps

    # 6. Token exchange: the code, the verifier, the same redirect URI and resource.
    exchange = traffic[6][3]["form"]
    assert exchange["grant_type"] == "authorization_code"
    assert exchange["client_id"] == client_id
    assert exchange["redirect_uri"] == REDIRECT_URI
    assert exchange["resource"] == origin
    assert exchange["code_verifier"]
    assert "client_secret" not in exchange
    first_pair = storage.token_history[0]
    assert first_pair.expires_in == HOUR and first_pair.refresh_token
    first_access = token_row(app, first_pair.access_token)
    first_refresh = token_row(app, first_pair.refresh_token)
    with app.app_context():
        from app.services.identity import users

        alice = users.find_user("alice@example.com").id
    for row in (first_access, first_refresh):
        assert (row.client_id, row.user_id, row.audience) == (client_id, alice, origin)

    # 7. The refused request is retried with the new access token, and so is every call
    # that follows; all of them go through.
    retried = traffic[7]
    assert retried[:3] == ("POST", "/mcp", 200)
    assert retried[3]["rpc"] == first["rpc"]
    mcp_calls = [(status, d) for verb, path, status, d in traffic[7:] if path == "/mcp"]
    assert len(mcp_calls) >= 4 and all(status in (200, 202) for status, _ in mcp_calls)
    refreshed_at = next(
        i
        for i, (verb, path, status, d) in enumerate(traffic)
        if path == "/oauth/token" and d["form"].get("grant_type") == "refresh_token"
    )
    before_refresh = [d for verb, path, status, d in traffic[7:refreshed_at] if path == "/mcp"]
    assert {d["bearer"] for d in before_refresh} == {first_access.id}
    assert out["server_name"] == "ledger-service"
    assert out["balances_before"].structured_content == {
        "result": [{"account": "Checking", "cents": 0}, {"account": "Salary", "cents": 0}]
    }
    recorded = out["recorded"].structured_content
    assert recorded["recorded"] is True
    with app.app_context():
        books = list_transactions(None, None)
    assert [t["id"] for t in books] == [recorded["id"]]
    assert books[0]["description"] == "January pay"
    assert books[0]["created_by_email"] == "alice@example.com"
    assert [(e["account_id"], e["amount_cents"]) for e in books[0]["entries"]] == [
        (checking, 250000),
        (salary, -250000),
    ]

    # 8. An hour later the SDK refreshed on its own, without asking the human again.
    refreshes = [
        d["form"]
        for verb, path, status, d in traffic
        if path == "/oauth/token" and d["form"].get("grant_type") == "refresh_token"
    ]
    assert refreshes == [
        {
            "grant_type": "refresh_token",
            "refresh_token": first_pair.refresh_token,
            "client_id": client_id,
            "resource": origin,
        }
    ]
    assert approvals == [1]  # no second approval before the revocation
    second_pair = storage.token_history[1]
    assert second_pair.access_token != first_pair.access_token
    assert second_pair.refresh_token != first_pair.refresh_token
    retired = stored[crypto.digest(first_pair.refresh_token)]
    assert retired.retired_at is not None and retired.revoked_at is None
    new_refresh = stored[crypto.digest(second_pair.refresh_token)]
    new_access = stored[crypto.digest(second_pair.access_token)]
    assert new_refresh.parent_id == first_refresh.id
    assert new_refresh.family_id == first_refresh.family_id
    assert new_access.parent_id == new_refresh.id
    assert new_refresh.retired_at is None and new_refresh.revoked_at is None

    # ... and the next tool call went out with the new token and succeeded.
    last_call = [d for verb, path, status, d in traffic if path == "/mcp"][-1]
    assert last_call["bearer"] == new_access.id
    assert ("POST", "/mcp", 401) not in steps[1:]
    assert out["balances_after_the_hour"].structured_content == {
        "result": [
            {"account": "Checking", "cents": 250000},
            {"account": "Salary", "cents": 250000},
        ]
    }
    # The service agrees the first access token had expired by then: it opens nothing.
    stale = human_steps[0]
    assert stale[:3] == ("GET", "/accounts", 401)
    assert stale[3]["bearer"] == first_access.id

    # 9. The human removes the connection. The revoked access token no longer opens /mcp;
    # the SDK does not get back in by itself: it rediscovers, reuses its registration and
    # asks the human again (a second approval), then the call goes through on a new grant.
    assert [t[:3] for t in human_steps[1:]] == [
        ("GET", "/auth/tokens", 200),
        ("DELETE", f"/auth/tokens/{new_refresh.id}", 204),
    ]
    assert token_row(app, second_pair.access_token).revoked_at is not None
    assert token_row(app, second_pair.refresh_token).revoked_at is not None
    verb, path, status, refused = after_revocation[0]
    assert (verb, path, status) == ("POST", "/mcp", 401)
    assert refused["bearer"] == new_access.id
    assert [(v, p, s) for v, p, s, _ in after_revocation[1:7]] == [
        ("GET", "/.well-known/oauth-protected-resource", 200),
        ("GET", "/.well-known/oauth-authorization-server", 200),
        ("GET", "/oauth/authorize", 303),
        ("POST", "/oauth/authorize/approve", 200),
        ("POST", "/oauth/token", 200),
        ("POST", "/mcp", 200),
    ], after_revocation
    assert after_revocation[5][3]["form"]["grant_type"] == "authorization_code"
    assert after_revocation[5][3]["form"]["client_id"] == client_id  # no new registration
    assert len(human.shown) == 2
    again = urlsplit(human.shown[1]).query
    assert human.web_redirects[1] == f"{WEB_ORIGIN}/authorize?{again}"
    assert dict(parse_qsl(again))["state"] != asked["state"]
    third_pair = storage.tokens
    assert storage.token_history == [first_pair, second_pair, third_pair]
    assert after_revocation[6][3]["bearer"] == crypto.digest(third_pair.access_token)
    assert token_row(app, third_pair.refresh_token).family_id != first_refresh.family_id
    assert [a["name"] for a in out["accounts_after_revocation"].structured_content["result"]] == [
        "Checking",
        "Salary",
    ]


async def connect_and_list(url, provider) -> dict:
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        return (await client.call_tool("list_accounts", {})).structured_content


def failure_of(coroutine) -> list[BaseException]:
    """Run what must fail; return what it raised, unwrapped."""
    try:
        asyncio.run(coroutine)
    except Exception as error:  # noqa: BLE001 - the SDK wraps its errors in task groups
        return raised(error)
    raise AssertionError("the SDK connected")


def raised(error: BaseException) -> list[BaseException]:
    """The error and everything inside it (task groups wrap what the SDK raises)."""
    found = [error]
    for inner in getattr(error, "exceptions", ()):
        found += raised(inner)
    if error.__cause__ is not None:
        found += raised(error.__cause__)
    return found


@pytest.mark.parametrize("compat", [False, True], ids=["compat-off", "compat-on"])
def test_sdk_with_a_localhost_redirect_uri_needs_the_compat_switch(
    app, traffic, live_server, make_user, authenticator, service_account, compat
):
    """Examples for the SDK commonly register http://localhost:<port>/callback. The service refuses
    a localhost redirect URI (docs/oauth.md "Clients"); OAUTH_CLIENT_COMPAT accepts it."""
    app.config["OAUTH_CLIENT_COMPAT"] = compat
    origin = live_server.origin
    make_user()
    service_account("Checking", "asset")
    browser = Browser(origin)
    SignIn(browser, authenticator).full()
    del traffic[:]
    localhost_redirect = "http://localhost:53682/callback"
    human = Human(browser, redirect_uri=localhost_redirect)
    storage = MemoryStorage()
    provider = provider_for(live_server.url, storage, human, redirect_uri=localhost_redirect)

    if not compat:
        errors = failure_of(connect_and_list(live_server.url, provider))
        registration_errors = [e for e in errors if isinstance(e, OAuthRegistrationError)]
        assert registration_errors, errors
        assert "invalid_redirect_uri" in str(registration_errors[0])
        register = [d for verb, path, status, d in traffic if path == "/oauth/register"]
        assert [d["reply"]["error"] for d in register] == ["invalid_redirect_uri"]
        assert ("GET", "/oauth/authorize", 303) not in [t[:3] for t in traffic]
        assert human.shown == [] and storage.client_info is None and storage.tokens is None
        with app.app_context():
            from sqlalchemy import text

            dynamic = db.session.execute(text("SELECT count(*) FROM oauth_clients WHERE dynamic"))
            assert dynamic.scalar_one() == 0
        return

    listed = asyncio.run(connect_and_list(live_server.url, provider))
    assert [a["name"] for a in listed["result"]] == ["Checking"]
    assert len(human.shown) == 1
    register = [d for verb, path, status, d in traffic if path == "/oauth/register"]
    assert register[0]["reply"]["redirect_uris"] == [localhost_redirect]
    exchange = [d["form"] for verb, path, status, d in traffic if path == "/oauth/token"]
    assert [(f["grant_type"], f["redirect_uri"]) for f in exchange] == [
        ("authorization_code", localhost_redirect)
    ]


def test_sdk_refuses_a_server_whose_canonical_origin_is_another_host(
    app, traffic, live_server, make_user
):
    """API_ORIGIN names localhost while the SDK was pointed at 127.0.0.1 (same port, same
    server): the metadata's `resource` is not the address connected to, so the SDK stops
    before registering anything. Connect to exactly {API_ORIGIN}/mcp."""
    make_user()
    canonical = f"http://localhost:{live_server.port}"
    app.config["API_ORIGIN"] = canonical
    human = Human(Browser(live_server.origin))
    storage = MemoryStorage()
    provider = provider_for(live_server.url, storage, human)

    errors = failure_of(connect_and_list(live_server.url, provider))
    flow_errors = [e for e in errors if isinstance(e, OAuthFlowError)]
    assert flow_errors, errors
    assert f"Protected resource {canonical} does not match" in str(flow_errors[0])
    assert [t[:3] for t in traffic] == [
        ("POST", "/mcp", 401),
        ("GET", "/.well-known/oauth-protected-resource", 200),
    ]
    assert human.shown == [] and storage.client_info is None


def test_official_sdk_signs_in_with_a_client_id_metadata_document(
    app,
    traffic,
    live_server,
    make_user,
    authenticator,
    service_account,
    document_server,
    monkeypatch,
):
    """The SDK's `client_metadata_url` (CIMD): the metadata says
    client_id_metadata_document_supported, so the SDK does not register; its client_id is
    the URL of a document served by a local HTTPS server (throwaway CA given to the service
    as SSL_CERT_FILE; OAUTH_CIMD_ALLOW_PRIVATE lets it reach 127.0.0.1). The service
    fetches the document once, the human approves, and the SDK (checking `iss`) gets in."""
    monkeypatch.setenv("SSL_CERT_FILE", str(document_server.ca_file))
    app.config["OAUTH_CIMD_ALLOW_PRIVATE"] = True
    document_url = document_server.document(
        "/sdk/assistant.json",
        client_name="SDK assistant (metadata document)",
        redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    origin = live_server.origin
    make_user()
    service_account("Checking", "asset")
    browser = Browser(origin)
    SignIn(browser, authenticator).full()
    del traffic[:]
    human = Human(browser)
    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=live_server.url,
        client_metadata=OAuthClientMetadata(
            client_name="SDK assistant", redirect_uris=[REDIRECT_URI]
        ),
        storage=storage,
        redirect_handler=human.redirect_handler,
        callback_handler=human.callback_handler,
        client_metadata_url=document_url,
    )

    listed = asyncio.run(connect_and_list(live_server.url, provider))

    assert [a["name"] for a in listed["result"]] == ["Checking"]
    steps = [(verb, path, status) for verb, path, status, _ in traffic]
    assert steps[:7] == [
        ("POST", "/mcp", 401),
        ("GET", "/.well-known/oauth-protected-resource", 200),
        ("GET", "/.well-known/oauth-authorization-server", 200),
        ("GET", "/oauth/authorize", 303),
        ("POST", "/oauth/authorize/approve", 200),
        ("POST", "/oauth/token", 200),
        ("POST", "/mcp", 200),
    ], steps
    assert "/oauth/register" not in [path for _, path, _ in steps]
    assert storage.client_info is not None and storage.client_info.client_id == document_url
    asked = dict(parse_qsl(urlsplit(human.shown[0]).query))
    assert asked["client_id"] == document_url
    exchange = traffic[5][3]["form"]
    assert exchange["client_id"] == document_url and "client_secret" not in exchange
    # The service fetched the document exactly once (cached: no caching header, one hour).
    assert document_server.requests == ["/sdk/assistant.json"]
    rows = token_rows(app)
    assert {row.client_id for row in rows.values()} == {document_url}
    # The human's consent page and token list name the client as its document says.
    info = browser.http.get(
        origin + "/oauth/client_info", params={"client_id": document_url}, timeout=30
    ).json()
    assert info == {
        "id": document_url,
        "name": "SDK assistant (metadata document)",
        "dynamic": True,
        "first_use": False,
        "redirect_uris": [REDIRECT_URI],
    }
    connections = browser.http.get(origin + "/auth/tokens", timeout=30).json()
    assert {c["client_name"] for c in connections if c["client_id"] == document_url} == {
        "SDK assistant (metadata document)"
    }


def test_sdk_with_a_client_id_metadata_document_the_service_cannot_use(
    app, traffic, live_server, make_user, authenticator, document_server, monkeypatch
):
    """The same SDK set-up with OAUTH_CIMD_ALLOW_PRIVATE off: the document sits on a
    loopback address, so the service never asks for it; the authorization request is
    refused as an unknown client and the human is never asked."""
    monkeypatch.setenv("SSL_CERT_FILE", str(document_server.ca_file))
    document_url = document_server.document("/sdk/assistant.json", redirect_uris=[REDIRECT_URI])
    make_user()
    browser = Browser(live_server.origin)
    SignIn(browser, authenticator).full()
    del traffic[:]
    refused: list = []

    class Refusing(Human):
        def approve(self, authorize_url):
            hop = self.browser.http.get(authorize_url, allow_redirects=False, timeout=30)
            refused.append((hop.status_code, hop.json()))
            raise RuntimeError("the service refused the authorization request")

    human = Refusing(browser)
    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=live_server.url,
        client_metadata=OAuthClientMetadata(client_name="SDK", redirect_uris=[REDIRECT_URI]),
        storage=storage,
        redirect_handler=human.redirect_handler,
        callback_handler=human.callback_handler,
        client_metadata_url=document_url,
    )
    failure_of(connect_and_list(live_server.url, provider))
    assert refused == [(401, {"error": "invalid_client", "error_description": "unknown client_id"})]
    assert document_server.connections == 0 and document_server.requests == []
    assert storage.tokens is None
