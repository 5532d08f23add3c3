"""GET /oauth/authorize, GET /oauth/client_info, POST /oauth/authorize/approve."""

from urllib.parse import quote, urlsplit

import pytest

from app.extensions import db
from app.models import AuthorizationCode, OAuthClient
from tests.services.oauth.flow import API_ORIGIN, REDIRECT, assert_oauth_error, query_of

WEB_ORIGIN = "http://localhost:38080"


def test_valid_request_redirects_303_to_the_web_app_with_the_identical_query(client, oauth):
    raw = (
        "client_id=svc-cli&redirect_uri=http%3A%2F%2F127.0.0.1%3A53682%2Fcallback"
        f"&response_type=code&code_challenge={oauth.challenge}&code_challenge_method=S256"
        "&resource=http%3A%2F%2Flocalhost%3A38081&state=a%2Bb"
    )
    response = client.get("/oauth/authorize?" + raw)
    assert response.status_code == 303
    assert response.headers["Location"] == f"{WEB_ORIGIN}/authorize?{raw}"
    assert "Cache-Control" not in response.headers


def test_authorize_makes_no_session_check(client, oauth):
    # No cookie, no token: the request is only validated and passed on.
    assert client.get("/oauth/authorize", query_string=oauth.params()).status_code == 303


@pytest.mark.parametrize(
    "missing",
    [
        "client_id",
        "redirect_uri",
        "response_type",
        "code_challenge",
        "code_challenge_method",
        "resource",
    ],
)
def test_missing_required_parameter_is_plain_text_400(client, oauth, missing):
    response = client.get("/oauth/authorize", query_string=oauth.params(**{missing: None}))
    assert response.status_code == 400
    assert response.mimetype == "text/plain"
    assert missing in response.get_data(as_text=True)


def test_state_is_optional(client, oauth):
    assert client.get("/oauth/authorize", query_string=oauth.params(state=None)).status_code == 303


@pytest.mark.parametrize(
    "override",
    [
        {"response_type": "token"},
        {"code_challenge_method": "plain"},
        {"code_challenge": "a" * 42},
        {"code_challenge": "a" * 129},
        {"code_challenge": "a" * 42 + "!"},
        {"redirect_uri": "http://127.0.0.1:53682/other"},
        {"redirect_uri": "http://localhost:53682/callback"},
        {"redirect_uri": "https://evil.example/callback"},
        {"resource": "http://127.0.0.1:38081"},
        {"resource": "https://localhost:38081"},
        {"resource": "http://localhost:38082"},
        {"resource": "http://localhost:38081/mcp"},
        {"resource": "http://[localhost:38081"},
        {"resource": "http://localhost:38081?x=1"},
        {"resource": "http://localhost:38081#"},
        {"resource": "http://localhost:38081//"},
        {"resource": "http://user@localhost:38081"},
    ],
)
def test_invalid_request_is_json_400_never_a_redirect(client, oauth, override):
    response = client.get("/oauth/authorize", query_string=oauth.params(**override))
    assert_oauth_error(response, "invalid_request", 400)
    assert "Location" not in response.headers


@pytest.mark.parametrize("resource", ["HTTP://LOCALHOST:38081", "http://localhost:38081/"])
def test_resource_is_compared_after_canonicalisation(client, oauth, resource):
    response = client.get("/oauth/authorize", query_string=oauth.params(resource=resource))
    assert response.status_code == 303


def test_unknown_client_is_401_invalid_client(client, oauth):
    response = client.get("/oauth/authorize", query_string=oauth.params(client_id="nobody"))
    assert_oauth_error(response, "invalid_client", 401)


@pytest.mark.parametrize(
    "bad", ["%C3%A9", "%7F", "%00", "%0A", "\u00e9".encode().decode("latin-1")]
)
def test_bytes_outside_printable_ascii_are_refused(client, oauth, bad):
    base = (
        f"client_id=svc-cli&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback&response_type=code"
        f"&code_challenge={oauth.challenge}&code_challenge_method=S256"
        f"&resource=http%3A%2F%2Flocalhost%3A38081"
    )
    environ = {"QUERY_STRING": base + "&state=x" + bad}
    response = client.get("/oauth/authorize", environ_overrides=environ)
    assert_oauth_error(response, "invalid_request", 400)


def test_client_info_needs_a_full_credential(client, session_client, oauth):
    response = client.get("/oauth/client_info", query_string={"client_id": "svc-cli"})
    assert response.status_code == 401
    assert response.get_json() == {"error": "authentication required"}
    assert "resource_metadata=" in response.headers["WWW-Authenticate"]
    session_client(mfa_complete=False)
    assert (
        client.get("/oauth/client_info", query_string={"client_id": "svc-cli"}).status_code == 401
    )
    oauth.human()
    assert (
        client.get("/oauth/client_info", query_string={"client_id": "svc-cli"}).status_code == 200
    )


