"""Sessions, challenges and throttle state live in the database: two app instances
built by create_app over one database behave as one service."""

import pytest

from app import create_app
from app.extensions import db
from tests.authenticator import SoftAuthenticator
from tests.support import PASSWORD, SESSION_COOKIE
from tests.testkit import SignIn


@pytest.fixture
def second_app(app, app_config):
    other = create_app(app_config)
    yield other
    with other.app_context():
        db.session.remove()
        db.engine.dispose()


def carry_cookie(source, target):
    cookie = source.get_cookie(SESSION_COOKIE)
    target.set_cookie(SESSION_COOKIE, cookie.value, domain="localhost")


def test_log_in_on_one_instance_elevate_on_the_other(app, second_app, make_user):
    make_user()
    authenticator = SoftAuthenticator()
    one, two = app.test_client(), second_app.test_client()
    assert SignIn(one, authenticator).password().status_code == 200
    carry_cookie(one, two)
    # the challenge is stored by instance two and consumed by instance one
    options = two.post("/auth/webauthn/register/begin").get_json()
    body = authenticator.create(options)
    carry_cookie(two, one)
    finish = one.post("/auth/webauthn/register/finish", json=body)
    assert finish.status_code == 200
    carry_cookie(one, two)
    assert two.get("/auth/me").get_json()["mfa_complete"] is True
    # logout on two ends the session on one as well
    assert two.post("/auth/logout").status_code == 204
    assert one.get("/auth/me").status_code == 401


def test_throttle_is_shared_between_instances(app, second_app, make_user, clock):
    make_user()
    one, two = app.test_client(), second_app.test_client()
    wrong = {"email": "alice@example.com", "password": "wrong password"}
    for client in (one, two, one, two):
        assert client.post("/auth/login", json=wrong).status_code == 401
    refused = one.post("/auth/login", json={"email": "alice@example.com", "password": PASSWORD})
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "2"
    clock.advance(2)
    assert (
        two.post(
            "/auth/login", json={"email": "alice@example.com", "password": PASSWORD}
        ).status_code
        == 200
    )


def test_a_replayed_challenge_is_refused_by_the_other_instance(app, second_app, make_user):
    make_user()
    authenticator = SoftAuthenticator()
    one, two = app.test_client(), second_app.test_client()
    SignIn(one, authenticator).password()
    carry_cookie(one, two)
    options = one.post("/auth/webauthn/register/begin").get_json()
    body = authenticator.create(options, user_verified=False)
    assert one.post("/auth/webauthn/register/finish", json=body).status_code == 400
    good = authenticator.create(options)
    assert two.post("/auth/webauthn/register/finish", json=good).status_code == 400
