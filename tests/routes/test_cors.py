"""CORS: only WEB_ORIGIN, with credentials."""

WEB = "http://localhost:38080"


def test_web_origin_is_allowed_with_credentials(api):
    response = api.get("/accounts", headers={"Origin": WEB})
    assert response.headers["Access-Control-Allow-Origin"] == WEB
    assert response.headers["Access-Control-Allow-Credentials"] == "true"


def test_a_request_without_origin_gets_no_cors_headers(api):
    """A script, curl or the MCP SDK sends no Origin: no CORS answer at all (flask-cors's
    default would name WEB_ORIGIN on every response), but Vary: Origin still, so a cache
    keeps it apart from the web app's answers."""
    for response in (api.get("/accounts"), api.get("/health"), api.get("/nowhere")):
        assert not [name for name, _value in response.headers if name.startswith("Access-Control-")]
        assert "Origin" in response.headers["Vary"]


def test_other_origins_get_no_allow_origin(api):
    for origin in [
        "http://evil.example",
        "http://127.0.0.1:38080",
        "https://localhost:38080",
        "http://localhost:38081",
    ]:
        response = api.get("/accounts", headers={"Origin": origin})
        assert "Access-Control-Allow-Origin" not in response.headers


def test_preflight_allows_the_documented_methods_and_headers(client):
    response = client.options(
        "/transactions",
        headers={
            "Origin": WEB,
            "Access-Control-Request-Method": "DELETE",
            "Access-Control-Request-Headers": "Content-Type, Authorization",
        },
    )
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == WEB
    methods = {m.strip() for m in response.headers["Access-Control-Allow-Methods"].split(",")}
    assert methods == {"GET", "POST", "PUT", "DELETE", "OPTIONS"}
    headers = {
        h.strip().lower() for h in response.headers["Access-Control-Allow-Headers"].split(",")
    }
    assert headers == {"content-type", "authorization"}


def test_preflight_from_another_origin_is_not_allowed(client):
    response = client.options(
        "/transactions",
        headers={
            "Origin": "http://evil.example",
            "Access-Control-Request-Method": "POST",
        },
    )
    assert "Access-Control-Allow-Origin" not in response.headers


def test_preflight_refuses_other_request_headers(client):
    response = client.options(
        "/accounts",
        headers={
            "Origin": WEB,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "X-Evil",
        },
    )
    assert "x-evil" not in response.headers.get("Access-Control-Allow-Headers", "").lower()
