"""Every row of the session table (app/services/identity/sessions.py), through the real
endpoints and the FakeClock."""

from datetime import timedelta

import pytest
from sqlalchemy import select

from app import store
from app.extensions import db
from app.models import Session, Token
from app.services import crypto
from tests.support import PASSWORD, SESSION_COOKIE


def rows(app):
    with app.app_context():
        return db.session.execute(select(Session)).scalars().all()


def use_cookie(client, value):
    client.set_cookie(SESSION_COOKIE, value, domain="localhost")


# none -> half-session ------------------------------------------------------------


def test_half_session_reaches_webauthn_and_logout_only(signin, client):
    assert signin.password().status_code == 200
    assert client.get("/accounts").status_code == 401
    assert client.get("/auth/me").status_code == 401
    assert client.post("/auth/webauthn/register/begin").status_code == 200
    assert client.post("/auth/logout").status_code == 204


def test_half_session_lasts_ten_minutes_fixed(signin, client, clock):
    signin.password()
    clock.advance(minutes=9, seconds=59)
    assert client.post("/auth/webauthn/register/begin").status_code == 200
    clock.advance(1)
    response = client.post("/auth/webauthn/register/begin")
    assert response.status_code == 401
    assert "resource_metadata=" in response.headers["WWW-Authenticate"]


# half-session -> full session (both ceremonies) -----------------------------------


def test_first_registration_elevates_and_rotates(app, signin, client, clock):
    signin.password()
    half = signin.cookie()
    clock.advance(60)
    finish = signin.register()
    assert finish.status_code == 200
    assert finish.get_json() == {"mfa_complete": True}
    full = signin.cookie()
    assert full != half
    (row,) = rows(app)
    assert row.id == crypto.digest(full) and row.mfa_complete
    assert row.expires_at == clock() + timedelta(days=30)  # reset at elevation, not creation
    assert client.get("/auth/me").get_json()["mfa_complete"] is True
    use_cookie(client, half)  # the pre-elevation cookie is dead everywhere
    assert client.get("/auth/me").status_code == 401
    assert client.post("/auth/webauthn/auth/begin").status_code == 401


def test_authentication_elevates_and_rotates(app, signin, client, clock):
    signin.full()
    client.post("/auth/logout")
    signin.password()
    half = signin.cookie()
    clock.advance(120)
    finish = signin.assert_passkey()
    assert finish.status_code == 200 and finish.get_json() == {"mfa_complete": True}
    assert "Max-Age=2592000" in finish.headers["Set-Cookie"]
    assert signin.cookie() != half
    (row,) = rows(app)
    assert row.expires_at == clock() + timedelta(days=30)
    assert client.get("/accounts").status_code == 200
    use_cookie(client, half)
    assert client.get("/accounts").status_code == 401


def test_full_session_expiry_never_slides(signin, client, clock):
    signin.full()
    for _ in range(29):
        clock.advance(days=1)
        assert client.get("/accounts").status_code == 200  # use does not extend it
    clock.advance(days=1, seconds=-1)
    assert client.get("/accounts").status_code == 200
    clock.advance(1)
    assert client.get("/accounts").status_code == 401


def test_session_ttl_days_is_honoured(app_config, app, make_user, authenticator, clock):
    from app import create_app
    from tests.testkit import SignIn

    make_user()
    short = create_app({**app_config, "SESSION_TTL_DAYS": 2})
    try:
        signin = SignIn(short.test_client(), authenticator)
        signin.full()
        clock.advance(days=2, seconds=-1)
        assert signin.client.get("/accounts").status_code == 200
        clock.advance(1)
        assert signin.client.get("/accounts").status_code == 401
    finally:
        with short.app_context():
            db.engine.dispose()


def test_failed_ceremony_leaves_the_session_half(app, signin, client):
    signin.password()
    half = signin.cookie()
    assert signin.register(user_verified=False).status_code == 400
    assert signin.cookie() == half
    (row,) = rows(app)
    assert row.mfa_complete is False
    assert client.get("/accounts").status_code == 401


# any session -> none (logout) -------------------------------------------------------


def test_logout_ends_a_full_session(app, signin, client):
    signin.full()
    cookie = signin.cookie()
    response = client.post("/auth/logout")
    assert response.status_code == 204
    assert "svc_session=;" in response.headers["Set-Cookie"]
    assert "Max-Age=0" in response.headers["Set-Cookie"]
    assert rows(app) == []
    use_cookie(client, cookie)  # replaying the cookie does not bring it back
    assert client.get("/accounts").status_code == 401


def test_logout_ends_a_half_session(app, signin, client):
    signin.password()
    cookie = signin.cookie()
    assert client.post("/auth/logout").status_code == 204
    assert rows(app) == []
    use_cookie(client, cookie)
    assert client.post("/auth/webauthn/register/begin").status_code == 401


