"""The access tiers, walked over the app's whole URL map so later routes are covered too.

- open: only the routes docs/auth.md "The three access tiers" lists as open;
- half-session: exactly the four WebAuthn routes (plus the open ones);
- full: everything else, and a half-session there gets the 401 challenge;
- session-only: the six docs/auth.md names and PUT /books/lock, each refusing a bearer
  token with 403;
- CSRF: a cookie-authenticated write with a non-JSON body is 415 and changes nothing.
"""

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Account, Session, Transaction
from tests.routes.route_table import WRITE_METHODS, routes
from tests.support import PASSWORD

SPEC_OPEN = {
    ("GET", "/health"),
    ("POST", "/auth/login"),
    ("POST", "/auth/logout"),
    ("GET", "/.well-known/oauth-protected-resource"),
    ("GET", "/.well-known/oauth-authorization-server"),
    ("GET", "/oauth/authorize"),
    ("POST", "/oauth/token"),
    ("POST", "/oauth/device_authorization"),
    ("POST", "/oauth/register"),
    ("POST", "/oauth/revoke"),
}
SPEC_HALF = {
    ("POST", "/auth/webauthn/register/begin"),
    ("POST", "/auth/webauthn/register/finish"),
    ("POST", "/auth/webauthn/auth/begin"),
    ("POST", "/auth/webauthn/auth/finish"),
}
SPEC_SESSION_ONLY = {
    ("POST", "/auth/password"),
    ("DELETE", "/auth/passkeys/<passkey_id>"),
    ("DELETE", "/auth/tokens/<token_id>"),
    ("POST", "/oauth/authorize/approve"),
    ("GET", "/oauth/device_info"),
    ("POST", "/oauth/device/approve"),
    ("PUT", "/books/lock"),  # docs/ledger.md: a person moves the lock, never a token
    ("POST", "/budgets/<int:budget_id>/approve"),  # docs/ledger.md: a person approves a budget
}


def tier(view):
    return getattr(view, "_tier", "full")


def test_open_and_half_routes_are_exactly_what_spec_lists(app):
    found = routes(app)
    open_routes = {(m, r) for m, r, _, v in found if tier(v) == "open"}
    half_routes = {(m, r) for m, r, _, v in found if tier(v) == "half"}
    assert open_routes <= SPEC_OPEN
    assert {("GET", "/health"), ("POST", "/auth/login"), ("POST", "/auth/logout")} <= open_routes
    assert half_routes == SPEC_HALF


def test_half_session_is_refused_on_every_full_route(app, session_client):
    client = session_client(mfa_complete=False)
    checked = 0
    for method, rule, url, view in routes(app):
        if tier(view) != "full":
            continue
        response = client.open(url, method=method, json={})
        assert response.status_code == 401, (method, rule)
        assert response.headers["WWW-Authenticate"].startswith("Bearer resource_metadata="), rule
        assert set(response.get_json()) == {"error"}
        checked += 1
    assert checked >= 15  # ledger, reports and /auth full routes at least


def test_half_session_reaches_the_webauthn_routes_and_logout(signin, client):
    signin.password()
    for method, path in sorted(SPEC_HALF):
        response = client.open(path, method=method, json={})
        assert response.status_code != 401, path  # it got past the tier (400/403 from the ceremony)
    assert client.post("/auth/logout").status_code == 204


def test_session_only_routes_are_spec_six_and_refuse_bearer_tokens(app, client, make_user, mint):
    make_user()
    headers = {"Authorization": f"Bearer {mint()}"}
    session_only = [(m, r, u) for m, r, u, v in routes(app) if getattr(v, "_session_only", False)]
    found = {(m, r) for m, r, _ in session_only}
    assert found <= SPEC_SESSION_ONLY
    assert {(m, r) for m, r in SPEC_SESSION_ONLY if r.startswith("/auth/")} <= found
    for method, rule, url in session_only:
        response = client.open(url, method=method, json={}, headers=headers)
        assert response.status_code == 403, (method, rule)


def test_every_cookie_reachable_write_refuses_non_json_bodies(app, signin, client):
    """A cross-site form can only send form or text/plain bodies; none is accepted."""
    signin.full()
    for method, rule, url, view in routes(app):
        if method not in WRITE_METHODS - {"DELETE"} or tier(view) == "open":
            continue
        for kwargs in (
            {"data": {"name": "x", "kind": "asset"}},
            {"data": '{"name": "x", "kind": "asset"}', "content_type": "text/plain"},
        ):
            response = client.open(url, method=method, **kwargs)
            assert response.status_code == 415, (method, rule, kwargs)
            assert "error" in response.get_json()  # {error} or the OAuth shape


def test_form_posts_with_a_valid_cookie_change_nothing(app, signin, client):
    signin.full()
    account = client.post("/accounts", json={"name": "Bank", "kind": "asset"}).get_json()["id"]
    attempts = [
        ("POST", "/accounts", {"name": "Evil", "kind": "asset"}),
        (
            "POST",
            "/transactions",
            {
                "occurred_on": "2026-11-21",
                "description": "x",
                "entries": str([{"account_id": account, "amount_cents": 0}]),
            },
        ),
        ("PUT", "/settings", {"book_style": "club"}),
        (
            "POST",
            "/auth/password",
            {"current_password": PASSWORD, "new_password": "evil evil evil"},
        ),
    ]
    for method, path, form in attempts:
        assert client.open(path, method=method, data=form).status_code == 415, path
    with app.app_context():
        assert db.session.execute(select(func.count(Account.id))).scalar_one() == 1
        assert db.session.execute(select(func.count(Transaction.id))).scalar_one() == 0
        assert db.session.execute(select(func.count(Session.id))).scalar_one() == 1
    assert client.get("/settings").get_json() == {"book_style": "personal"}
    client.post("/auth/logout")
    assert signin.password(password=PASSWORD).status_code == 200


@pytest.mark.parametrize("header", ["Bearer svc_not_a_token", "Basic abc", "Bearer "])
def test_bad_authorization_header_does_not_fall_back_to_the_cookie(signin, client, header):
    signin.full()
    response = client.get("/accounts", headers={"Authorization": header})
    assert response.status_code == 401
