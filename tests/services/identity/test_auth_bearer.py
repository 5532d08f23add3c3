"""Bearer authentication on the ledger routes: the 401 challenge and token lifecycle."""

import pytest

from app import store
from app.extensions import db
from app.models import Token
from app.services import crypto

CHALLENGE = 'Bearer resource_metadata="http://localhost:38081/.well-known/oauth-protected-resource"'
FULL_ROUTES = [
    ("get", "/accounts"),
    ("post", "/accounts"),
    ("get", "/transactions"),
    ("post", "/transactions"),
    ("delete", "/transactions/1"),
    ("get", "/settings"),
    ("put", "/settings"),
    ("get", "/reports/balances"),
    ("get", "/reports/income-statement"),
    ("get", "/reports/balance-sheet"),
]


def assert_challenge(response):
    assert response.status_code == 401
    assert response.get_json() == {"error": "authentication required"}
    assert response.headers["WWW-Authenticate"] == CHALLENGE


@pytest.mark.parametrize("method,path", FULL_ROUTES)
def test_no_credential_gets_the_challenge(client, method, path):
    assert_challenge(getattr(client, method)(path, json={}))


@pytest.mark.parametrize(
    "header", ["Bearer svc_notatoken", "Bearer ", "Basic dXNlcjpwYXNz", "svc_abc", "Bearer  "]
)
def test_invalid_credentials_get_the_challenge(client, make_user, header):
    make_user()
    assert_challenge(client.get("/accounts", headers={"Authorization": header}))


def test_valid_token_is_accepted_and_last_use_recorded(app, client, make_user, mint, clock):
    make_user()
    token = mint()
    response = client.get("/accounts", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    with app.app_context():
        row = db.session.get(Token, crypto.digest(token))
        assert row.last_used_at == clock()


def test_expired_token_is_refused(client, make_user, mint, clock):
    make_user()
    token = mint(days=1)
    headers = {"Authorization": f"Bearer {token}"}
    clock.advance(days=1, seconds=-1)
    assert client.get("/accounts", headers=headers).status_code == 200
    clock.advance(seconds=1)
    assert_challenge(client.get("/accounts", headers=headers))


def test_revoked_token_is_refused(app, client, make_user, mint, clock):
    make_user()
    token = mint()
    with app.app_context():
        db.session.get(Token, crypto.digest(token)).revoked_at = clock()
        store.commit()
    assert_challenge(client.get("/accounts", headers={"Authorization": f"Bearer {token}"}))


def test_token_for_another_audience_is_refused(app, client, make_user, mint):
    make_user()
    token = mint()
    with app.app_context():
        db.session.get(Token, crypto.digest(token)).audience = "http://other.example:38081"
        store.commit()
    assert_challenge(client.get("/accounts", headers={"Authorization": f"Bearer {token}"}))


def test_token_is_stored_only_as_its_digest(app, make_user, mint):
    make_user()
    token = mint()
    assert token.startswith("svc_") and len(token) >= 4 + 43
    with app.app_context():
        ids = [t.id for t in db.session.query(Token)]
    assert ids == [crypto.digest(token)]
    assert token not in ids


def test_health_needs_no_credential(client):
    response = client.get("/health")
    assert response.status_code == 200
    assert response.data == b"ok"
    assert response.mimetype == "text/plain"


def test_last_use_is_kept_even_when_the_request_then_fails(app, client, make_user, mint, clock):
    make_user()
    token = mint()
    response = client.post(
        "/accounts",
        json={"name": "", "kind": "asset"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 400
    with app.app_context():
        assert db.session.get(Token, crypto.digest(token)).last_used_at == clock()


def test_last_use_is_refreshed_at_most_once_a_minute(app, client, make_user, mint, clock):
    make_user()
    token = mint()
    headers = {"Authorization": f"Bearer {token}"}
    first = clock()
    client.get("/accounts", headers=headers)
    clock.advance(seconds=59)
    client.get("/accounts", headers=headers)
    with app.app_context():
        assert db.session.get(Token, crypto.digest(token)).last_used_at == first
    clock.advance(seconds=1)
    client.get("/accounts", headers=headers)
    with app.app_context():
        assert db.session.get(Token, crypto.digest(token)).last_used_at == clock()
