"""Races: several threads against one WSGI app, each with its own test client, released
together by a barrier. Every round must have exactly one winner and leave no orphan
tokens. The rule holds by construction (a DELETE or conditional UPDATE that must touch
exactly one row, committed with the token inserts), so it is checked on both dialects;
PostgreSQL, where requests truly run in parallel, gets the most rounds."""

import threading

import pytest

from app.extensions import db
from app.models import Token
from tests.oauth.flow import FORM

THREADS = 4


@pytest.fixture
def rounds(dialect):
    return 30 if dialect == "postgresql" else 8


def race(app, form=None, send=None) -> list:
    """Send the same request from THREADS threads at once; returns (status, body) pairs.

    By default the request is a token request with `form`; `send(client)` overrides it.
    """
    barrier = threading.Barrier(THREADS)
    results, errors = [None] * THREADS, []
    if send is None:

        def send(client):
            return client.post("/oauth/token", data=form, content_type=FORM)

    def run(i):
        client = app.test_client()
        try:
            barrier.wait(timeout=10)
            response = send(client)
            results[i] = (response.status_code, response.get_json())
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    return results


def one_winner(results) -> dict:
    winners = [body for status, body in results if status == 200]
    losers = [body for status, body in results if status != 200]
    assert len(winners) == 1, results
    assert all(status == 400 for status, _ in results if status != 200), results
    assert all(body["error"] == "invalid_grant" for body in losers), results
    return winners[0]


def assert_no_orphans(app, expected_tokens: int) -> None:
    with app.app_context():
        rows = db.session.query(Token).all()
        ids = {t.id for t in rows}
        assert len(rows) == expected_tokens
        assert all(t.parent_id is None or t.parent_id in ids for t in rows)
        assert all(t.family_id in ids for t in rows)
        for access in (t for t in rows if t.kind == "access"):
            assert access.parent_id is not None  # minted alongside a refresh token


def test_two_redemptions_of_one_code(app, oauth, rounds):
    oauth.human()
    for _ in range(rounds):
        form = {
            "grant_type": "authorization_code",
            "code": oauth.code(),
            "redirect_uri": oauth.params()["redirect_uri"],
            "client_id": "svc-cli",
            "code_verifier": oauth.verifier,
        }
        winner = one_winner(race(app, form))
        assert oauth.works(winner["access_token"])
    assert_no_orphans(app, 2 * rounds)


def test_two_refreshes_of_one_refresh_token(app, oauth, rounds):
    oauth.human()
    current = oauth.pair()
    for _ in range(rounds):
        form = {
            "grant_type": "refresh_token",
            "refresh_token": current["refresh_token"],
            "client_id": "svc-cli",
        }
        current = one_winner(race(app, form))
        assert oauth.works(current["access_token"])  # losers inside the grace revoke nothing
    assert_no_orphans(app, 2 + 2 * rounds)


def test_two_polls_claiming_one_approved_device_code(app, oauth, rounds):
    oauth.human()
    for _ in range(rounds):
        started = oauth.device_start().get_json()
        response = oauth.client.post(
            "/oauth/device/approve", json={"user_code": started["user_code"], "approve": True}
        )
        assert response.status_code == 204
        form = {
            "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
            "device_code": started["device_code"],
            "client_id": "svc-cli",
        }
        winner = one_winner(race(app, form))
        assert oauth.works(winner["access_token"])
    assert_no_orphans(app, 2 * rounds)


def test_concurrent_registrations_never_pass_the_20_client_cap(app, client, dialect):
    from app.models import OAuthClient

    body = {"redirect_uris": ["https://app.example/cb"]}
    for _ in range(2 if dialect == "postgresql" else 1):
        with app.app_context():
            db.session.execute(db.delete(OAuthClient).where(OAuthClient.dynamic.is_(True)))
            db.session.commit()
        for _ in range(20 - THREADS // 2):
            assert client.post("/oauth/register", json=body).status_code == 201
        results = race(app, send=lambda c: c.post("/oauth/register", json=body))
        statuses = sorted(status for status, _ in results)
        assert statuses == [201] * (THREADS // 2) + [429] * (THREADS - THREADS // 2), results
        with app.app_context():
            count = db.session.query(OAuthClient).filter(OAuthClient.dynamic.is_(True)).count()
            assert count == 20
