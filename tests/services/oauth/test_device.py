"""The device grant (RFC 8628): the device record's table (app/services/oauth/device.py;
docs/oauth.md "Device authorization grant"), row by row, and the budget."""

import re
from datetime import timedelta

import pytest

from app.extensions import db
from app.models import DeviceRecord, DeviceStart, OAuthClient, Session
from app.services import crypto
from app.services.oauth import device
from tests.services.oauth.flow import (
    API_ORIGIN,
    DEVICE_GRANT,
    assert_oauth_error,
    change_alice_password,
)

WEB_ORIGIN = "http://localhost:38080"
ALPHABET = "ABCDEFGHJKMNPQRSTVWXYZ23456789"


@pytest.fixture
def started(oauth):
    response = oauth.device_start()
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def info(client, user_code):
    return client.get("/oauth/device_info", query_string={"user_code": user_code})


def decide(client, user_code, approve=True):
    return client.post("/oauth/device/approve", json={"user_code": user_code, "approve": approve})


def attempts(app):
    with app.app_context():
        return db.session.query(Session.device_attempts).scalar()


def test_device_authorization_allocates_a_pending_record(app, oauth, started, clock):
    assert set(started) == {
        "device_code",
        "user_code",
        "verification_uri",
        "verification_uri_complete",
        "expires_in",
        "interval",
    }
    assert re.fullmatch(f"[{ALPHABET}]{{4}}-[{ALPHABET}]{{4}}", started["user_code"])
    assert started["verification_uri"] == f"{WEB_ORIGIN}/device"
    assert started["verification_uri_complete"] == (
        f"{WEB_ORIGIN}/device?user_code={started['user_code']}"
    )
    assert started["expires_in"] == 600 and started["interval"] == 5
    with app.app_context():
        row = db.session.get(DeviceRecord, crypto.digest(started["device_code"]))
        assert row.status == "pending" and row.client_id == "svc-cli"
        assert (row.expires_at - clock()).total_seconds() == 600


def test_device_authorization_refusals(client, oauth):
    assert_oauth_error(oauth.device_start(client_id="nobody"), "invalid_client", 401)
    assert_oauth_error(oauth.device_start(resource="http://localhost:1"), "invalid_request")
    assert_oauth_error(oauth.device_start(resource=None), "invalid_request")
    response = client.post("/oauth/device_authorization", json={"client_id": "svc-cli"})
    assert response.status_code == 415


def test_three_allocation_tries_then_server_error(app, oauth, started, monkeypatch):
    taken = started["user_code"]
    draws = iter([taken, taken, "WXYZ-2345"])
    monkeypatch.setattr(crypto, "new_user_code", lambda: next(draws))
    response = oauth.device_start()
    assert response.status_code == 200 and response.get_json()["user_code"] == "WXYZ-2345"
    monkeypatch.setattr(crypto, "new_user_code", lambda: taken)
    body = assert_oauth_error(oauth.device_start(), "server_error", 500)
    assert "constraint" not in body["error_description"].lower()
    with app.app_context():
        assert db.session.query(DeviceRecord).count() == 2


def test_pending_poll_then_slow_down_updates_last_poll_every_time(app, oauth, started, clock):
    code = started["device_code"]
    assert_oauth_error(oauth.poll(code), "authorization_pending")  # first poll: never slow_down
    clock.advance(2)
    assert_oauth_error(oauth.poll(code), "slow_down")
    clock.advance(4)  # 6 s after the first poll but 4 s after the refused one: still too fast
    assert_oauth_error(oauth.poll(code), "slow_down")
    clock.advance(5)  # a full interval after the previous (refused) poll
    assert_oauth_error(oauth.poll(code), "authorization_pending")
    clock.advance(10)  # a client that added 5 s, as told
    assert_oauth_error(oauth.poll(code), "authorization_pending")
    with app.app_context():
        row = db.session.get(DeviceRecord, crypto.digest(code))
        assert row.last_poll_at == clock() and row.interval == 5


