"""No lost writes under concurrency: throttle counts and the last-passkey rule hold
when requests race (threads over one database, each with its own connection), and
argon2 never runs inside a transaction (no SQLite writer lock held meanwhile)."""

import threading
import time
from datetime import timedelta

from sqlalchemy import delete, select

from app import store
from app.extensions import db
from app.models import LoginThrottle, Passkey
from app.services.identity import passwords
from tests.support import PASSWORD, SESSION_COOKIE, repetitions


def race(app, n, request):
    """Run request(client) in n threads released together; returns the responses."""
    barrier = threading.Barrier(n)
    results = [None] * n

    def run(i):
        client = app.test_client()
        barrier.wait()
        results[i] = request(i, client)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results


def test_concurrent_failures_are_all_counted(app, make_user):
    make_user()
    wrong = {"email": "alice@example.com", "password": "wrong password"}
    statuses = [r.status_code for r in race(app, 6, lambda i, c: c.post("/auth/login", json=wrong))]
    assert set(statuses) <= {401, 429}
    with app.app_context():
        failures = db.session.execute(select(LoginThrottle.failures)).scalar_one()
    assert failures == statuses.count(401) >= 4  # every refused password was counted


def test_parallel_wrong_passwords_are_admitted_as_serial_ones_would_be(
    app, make_user, clock, monkeypatch
):
    """7 wrong passwords at once, then the right one: exactly what 8 serial attempts give.

    Serially failures 1-3 are free, the 4th starts a 2 s delay, and attempts inside
    it are refused (429) without being verified. argon2 is slowed so that every
    request is inside its verification at once if the throttle lets them all in.
    """
    make_user()
    verified = []
    real_verify = passwords.verify

    def slow_verify(password, password_hash):
        verified.append(password)
        time.sleep(0.2)
        return real_verify(password, password_hash)

    monkeypatch.setattr(passwords, "verify", slow_verify)
    # LEDGER_BUDGET_ROUNDS: rounds for the long run (bench.reliability), each from a
    # clean throttle.
    for _ in range(repetitions("LEDGER_BUDGET_ROUNDS", 1)):
        with app.app_context(), store.writing():
            db.session.execute(delete(LoginThrottle))
            store.commit()
        clock.advance(3600)
        verified.clear()
        _wrong_passwords_round(app, clock, verified)


def _wrong_passwords_round(app, clock, verified):
    wrong = {"email": "alice@example.com", "password": "wrong password"}
    responses = race(app, 7, lambda i, c: c.post("/auth/login", json=wrong))
    assert sorted(r.status_code for r in responses) == [401] * 4 + [429] * 3
    right = app.test_client().post(
        "/auth/login", json={"email": "alice@example.com", "password": PASSWORD}
    )
    assert right.status_code == 429
    assert right.headers["Retry-After"] == "2"
    assert len(verified) == 4  # the refused ones were never verified
    with app.app_context():
        row = db.session.execute(select(LoginThrottle)).scalar_one()
        assert row.failures == 4
        assert row.locked_until == clock() + timedelta(seconds=2)


def _watch_argon2(monkeypatch):
    """Record, at every argon2 call made by a request, whether a transaction is open."""
    seen = []

    def watched(real):
        def call(*args):
            lock = store.writer_lock(db.engine)  # SQLite only; None on PostgreSQL
            seen.append(
                (real.__name__, db.session().in_transaction(), bool(lock and lock.locked()))
            )
            return real(*args)

        return call

    monkeypatch.setattr(passwords, "verify", watched(passwords.verify))
    monkeypatch.setattr(passwords, "hash_password", watched(passwords.hash_password))
    return seen


def test_argon2_runs_outside_any_transaction(signin, client, monkeypatch):
    """Login (wrong, right, replacing a session) and password change: no writer lock meanwhile."""
    seen = _watch_argon2(monkeypatch)
    assert signin.password(password="wrong password").status_code == 401
    assert signin.password(email="nobody@example.com").status_code == 401
    signin.full()
    wrong = {"current_password": "wrong password", "new_password": "a brand new secret"}
    assert client.post("/auth/password", json=wrong).status_code == 400
    right = {"current_password": PASSWORD, "new_password": "a brand new secret"}
    assert client.post("/auth/password", json=right).status_code == 204
    # with a cookie, the request's session lookup opens a unit before the login's own
    client.set_cookie(SESSION_COOKIE, "x" * 43, domain="localhost")
    assert signin.password().status_code == 401  # the old password
    assert signin.password(password="a brand new secret").status_code == 200
    names = [name for name, *_ in seen]
    assert names.count("verify") == 7 and names.count("hash_password") == 1
    assert [(t, lock) for _, t, lock in seen] == [(False, False)] * len(seen)


def test_a_write_completes_while_a_login_verifies(app, api, monkeypatch):
    """Another writer is not held up by argon2: PUT /settings lands while it runs."""
    real_verify = passwords.verify
    outcome = {}

    def verify_with_a_write_meanwhile(password, password_hash):
        def write():
            started = time.monotonic()
            other = app.test_client()
            headers = {"Authorization": f"Bearer {api.token}"}
            outcome["status"] = other.put(
                "/settings", json={"book_style": "club"}, headers=headers
            ).status_code
            outcome["seconds"] = time.monotonic() - started

        writer = threading.Thread(target=write)
        writer.start()
        writer.join(timeout=5)
        outcome["done"] = not writer.is_alive()
        return real_verify(password, password_hash)

    monkeypatch.setattr(passwords, "verify", verify_with_a_write_meanwhile)
    response = app.test_client().post(
        "/auth/login", json={"email": "alice@example.com", "password": PASSWORD}
    )
    assert response.status_code == 200
    assert outcome.get("done") and outcome["status"] == 200, outcome


def test_racing_deletes_cannot_remove_the_last_passkey(app, signin, client):
    signin.full()
    signin.register(name="second")
    cookie = signin.cookie()
    ids = [p["id"] for p in client.get("/auth/passkeys").get_json()]

    def delete(i, c):
        c.set_cookie(SESSION_COOKIE, cookie, domain="localhost")
        return c.delete(f"/auth/passkeys/{ids[i]}")

    statuses = sorted(r.status_code for r in race(app, 2, delete))
    assert statuses == [204, 409]
    with app.app_context():
        assert len(db.session.execute(select(Passkey)).all()) == 1
