"""The per-email password throttle: 3 free failures, then 2 s doubling, capped at 15 minutes."""

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import LoginThrottle, Session
from app.services.identity import passwords, users
from tests.support import PASSWORD


def attempt(client, email="alice@example.com", password="wrong password"):
    return client.post("/auth/login", json={"email": email, "password": password})


@pytest.mark.parametrize("email", ["alice@example.com", "nobody@example.com"])
def test_delay_starts_at_the_fourth_failure_doubles_and_caps(client, make_user, clock, email):
    """Known and unknown emails walk exactly the same ladder."""
    make_user()
    for _ in range(3):  # free failures: no delay at all between them
        assert attempt(client, email).status_code == 401

    expected = 2
    for _ in range(12):
        assert attempt(client, email).status_code == 401  # counted; starts/doubles the delay
        refused = attempt(client, email)
        assert refused.status_code == 429
        assert refused.get_json().keys() == {"error"}
        assert refused.headers["Retry-After"] == str(expected)
        clock.advance(expected - 1)
        assert attempt(client, email).headers["Retry-After"] == "1"  # still inside, not counted
        clock.advance(1)
        expected = min(expected * 2, 900)
    assert expected == 900  # 2, 4, ..., 512, then 900 (15 minutes) and it stays there
    assert attempt(client, email).status_code == 401
    assert attempt(client, email).headers["Retry-After"] == "900"


def test_right_password_inside_the_delay_is_refused(client, make_user, clock):
    make_user()
    for _ in range(4):
        attempt(client)
    refused = attempt(client, password=PASSWORD)
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "2"
    assert "Set-Cookie" not in refused.headers
    clock.advance(2)
    assert attempt(client, password=PASSWORD).status_code == 200


def test_success_clears_the_count(app, client, make_user, clock):
    make_user()
    for _ in range(4):
        attempt(client)
    clock.advance(2)
    assert attempt(client, password=PASSWORD).status_code == 200
    with app.app_context():
        assert db.session.execute(select(LoginThrottle)).first() is None
    for _ in range(3):  # three free failures again
        assert attempt(client).status_code == 401
    assert attempt(client).status_code == 401
    assert attempt(client).status_code == 429


def test_throttle_is_per_normalised_email(client, make_user):
    make_user()
    make_user("bob@example.com")
    for spelling in (
        "alice@example.com",
        "ALICE@example.com",
        " Alice@Example.com",
        "alice@EXAMPLE.com",
    ):
        assert attempt(client, spelling).status_code == 401
    assert attempt(client, "alice@example.com").status_code == 429
    # another account is unaffected
    assert attempt(client, "bob@example.com", PASSWORD).status_code == 200


def test_refusals_create_no_session(app, client, make_user):
    make_user()
    for _ in range(5):
        attempt(client)
    attempt(client, password=PASSWORD)
    with app.app_context():
        assert db.session.execute(select(Session)).first() is None
        row = db.session.execute(select(LoginThrottle)).scalar_one()
        assert row.email == "alice@example.com" and row.failures == 4


# POST /auth/password checks the current password behind the same throttle -----------


def change(client, current, new="a brand new secret"):
    return client.post("/auth/password", json={"current_password": current, "new_password": new})


def password_still(app, password):
    with app.app_context():
        user = users.find_user("alice@example.com")
        return passwords.verify(password, user.password_hash)[0]


def test_wrong_current_passwords_are_throttled_like_logins(app, session_client, clock):
    client = session_client(mfa_complete=True)
    for _ in range(4):  # 3 free, the 4th starts the 2 s delay; each a 400
        response = change(client, "wrong password")
        assert response.status_code == 400 and response.get_json().keys() == {"error"}
    refused = change(client, PASSWORD)  # even the right one, inside the delay
    assert refused.status_code == 429
    assert refused.get_json().keys() == {"error"}
    assert refused.headers["Retry-After"] == "2"
    assert password_still(app, PASSWORD)  # nothing changed
    assert client.get("/accounts").status_code == 200  # the session lives on
    with app.app_context():
        assert db.session.execute(select(LoginThrottle.failures)).scalar_one() == 4
    clock.advance(2)
    assert change(client, PASSWORD).status_code == 204
    assert password_still(app, "a brand new secret")
    with app.app_context():  # a successful change clears the count
        assert db.session.execute(select(LoginThrottle)).first() is None


def test_logins_and_password_changes_share_one_count(app, session_client, clock):
    client = session_client(mfa_complete=True)
    for _ in range(3):  # wrong logins (the full session is still held and untouched)
        assert attempt(client).status_code == 401
    assert change(client, "wrong password").status_code == 400  # the 4th failure
    assert change(client, PASSWORD).headers["Retry-After"] == "2"
    assert attempt(client, password=PASSWORD).status_code == 429
    clock.advance(2)
    assert change(client, "wrong password").status_code == 400  # the 5th: 4 s
    assert attempt(client, password=PASSWORD).headers["Retry-After"] == "4"
    assert password_still(app, PASSWORD)
