"""The per-email password throttle: 3 free failures, then 2 s doubling, capped at 15 minutes."""

import pytest
from tests.conftest import PASSWORD
from sqlalchemy import select

from app.extensions import db
from app.models import LoginThrottle, Session


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
