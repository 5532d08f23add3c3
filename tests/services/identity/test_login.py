"""POST /auth/login: the half-session, the identical refusal, and the per-email throttle."""

import base64

import pytest
from sqlalchemy import select

from app import create_app
from app.extensions import db
from app.models import LoginThrottle, Session
from app.services import crypto
from app.services.identity import passwords
from tests.support import PASSWORD, SESSION_COOKIE


def set_cookie_header(response) -> str:
    (header,) = [h for h in response.headers.getlist("Set-Cookie") if h.startswith("svc_session=")]
    return header


def session_rows(app):
    with app.app_context():
        return db.session.execute(select(Session)).scalars().all()


def test_login_gives_a_half_session_cookie(app, client, make_user):
    make_user()
    response = client.post("/auth/login", json={"email": "alice@example.com", "password": PASSWORD})
    assert response.status_code == 200
    assert response.get_json() == {"has_passkeys": False, "mfa_complete": False}
    header = set_cookie_header(response)
    attributes = [part.strip() for part in header.split(";")]
    assert "HttpOnly" in attributes and "SameSite=Lax" in attributes and "Path=/" in attributes
    assert "Secure" not in attributes  # API_ORIGIN is http in the tests
    assert "Max-Age=600" in attributes
    cookie = attributes[0].split("=", 1)[1]
    assert len(base64.urlsafe_b64decode(cookie + "=")) == 32  # 256 random bits
    (row,) = session_rows(app)
    assert row.id == crypto.digest(cookie) and cookie not in row.id  # only the digest is kept
    assert row.mfa_complete is False
    assert (row.expires_at - row.created_at).total_seconds() == 600


def test_cookie_is_secure_exactly_when_the_api_origin_is_https(app, app_config, make_user):
    make_user()
    https_app = create_app({**app_config, "API_ORIGIN": "https://ledger.example.org"})
    try:
        response = https_app.test_client().post(
            "/auth/login", json={"email": "alice@example.com", "password": PASSWORD}
        )
        assert response.status_code == 200
        assert "Secure" in [p.strip() for p in set_cookie_header(response).split(";")]
    finally:
        with https_app.app_context():
            db.engine.dispose()


def test_email_is_matched_case_insensitively(client, make_user):
    make_user()
    response = client.post(
        "/auth/login", json={"email": " Alice@Example.COM ", "password": PASSWORD}
    )
    assert response.status_code == 200


def test_wrong_password_and_unknown_email_are_identical(app, client, make_user):
    make_user()
    wrong = client.post("/auth/login", json={"email": "alice@example.com", "password": "nope-nope"})
    unknown = client.post("/auth/login", json={"email": "bob@example.com", "password": "nope-nope"})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.data == unknown.data
    assert wrong.get_json() == {"error": "wrong email or password"}
    assert wrong.headers["WWW-Authenticate"] == unknown.headers["WWW-Authenticate"]
    assert "Set-Cookie" not in wrong.headers and "Set-Cookie" not in unknown.headers
    assert session_rows(app) == []


def test_unknown_email_spends_a_real_verification_against_the_dummy_hash(
    app, client, make_user, monkeypatch
):
    """Same time on both paths: an unknown email still runs argon2, on the dummy hash."""
    make_user()
    seen = []
    real_verify = passwords.verify

    def spy(password, password_hash):
        seen.append(password_hash)
        return real_verify(password, password_hash)

    monkeypatch.setattr(passwords, "verify", spy)
    client.post("/auth/login", json={"email": "nobody@example.com", "password": "whatever1"})
    client.post("/auth/login", json={"email": "alice@example.com", "password": "whatever1"})
    assert len(seen) == 2
    with app.app_context():
        assert seen[0] == passwords.dummy_hash() and seen[0].startswith("$argon2")
    assert seen[1] != seen[0] and seen[1].startswith("$argon2")


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"email": "alice@example.com"},
        {"password": PASSWORD},
        {"email": 3, "password": "x"},
        {"email": "alice@example.com", "password": ["x"]},
        {"email": "a" * 250 + "@example.com", "password": PASSWORD},  # longer than any account
    ],
)
def test_malformed_login_is_400_and_counts_nothing(app, client, make_user, body):
    make_user()
    response = client.post("/auth/login", json=body)
    assert response.status_code == 400
    assert set(response.get_json()) == {"error"}
    with app.app_context():
        assert db.session.execute(select(LoginThrottle)).first() is None


def test_form_encoded_login_is_415(client, make_user):
    make_user()
    response = client.post("/auth/login", data={"email": "alice@example.com", "password": PASSWORD})
    assert response.status_code == 415
    assert "Set-Cookie" not in response.headers


def test_logging_in_again_replaces_the_previous_session(app, client, make_user):
    make_user()
    client.post("/auth/login", json={"email": "alice@example.com", "password": PASSWORD})
    first = client.get_cookie(SESSION_COOKIE).value
    client.post("/auth/login", json={"email": "alice@example.com", "password": PASSWORD})
    assert client.get_cookie(SESSION_COOKIE).value != first
    assert [r.id for r in session_rows(app)] == [
        crypto.digest(client.get_cookie(SESSION_COOKIE).value)
    ]


def test_login_records_last_seen(app, client, make_user, clock):
    from app.models import User

    make_user()
    client.post("/auth/login", json={"email": "alice@example.com", "password": PASSWORD})
    with app.app_context():
        assert db.session.execute(select(User.last_seen_at)).scalar_one() == clock()