def test_client_info_unknown_client(api):
    response = api.get("/oauth/client_info", query_string={"client_id": "dyn_nope"})
    assert_oauth_error(response, "invalid_client", 401)


def test_client_info_reads_the_stored_name_and_first_use(client, oauth):
    registered = client.post(
        "/oauth/register",
        json={"redirect_uris": ["https://app.example/cb"], "client_name": "Honest App"},
    ).get_json()
    oauth.human()
    info = client.get(
        "/oauth/client_info", query_string={"client_id": registered["client_id"], "name": "Bank"}
    ).get_json()
    assert info == {
        "id": registered["client_id"],
        "name": "Honest App",
        "dynamic": True,
        "first_use": True,
        "redirect_uris": ["https://app.example/cb"],
    }
    oauth.code(client_id=registered["client_id"], redirect_uri="https://app.example/cb")
    info = client.get("/oauth/client_info", query_string={"client_id": registered["client_id"]})
    assert info.get_json()["first_use"] is False


def test_approve_issues_a_code_bound_to_the_request(app, oauth, clock):
    oauth.human()
    response = oauth.approve(True)
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    redirect = response.get_json()["redirect"]
    assert redirect.startswith(REDIRECT + "?")
    params = query_of(redirect)
    assert params["state"] == "xyz" and params["code"]
    assert params["iss"] == API_ORIGIN  # RFC 9207
    with app.app_context():
        row = db.session.query(AuthorizationCode).one()
        assert row.client_id == "svc-cli" and row.redirect_uri == REDIRECT
        assert row.code_challenge == oauth.challenge and row.resource == API_ORIGIN
        assert (row.expires_at - row.created_at).total_seconds() == 60
        client = db.session.get(OAuthClient, "svc-cli")
        assert client.first_used_at == clock() and client.last_used_at == clock()


def test_approve_false_redirects_with_access_denied_and_stores_nothing(app, oauth):
    oauth.human()
    response = oauth.approve(False)
    assert response.status_code == 200
    redirect = f"{REDIRECT}?error=access_denied&state=xyz&iss={quote(API_ORIGIN, safe='')}"
    assert response.get_json() == {"redirect": redirect}
    with app.app_context():
        assert db.session.query(AuthorizationCode).count() == 0
        assert db.session.get(OAuthClient, "svc-cli").first_used_at is None


def test_approve_keeps_an_existing_query_on_the_redirect_uri(client, oauth):
    reg = client.post("/oauth/register", json={"redirect_uris": ["https://a.example/cb?x=1"]})
    oauth.human()
    response = oauth.approve(
        True,
        client_id=reg.get_json()["client_id"],
        redirect_uri="https://a.example/cb?x=1",
        state=None,
    )
    redirect = response.get_json()["redirect"]
    assert urlsplit(redirect).query.startswith("x=1&code=")
    assert "state" not in query_of(redirect)
    assert query_of(redirect)["iss"] == API_ORIGIN


def test_approve_revalidates_the_whole_request(app, oauth):
    oauth.human()
    assert_oauth_error(oauth.approve(True, response_type="token"), "invalid_request", 400)
    assert_oauth_error(oauth.approve(True, code_challenge_method="plain"), "invalid_request")
    assert_oauth_error(oauth.approve(True, redirect_uri="https://x.example/"), "invalid_request")
    assert_oauth_error(oauth.approve(True, resource="http://localhost:1"), "invalid_request")
    assert_oauth_error(oauth.approve(True, resource=None), "invalid_request")
    assert_oauth_error(oauth.approve(True, client_id="nobody"), "invalid_client", 401)
    assert_oauth_error(oauth.approve(True, state="caf\u00e9"), "invalid_request")
    assert_oauth_error(oauth.approve("yes"), "invalid_request")
    with app.app_context():
        assert db.session.query(AuthorizationCode).count() == 0


def test_approve_refuses_a_bearer_token_with_403_invalid_client(api, oauth):
    response = api.post("/oauth/authorize/approve", json={**oauth.params(), "approve": True})
    body = assert_oauth_error(response, "invalid_client", 403)
    assert "web app" in body["error_description"] and "token" in body["error_description"]


def test_approve_needs_a_full_session(client, session_client, oauth):
    response = oauth.approve(True)
    assert response.status_code == 401
    assert response.get_json() == {"error": "authentication required"}
    session_client(mfa_complete=False)
    assert oauth.approve(True).status_code == 401


def test_approve_body_must_be_json(client, oauth):
    oauth.human()
    response = client.post(
        "/oauth/authorize/approve",
        data="approve=true",
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 415
