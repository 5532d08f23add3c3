"""POST /mcp validates Origin (docs/mcp.md, "Origin"): the MCP transport requires
servers to refuse a foreign Origin against DNS rebinding. A foreign Origin is 403
`{error}` whatever the credential (a valid token, a session, none, a bad one); an
Origin naming the web app or the API, or none at all, is served as before.
"""

from __future__ import annotations

import pytest

from tests.support import API_ORIGIN, WEB_ORIGIN

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
FOREIGN = ["http://evil.example", "null", "http://localhost:38080.evil.example", "https://x"]


@pytest.mark.parametrize("origin", FOREIGN)
def test_a_foreign_origin_is_refused_with_a_valid_token(api, origin):
    response = api.post("/mcp", json=PING, headers={"Origin": origin})
    assert response.status_code == 403
    body = response.get_json()
    assert set(body) == {"error"} and body["error"]


@pytest.mark.parametrize(
    "credential",
    [{}, {"Authorization": "Bearer not-a-token"}],
    ids=["no-credential", "bad-token"],
)
def test_a_foreign_origin_is_refused_before_the_credential_counts(client, credential):
    response = client.post(
        "/mcp", json=PING, headers={"Origin": "http://evil.example", **credential}
    )
    assert response.status_code == 403  # not 401: the Origin is checked first
    assert set(response.get_json()) == {"error"}


def test_a_foreign_origin_is_refused_with_a_session(session_client):
    signed_in = session_client(mfa_complete=True)
    response = signed_in.post("/mcp", json=PING, headers={"Origin": "http://evil.example"})
    assert response.status_code == 403


@pytest.mark.parametrize("origin", [None, WEB_ORIGIN, API_ORIGIN, API_ORIGIN.upper() + "/"])
def test_our_own_origins_and_none_are_served(api, origin):
    headers = {"Origin": origin} if origin else {}
    response = api.post("/mcp", json=PING, headers=headers)
    assert response.status_code == 200
    assert response.get_json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_without_origin_the_credential_still_decides(client):
    assert client.post("/mcp", json=PING).status_code == 401