def test_logout_without_a_session_is_204(client):
    assert client.post("/auth/logout").status_code == 204
    use_cookie(client, "not-a-session")
    assert client.post("/auth/logout").status_code == 204


@pytest.mark.parametrize(
    "body",
    [
        {"data": {"a": "b"}},  # application/x-www-form-urlencoded
        {"data": b"", "content_type": "application/x-www-form-urlencoded"},  # an empty form
        {"data": {"a": "b"}, "content_type": "multipart/form-data"},
        {"data": "{}", "content_type": "text/plain"},
    ],
)
def test_logout_refuses_a_non_json_body_and_keeps_the_session(app, signin, client, body):
    signin.full()
    response = client.post("/auth/logout", **body)
    assert response.status_code == 415
    assert set(response.get_json()) == {"error"}
    assert "Set-Cookie" not in response.headers
    assert len(rows(app)) == 1
    assert client.get("/accounts").status_code == 200


@pytest.mark.parametrize("body", [{}, {"json": {}}])
def test_logout_with_no_body_or_a_json_body_is_204(app, signin, client, body):
    signin.full()
    assert client.post("/auth/logout", **body).status_code == 204
    assert rows(app) == []


def test_logout_touches_only_the_callers_session(app, signin, client, make_user):
    other_cookie = _second_session(app, make_user)  # e.g. another browser
    signin.password()
    assert client.post("/auth/logout").status_code == 204
    assert [r.id for r in rows(app)] == [crypto.digest(other_cookie)]
    use_cookie(client, other_cookie)
    assert client.get("/accounts").status_code == 200


# any session of a user -> none (password change, admin reset, admin removal) --------


def _second_session(app, make_user, email="alice@example.com"):
    from app.services.identity import sessions, users

    with app.app_context():
        user = users.find_user(email)
        cookie = sessions.create(user.id, mfa_complete=True)
        store.commit()
        return cookie


def test_password_change_ends_every_session_and_revokes_every_token(
    app, signin, client, make_user, mint
):
    signin.full()
    other = _second_session(app, make_user)
    token = mint()
    response = client.post(
        "/auth/password",
        json={"current_password": PASSWORD, "new_password": "a brand new secret"},
    )
    assert response.status_code == 204
    assert "Max-Age=0" in response.headers["Set-Cookie"]
    assert rows(app) == []
    with app.app_context():
        assert all(t.revoked_at is not None for t in db.session.execute(select(Token)).scalars())
    assert client.get("/accounts").status_code == 401
    use_cookie(client, other)
    assert client.get("/accounts").status_code == 401
    assert client.get("/accounts", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    assert signin.password(password=PASSWORD).status_code == 401
    assert signin.password(password="a brand new secret").status_code == 200


def test_password_change_refusals_change_nothing(app, signin, client, mint):
    signin.full()
    token = mint()
    cases = [
        ({"current_password": "not my password", "new_password": "a brand new secret"}, 400),
        ({"current_password": PASSWORD, "new_password": "short"}, 400),
        ({"current_password": PASSWORD}, 400),
        ({"current_password": PASSWORD, "new_password": 12345678}, 400),
    ]
    for body, status in cases:
        response = client.post("/auth/password", json=body)
        assert response.status_code == status, body
        assert set(response.get_json()) == {"error"}
    form = client.post(
        "/auth/password", data={"current_password": PASSWORD, "new_password": "a brand new one"}
    )
    assert form.status_code == 415
    bearer = client.post(
        "/auth/password",
        json={"current_password": PASSWORD, "new_password": "a brand new secret"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert bearer.status_code == 403
    assert client.get("/accounts").status_code == 200  # session untouched
    assert client.get("/accounts", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    client.post("/auth/logout")
    assert signin.password(password=PASSWORD).status_code == 200


def test_half_session_cannot_change_the_password(signin, client):
    signin.password()
    response = client.post(
        "/auth/password", json={"current_password": PASSWORD, "new_password": "a brand new secret"}
    )
    assert response.status_code == 401


# GET /auth/me -------------------------------------------------------------------------


def test_me_for_a_session_and_for_a_bearer(signin, client, mint):
    signin.full()
    assert client.get("/auth/me").get_json() == {
        "email": "alice@example.com",
        "mfa_complete": True,
        "has_passkeys": True,
        "auth": "session",
    }
    token = mint()
    client.post("/auth/logout")
    me = client.get("/auth/me", headers={"Authorization": f"Bearer {token}"})
    assert me.get_json() == {
        "email": "alice@example.com",
        "mfa_complete": True,
        "has_passkeys": True,
        "auth": "bearer",
    }
    assert client.get("/auth/me").status_code == 401
