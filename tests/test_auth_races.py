"""No lost writes under concurrency: throttle counts and the last-passkey rule hold
when requests race (threads over one database, each with its own connection)."""

import threading

from tests.conftest import SESSION_COOKIE
from sqlalchemy import select

from app.extensions import db
from app.models import LoginThrottle, Passkey


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
