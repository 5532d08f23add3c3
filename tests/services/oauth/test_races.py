"""Races: several threads against one WSGI app, each with its own test client, released
together by a barrier. Every round must have exactly one winner and leave no orphan
tokens. The rule holds by construction (a DELETE or conditional UPDATE that must touch
exactly one row, committed with the token inserts), so it is checked on both dialects;
PostgreSQL, where requests truly run in parallel, gets the most rounds."""

import threading
import time
from datetime import timedelta

import pytest
from sqlalchemy import text

from app.extensions import db
from app.models import AuthorizationCode, DeviceRecord, DeviceStart, Session, Token
from app.services import crypto
from app.services.oauth.device import DEVICE_TTL
from tests.services.oauth.flow import (
    THREADS,
    OAuthFlow,
    assert_oauth_error,
    change_alice_password,
    query_of,
    race,
)
from tests.support import SESSION_COOKIE, repetitions


@pytest.fixture
def rounds(dialect):
    """Rounds of each race; LEDGER_RACE_ROUNDS for the long run (bench.reliability)."""
    return repetitions("LEDGER_RACE_ROUNDS", 30 if dialect == "postgresql" else 8)


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


def test_two_polls_claiming_one_approved_device_code(app, oauth, rounds, clock):
    oauth.human()
    for n in range(rounds):
        if n and n % 90 == 0:  # past the 100-live-records cap's window: the old ones expire
            clock.advance(DEVICE_TTL.total_seconds() + 1)
            oauth.human()
        # Each round from its own address: one address may start 10 flows per 10 minutes.
        started = oauth.device_start(address=f"192.0.{2 + n // 250}.{n % 250 + 1}").get_json()
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
        results = race(app, send=lambda c, i: c.post("/oauth/register", json=body))
        statuses = sorted(status for status, _ in results)
        assert statuses == [201] * (THREADS // 2) + [429] * (THREADS - THREADS // 2), results
        with app.app_context():
            count = db.session.query(OAuthClient).filter(OAuthClient.dynamic.is_(True)).count()
            assert count == 20


BUDGET_RACERS = 16  # more than the 10-attempt budget


@pytest.fixture
def budget_rounds():
    """Rounds of the attempt-budget races; LEDGER_BUDGET_ROUNDS for the long run."""
    return repetitions("LEDGER_BUDGET_ROUNDS", 1)


def test_parallel_wrong_user_codes_never_pass_the_attempt_budget(app, oauth, clock, budget_rounds):
    """16 wrong user codes at once from one session: exactly 10 are charged (400), the
    rest are 429; none is a 5xx (SQLite: the unit begins as a writer, no lock upgrade)."""
    for _ in range(budget_rounds):
        clock.advance(DEVICE_TTL.total_seconds() + 1)  # no earlier record stays live
        _wrong_user_codes_round(app, oauth)  # each from a new session (its own budget)


def _wrong_user_codes_round(app, oauth):
    oauth.human()
    started = oauth.device_start().get_json()
    cookie = oauth.client.get_cookie(SESSION_COOKIE, domain="localhost").value
    this_session = Session.id == crypto.digest(cookie)

    def wrong_code(client, i):
        client.set_cookie(SESSION_COOKIE, cookie, domain="localhost")
        code = f"BBBB-BB{i:02d}"
        if i % 2:
            return client.get("/oauth/device_info", query_string={"user_code": code})
        return client.post("/oauth/device/approve", json={"user_code": code, "approve": True})

    results = race(app, send=wrong_code, threads=BUDGET_RACERS)
    statuses = sorted(status for status, _ in results)
    assert statuses == [400] * 10 + [429] * (BUDGET_RACERS - 10), results
    assert all(
        body["error"] == ("invalid_grant" if status == 400 else "invalid_request")
        for status, body in results
    ), results
    with app.app_context():
        assert db.session.query(Session.device_attempts).filter(this_session).scalar() == 10
    # The budget is spent: even the right code is refused, and the record stays pending.
    info = oauth.client.get("/oauth/device_info", query_string={"user_code": started["user_code"]})
    assert_oauth_error(info, "invalid_request", 429)
    decision = oauth.client.post(
        "/oauth/device/approve", json={"user_code": started["user_code"], "approve": True}
    )
    assert_oauth_error(decision, "invalid_request", 429)
    with app.app_context():
        assert db.session.query(Session.device_attempts).filter(this_session).scalar() == 10
        row = db.session.get(DeviceRecord, crypto.digest(started["device_code"]))
        assert row.status == "pending"


def test_parallel_device_authorizations_never_pass_the_rate(app, oauth):
    """16 device authorization requests at once from one address: exactly 10 pass."""
    results = race(
        app,
        send=lambda c, i: OAuthFlow(c, None).device_start(address="198.51.100.9"),
        threads=BUDGET_RACERS,
    )
    statuses = sorted(status for status, _ in results)
    assert statuses == [200] * 10 + [429] * (BUDGET_RACERS - 10), results
    assert all(
        body["error"] == "temporarily_unavailable" for status, body in results if status == 429
    ), results
    with app.app_context():
        assert db.session.query(DeviceStart).count() == 10
        assert db.session.query(DeviceRecord).count() == 10


def test_parallel_device_authorizations_never_pass_the_live_cap(app, oauth, clock):
    """92 live records, then 16 requests at once from 16 addresses: exactly 8 pass."""
    now = clock()
    with app.app_context():
        for n in range(92):
            db.session.add(
                DeviceRecord(
                    id=crypto.digest(f"seeded-{n}"),
                    user_code=f"AAAA-A{n:03d}",
                    client_id="svc-cli",
                    resource="http://localhost:38081",
                    status="pending",
                    interval=5,
                    created_at=now,
                    expires_at=now + timedelta(seconds=600),
                )
            )
        db.session.commit()

    def start(client, i):
        return OAuthFlow(client, None).device_start(address=f"203.0.113.{i + 1}")

    results = race(app, send=start, threads=BUDGET_RACERS)
    statuses = sorted(status for status, _ in results)
    assert statuses == [200] * 8 + [429] * (BUDGET_RACERS - 8), results
    with app.app_context():
        assert db.session.query(DeviceRecord).count() == 100
        assert db.session.query(DeviceStart).count() == 8


# --- an approval racing a password change -----------------------------------------
# The approval is paused in one of two places: "checked" (its session check has passed,
# it has written nothing yet) or "holding" (its code or decision is written, not yet
# committed). The password change then runs from another thread. On PostgreSQL (READ
# COMMITTED) it either commits meanwhile ("checked": the approval must then be refused
# with the 401 an ended session gets) or waits on the approval's session row ("holding":
# it must then kill what the approval committed). On SQLite the approval holds the
# write lock throughout, so the change always waits. Either way nothing the approval
# produced can be exchanged for tokens afterwards.


def _lock_waiters(app) -> int:
    """PostgreSQL: backends of this database waiting on a row or transaction lock."""
    with app.app_context(), db.engine.connect() as conn:
        return conn.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
        ).scalar()


