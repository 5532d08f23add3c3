"""Behind a reverse proxy: trusted X-Forwarded-* (off by default) and the body size limit."""

import json

import pytest


def _echo_app(make_app, **overrides):
    """The real app plus one test-only route that shows what the app believes about the request."""
    app = make_app(**overrides)

    @app.get("/_test/whoami")
    def whoami():
        from flask import request

        return {"remote_addr": request.remote_addr, "scheme": request.scheme, "host": request.host}

    whoami._tier = "open"
    return app


FORWARDED = {
    "X-Forwarded-For": "203.0.113.7",
    "X-Forwarded-Proto": "https",
    "X-Forwarded-Host": "books.example.org",
}


def test_forwarded_headers_are_ignored_by_default(make_app):
    client = _echo_app(make_app).test_client()
    seen = client.get(
        "/_test/whoami", headers=FORWARDED, environ_base={"REMOTE_ADDR": "10.0.0.2"}
    ).get_json()
    assert seen == {"remote_addr": "10.0.0.2", "scheme": "http", "host": "localhost"}


def test_forwarded_headers_are_trusted_from_configured_proxies(make_app):
    client = _echo_app(make_app, TRUSTED_PROXIES=1).test_client()
    seen = client.get(
        "/_test/whoami", headers=FORWARDED, environ_base={"REMOTE_ADDR": "10.0.0.2"}
    ).get_json()
    assert seen == {"remote_addr": "203.0.113.7", "scheme": "https", "host": "books.example.org"}


def test_only_the_configured_number_of_hops_is_trusted(make_app):
    client = _echo_app(make_app, TRUSTED_PROXIES=1).test_client()
    headers = dict(FORWARDED, **{"X-Forwarded-For": "198.51.100.9, 203.0.113.7"})
    seen = client.get("/_test/whoami", headers=headers).get_json()
    assert seen["remote_addr"] == "203.0.113.7"  # the spoofable left-most entry is not believed


@pytest.mark.parametrize(
    "path,method", [("/transactions", "post"), ("/accounts", "post"), ("/settings", "put")]
)
def test_oversized_body_is_413_in_the_ledger_shape(api, path, method):
    body = json.dumps({"name": "x" * (1024 * 1024 + 10), "kind": "asset"})
    response = getattr(api, method)(path, data=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert response.get_json() == {"error": "request entity too large"}
    assert api.get("/accounts").get_json() == []


def test_body_limit_is_configurable(make_app, make_user, mint):
    app = make_app(MAX_BODY_BYTES=100)
    make_user()
    client = app.test_client()
    headers = {"Authorization": f"Bearer {mint()}"}
    assert (
        client.post(
            "/accounts", json={"name": "Bank", "kind": "asset"}, headers=headers
        ).status_code
        == 201
    )
    response = client.post("/accounts", json={"name": "B" * 200, "kind": "asset"}, headers=headers)
    assert response.status_code == 413