def test_approve_then_poll_issues_tokens_once(app, oauth, started, clock):
    oauth.human()
    client = oauth.client
    assert info(client, started["user_code"]).status_code == 200
    response = decide(client, started["user_code"])
    assert response.status_code == 204
    with app.app_context():
        assert db.session.get(OAuthClient, "svc-cli").first_used_at == clock()
    tokens = oauth.poll(started["device_code"])
    assert tokens.status_code == 200
    body = tokens.get_json()
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600
    assert oauth.works(body["access_token"])
    assert oauth.refresh(body["refresh_token"]).status_code == 200
    with app.app_context():
        assert db.session.query(DeviceRecord).count() == 0
    assert_oauth_error(oauth.poll(started["device_code"]), "invalid_grant")


def test_decline_gives_access_denied(oauth, started):
    oauth.human()
    assert decide(oauth.client, started["user_code"], approve=False).status_code == 204
    assert_oauth_error(oauth.poll(started["device_code"]), "access_denied")
    assert_oauth_error(oauth.poll(started["device_code"]), "access_denied")


@pytest.mark.parametrize("status", ["pending", "approved"])
def test_600_seconds_expire_the_record(oauth, started, clock, status):
    oauth.human()
    if status == "approved":
        decide(oauth.client, started["user_code"])
    clock.advance(599)
    if status == "pending":
        assert_oauth_error(oauth.poll(started["device_code"]), "authorization_pending")
    clock.advance(1)
    assert_oauth_error(oauth.poll(started["device_code"]), "expired_token")


@pytest.mark.parametrize("how", ["http", "cli"])
def test_a_password_change_deletes_the_users_approved_records(app, oauth, started, runner, how):
    """The record goes with the old password; polls then meet the table's row for a record
    that is no longer there (as after a claim): invalid_grant, never tokens."""
    other = oauth.device_start().get_json()
    declined = oauth.device_start().get_json()
    oauth.human("bob@example.com")
    assert decide(oauth.client, other["user_code"]).status_code == 204
    oauth.human()
    assert decide(oauth.client, started["user_code"]).status_code == 204
    assert decide(oauth.client, declined["user_code"], approve=False).status_code == 204
    change_alice_password(how, oauth.client, runner)
    with app.app_context():
        assert db.session.get(DeviceRecord, crypto.digest(started["device_code"])) is None
        assert db.session.get(DeviceRecord, crypto.digest(declined["device_code"])) is None
        assert db.session.query(DeviceRecord).count() == 1  # bob's approval stays
    assert_oauth_error(oauth.poll(started["device_code"]), "invalid_grant")
    assert_oauth_error(oauth.poll(declined["device_code"]), "invalid_grant")
    assert oauth.poll(other["device_code"]).status_code == 200


def test_poll_with_wrong_client_or_unknown_code_is_invalid_grant(oauth, started):
    oauth.human()
    decide(oauth.client, started["user_code"])
    assert_oauth_error(oauth.poll(started["device_code"], client_id="svc-desktop"), "invalid_grant")
    assert_oauth_error(oauth.poll("unknown"), "invalid_grant")
    assert_oauth_error(oauth.token(grant_type=DEVICE_GRANT, client_id="svc-cli"), "invalid_request")
    assert oauth.poll(started["device_code"], resource=API_ORIGIN).status_code == 200


def test_reapproval_by_the_same_session_is_free(app, oauth, started):
    oauth.human()
    assert decide(oauth.client, started["user_code"]).status_code == 204
    assert decide(oauth.client, started["user_code"]).status_code == 204
    assert attempts(app) == 0


def test_other_decisions_on_a_decided_code_cost_one(app, oauth, started, session_client):
    oauth.human()
    decide(oauth.client, started["user_code"])
    assert_oauth_error(decide(oauth.client, started["user_code"], approve=False), "invalid_grant")
    assert attempts(app) == 1
    # Another session (a second sign-in) cannot re-approve it for free either.
    session_client(mfa_complete=True)
    assert_oauth_error(decide(oauth.client, started["user_code"]), "invalid_grant")
    assert_oauth_error(info(oauth.client, started["user_code"]), "invalid_grant")  # not pending