def _blocked_or_done(app, dialect, thread) -> str:
    """Wait until the password change has finished or (PostgreSQL) waits on a lock."""
    deadline = time.monotonic() + 15
    started = time.monotonic()
    while time.monotonic() < deadline:
        if not thread.is_alive():
            return "done"
        if dialect == "postgresql" and _lock_waiters(app):
            return "blocked"
        if dialect == "sqlite" and time.monotonic() - started > 0.5:
            return "blocked"  # queued on the write lock the approval holds
        time.sleep(0.02)
    raise AssertionError("the password change neither finished nor waited on a lock")


def _race_with_password_change(app, dialect, runner, monkeypatch, how, cookie, paused_at, first):
    """Run first() in a thread until it reaches the call paused_at names (module, name),
    change alice's password meanwhile (over HTTP with cookie, or by `user passwd`), and
    let first() go on once the change has finished or (PostgreSQL) waits on a lock.
    Returns first()'s answer and "done" or "blocked"."""
    at, resume = threading.Event(), threading.Event()
    module, name = paused_at
    real = getattr(module, name)

    def paused(*args, **kwargs):
        if threading.current_thread().name == "first":
            at.set()
            assert resume.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, paused)
    outcome, errors = {}, []

    def run_first():
        try:
            outcome["answer"] = first()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
            at.set()

    def run_change():
        try:
            changer = app.test_client()
            changer.set_cookie(SESSION_COOKIE, cookie, domain="localhost")
            change_alice_password(how, changer, runner)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    first_thread = threading.Thread(target=run_first, name="first")
    first_thread.start()
    assert at.wait(30)
    changer = threading.Thread(target=run_change, name="changer")
    changer.start()
    state = _blocked_or_done(app, dialect, changer)
    resume.set()
    first_thread.join(60)
    changer.join(60)
    assert not first_thread.is_alive() and not changer.is_alive()
    assert not errors, errors
    return outcome["answer"], state


