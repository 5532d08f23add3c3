"""Concurrent postings through the HTTP app: every one lands, every one balances."""

import threading

from sqlalchemy import text

from app.extensions import db

THREADS = 8
PER_THREAD = 15


def test_eight_threads_posting_at_once(app, api, make_account):
    bank, food, salary = (
        make_account("Bank", "asset"),
        make_account("Food", "expense"),
        make_account("Salary", "income"),
    )
    statuses, barrier = [], threading.Barrier(THREADS)

    def worker(n):
        client = app.test_client()
        headers = {"Authorization": f"Bearer {api.token}"}
        barrier.wait()
        for i in range(PER_THREAD):
            cents = 100 * n + i + 1
            legs = [(food, cents), (bank, -cents)] if i % 2 else [(bank, cents), (salary, -cents)]
            response = client.post(
                "/transactions",
                headers=headers,
                json={
                    "occurred_on": f"2026-01-{1 + i:02d}",
                    "description": f"t{n}-{i}",
                    "entries": [{"account_id": a, "amount_cents": c} for a, c in legs],
                },
            )
            statuses.append(response.status_code)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert statuses == [201] * (THREADS * PER_THREAD)

    with app.app_context():
        unbalanced = db.session.execute(
            text(
                "SELECT transaction_id FROM entries GROUP BY transaction_id "
                "HAVING sum(amount_cents) <> 0 OR count(*) < 2"
            )
        ).all()
        assert unbalanced == []
        assert (
            db.session.execute(text("SELECT count(*) FROM transactions")).scalar()
            == THREADS * PER_THREAD
        )
        assert (
            db.session.execute(text("SELECT coalesce(sum(amount_cents), 0) FROM entries")).scalar()
            == 0
        )
    raw_total = sum(
        line["cents"] * (1 if line["account"] in ("Bank", "Food") else -1)
        for line in api.get("/reports/balances").get_json()
    )
    assert raw_total == 0