@pytest.mark.parametrize("typed", ["{code}", "{lower}", "{nodash}", " {spaced} "])
def test_user_code_input_is_normalised(oauth, started, typed):
    code = started["user_code"]
    value = typed.format(
        code=code,
        lower=code.lower(),
        nodash=code.replace("-", ""),
        spaced=code[:2] + " " + code[2:],
    )
    oauth.human()
    response = info(oauth.client, value)
    assert response.status_code == 200
    body = response.get_json()
    assert body["client"]["id"] == "svc-cli" and body["client"]["first_use"] is True
    assert body["expires_in"] == 600


def test_device_info_reports_remaining_seconds(oauth, started, clock):
    oauth.human()
    clock.advance(100)
    assert info(oauth.client, started["user_code"]).get_json()["expires_in"] == 500


def test_expired_or_unknown_codes_cost_one_attempt_each(app, oauth, started, clock):
    oauth.human()
    assert_oauth_error(info(oauth.client, "AAAA-AAAA"), "invalid_grant")
    assert_oauth_error(decide(oauth.client, "AAAA-AAAA"), "invalid_grant")
    clock.advance(600)
    assert_oauth_error(info(oauth.client, started["user_code"]), "invalid_grant")
    assert_oauth_error(decide(oauth.client, started["user_code"]), "invalid_grant")
    assert attempts(app) == 4


def test_ten_failures_then_every_call_is_429(app, oauth, started, session_client):
    oauth.human()
    for n in range(10):
        call = info if n % 2 else decide
        assert_oauth_error(call(oauth.client, f"BBBB-BB{n:02d}"), "invalid_grant", 400)
    assert attempts(app) == 10
    # Now even the right code is refused, and refusals cost nothing more.
    assert_oauth_error(info(oauth.client, started["user_code"]), "invalid_request", 429)
    assert_oauth_error(decide(oauth.client, started["user_code"]), "invalid_request", 429)
    assert attempts(app) == 10
    with app.app_context():
        assert (
            db.session.get(DeviceRecord, crypto.digest(started["device_code"])).status == "pending"
        )
    # A new sign-in is a new session with a fresh budget.
    session_client(mfa_complete=True)
    assert decide(oauth.client, started["user_code"]).status_code == 204


def test_device_routes_refuse_bearer_tokens_with_403(api, started):
    for response in (
        api.get("/oauth/device_info", query_string={"user_code": started["user_code"]}),
        api.post(
            "/oauth/device/approve", json={"user_code": started["user_code"], "approve": True}
        ),
    ):
        assert_oauth_error(response, "invalid_client", 403)


def test_device_routes_need_a_full_session(client, session_client, started):
    assert info(client, started["user_code"]).status_code == 401
    session_client(mfa_complete=False)
    assert decide(client, started["user_code"]).status_code == 401


def test_malformed_decision_is_invalid_request_and_free(app, oauth, started):
    oauth.human()
    response = oauth.client.post(
        "/oauth/device/approve", json={"user_code": started["user_code"], "approve": "yes"}
    )
    assert_oauth_error(response, "invalid_request")
    assert attempts(app) == 0


# --- the rate of device authorization requests (open route) ----------------------


def starts(app):
    with app.app_context():
        return db.session.query(DeviceStart).count(), db.session.query(DeviceRecord).count()


def assert_rate_refusal(response, retry_after: int):
    body = assert_oauth_error(response, "temporarily_unavailable", 429)
    assert response.headers["Retry-After"] == str(retry_after)
    assert f"{retry_after} seconds" in body["error_description"]