@pytest.mark.parametrize("how", ["http", "cli"])
@pytest.mark.parametrize("moment", ["checked", "holding"])
@pytest.mark.parametrize("grant", ["code", "device"])
def test_a_password_change_racing_an_approval_leaves_nothing_redeemable(
    app, oauth, runner, monkeypatch, dialect, grant, moment, how
):
    from app.services.identity import sessions
    from app.services.oauth import codes, device

    oauth.human()
    started = oauth.device_start().get_json() if grant == "device" else None
    with app.app_context():
        alice = db.session.query(Session.user_id).scalar()
        second = sessions.create(alice, mfa_complete=True)  # the password changer's session
        db.session.commit()

    def approve(client):
        if grant == "code":
            return client.post("/oauth/authorize/approve", json={**oauth.params(), "approve": True})
        return client.post(
            "/oauth/device/approve", json={"user_code": started["user_code"], "approve": True}
        )

    ended = app.test_client()
    ended.set_cookie(SESSION_COOKIE, "x" * 43, domain="localhost")
    refusal = approve(ended)
    assert refusal.status_code == 401

    module = codes if grant == "code" else device
    name = "decide" if moment == "checked" else "mark_used"
    answer, state = _race_with_password_change(
        app,
        dialect,
        runner,
        monkeypatch,
        how,
        second,
        (module, name),
        lambda: approve(oauth.client),
    )

    # Nothing the approval produced survives the password change.
    with app.app_context():
        assert db.session.query(AuthorizationCode).count() == 0
        assert db.session.query(DeviceRecord).filter_by(status="approved").count() == 0
    if answer.status_code == 401:
        assert answer.get_json() == refusal.get_json()
    if grant == "code":
        if answer.status_code == 200:
            code = query_of(answer.get_json()["redirect"])["code"]
            assert_oauth_error(oauth.exchange(code), "invalid_grant")
    else:
        polled = oauth.poll(started["device_code"])
        # approved, then deleted by the change: invalid_grant; refused: never approved
        expected = "invalid_grant" if answer.status_code == 204 else "authorization_pending"
        assert_oauth_error(polled, expected)
    with app.app_context():
        assert db.session.query(Token).count() == 0

    # And it happened the way described above.
    if dialect == "postgresql" and moment == "checked":
        assert (state, answer.status_code) == ("done", 401)
    else:
        assert (state, answer.status_code) == ("blocked", 200 if grant == "code" else 204)


@pytest.mark.parametrize("how", ["http", "cli"])
def test_a_password_change_racing_a_login_ends_the_new_session(
    app, oauth, runner, monkeypatch, dialect, how
):
    """A login whose password check passed just before a password change committed
    must not keep a session afterwards (docs/auth.md: the change ends every session)."""
    from app.services.identity import sessions, throttle
    from tests.support import PASSWORD

    oauth.human()
    with app.app_context():
        alice = db.session.query(Session.user_id).scalar()
        second = sessions.create(alice, mfa_complete=True)  # the password changer's session
        db.session.commit()

    def login():
        return app.test_client().post(
            "/auth/login", json={"email": "alice@example.com", "password": PASSWORD}
        )

    # throttle.clear runs right after the login's "password unchanged" check.
    answer, _ = _race_with_password_change(
        app, dialect, runner, monkeypatch, how, second, (throttle, "clear"), login
    )
    assert answer.status_code in (200, 401)
    with app.app_context():
        assert db.session.query(Session).filter_by(user_id=alice).count() == 0