def test_ten_device_authorizations_per_client_and_address_per_ten_minutes(app, oauth, clock):
    assert (10, timedelta(minutes=10)) == (device.START_LIMIT, device.START_WINDOW)
    for _ in range(10):
        clock.advance(1)
        assert oauth.device_start(address="198.51.100.7").status_code == 200
    # The 11th in the window is refused, changes nothing and is not counted.
    assert_rate_refusal(oauth.device_start(address="198.51.100.7"), 591)
    assert starts(app) == (10, 10)
    # Other addresses and other clients have their own count.
    assert oauth.device_start(address="198.51.100.8").status_code == 200
    assert oauth.device_start(client_id="svc-desktop", address="198.51.100.7").status_code == 200
    # The window slides: the first request leaves it 600 s after it was made.
    clock.advance(590)
    assert_rate_refusal(oauth.device_start(address="198.51.100.7"), 1)
    clock.advance(1)
    started = oauth.device_start(address="198.51.100.7")
    assert started.status_code == 200
    assert set(started.get_json()) == {
        "device_code",
        "user_code",
        "verification_uri",
        "verification_uri_complete",
        "expires_in",
        "interval",
    }
    assert_rate_refusal(oauth.device_start(address="198.51.100.7"), 1)


def test_ipv6_callers_are_counted_by_their_64_network(oauth):
    for n in range(10):
        assert oauth.device_start(address=f"2001:db8:0:7::{n + 1:x}").status_code == 200
    assert_rate_refusal(oauth.device_start(address="2001:db8:0:7:ffff::1"), 600)
    assert oauth.device_start(address="2001:db8:0:8::1").status_code == 200


@pytest.mark.slow  # a big loop: seconds (README, the quick loop)
def test_at_most_100_live_device_records_per_client(app, oauth, clock):
    assert device.LIVE_LIMIT == 100
    for n in range(100):
        if n % 10 == 0:
            clock.advance(1)
        assert oauth.device_start(address=f"203.0.113.{n // 10}").status_code == 200
    # A fresh address is refused too: the client has 100 live records, the first ten
    # of which expire in 591 s (they were made 9 s before the last ten).
    assert_rate_refusal(oauth.device_start(address="203.0.113.200"), 591)
    assert oauth.device_start(client_id="svc-desktop").status_code == 200  # per client
    clock.advance(590)
    assert_rate_refusal(oauth.device_start(address="203.0.113.200"), 1)
    clock.advance(1)
    assert oauth.device_start(address="203.0.113.200").status_code == 200


def test_expired_records_of_the_client_are_deleted_after_a_linger(app, oauth, clock):
    first = oauth.device_start(address="198.51.100.1").get_json()
    assert timedelta(seconds=600) == device.EXPIRED_LINGER
    clock.advance(600 + 599)  # expired 599 s ago: a late poll still learns why
    assert oauth.device_start(address="198.51.100.2").status_code == 200
    assert_oauth_error(oauth.poll(first["device_code"]), "expired_token")
    assert starts(app) == (1, 2)  # the first start left the window; its record lingers
    clock.advance(1)
    assert oauth.device_start(address="198.51.100.3").status_code == 200
    assert starts(app) == (2, 2)  # the first record is gone
    assert_oauth_error(oauth.poll(first["device_code"]), "invalid_grant")
    with app.app_context():
        assert db.session.get(DeviceRecord, crypto.digest(first["device_code"])) is None


@pytest.mark.parametrize(
    ("remote", "key"),
    [
        ("192.0.2.1", "192.0.2.1"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("::ffff:192.0.2.9", "192.0.2.9"),
        (None, "unknown"),
        ("not-an-address", "not-an-address"),
    ],
)
def test_address_key(remote, key):
    assert device.address_key(remote) == key


def test_the_rate_counts_the_address_seen_after_proxy_handling(app, make_app):
    form = {"client_id": "svc-cli", "resource": API_ORIGIN}

    def start(client, forwarded_for):
        return client.post(
            "/oauth/device_authorization",
            data=form,
            headers={"X-Forwarded-For": forwarded_for},
            environ_base={"REMOTE_ADDR": "10.0.0.2"},
        )

    # Without TRUSTED_PROXIES, X-Forwarded-For is ignored: a caller cannot spoof its way out.
    direct = app.test_client()
    for n in range(10):
        assert start(direct, f"198.51.100.{n}").status_code == 200
    assert_rate_refusal(start(direct, "198.51.100.99"), 600)
    # Behind one trusted proxy the forwarded address is the caller's.
    proxied = make_app(TRUSTED_PROXIES=1).test_client()
    assert start(proxied, "198.51.100.99").status_code == 200
