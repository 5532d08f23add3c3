"""SQLite with planner statistics: a posting's work does not grow with the ledger.

`ANALYZE` (or `PRAGMA optimize`, which SQLite recommends running now and then) of a
big ledger stores statistics for `transactions` and `entries`, but none for
`ledger_balance_pending`, which is empty between commits. With those statistics the
planner once started the pre-commit balance check (app.store) from `transactions` and
scanned all of it on every commit: 47 ms per POST at 1,000,000 transactions instead
of 2 ms. The check now names its join order (CROSS JOIN).

The work is counted in SQLite virtual-machine steps (sqlite3's progress handler), not
timed: the same posting on a ledger 400 times bigger must cost about the same.

SQLite only: PostgreSQL's balance check is a trigger on the rows of the statement
and has no pending table; its write path is pinned by tests/store/test_write_path.py.
"""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import event

from app import create_app, store
from app.extensions import db
from app.services.identity import credentials, users
from app.services.ledger import accounts
from tests.support import API_ORIGIN, PASSWORD
from tests.testkit import migrate

EMAIL = "stats@example.com"


def _grow(path: str, n: int) -> None:
    """Add n balanced two-entry transactions by plain SQL (the triggers run), then ANALYZE."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(
        "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?)"
        " INSERT INTO transactions (occurred_on, description, created_at)"
        " SELECT date('2016-01-01', '+' || (i % 3650) || ' days'), 'bulk', '2026-01-01 00:00:00'"
        " FROM k",
        (n,),
    )
    conn.execute(
        "INSERT INTO entries (transaction_id, account_id, amount_cents)"
        " SELECT id, 1, 100 FROM transactions WHERE description = 'bulk'"
        " UNION ALL SELECT id, 2, -100 FROM transactions WHERE description = 'bulk'"
    )
    conn.execute("UPDATE transactions SET description = 'loaded' WHERE description = 'bulk'")
    conn.execute("DELETE FROM ledger_balance_pending")
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()


@pytest.fixture
def books(tmp_path):
    path = str(tmp_path / "stats.db")
    url = f"sqlite:///{path}"
    migrate(url)
    app = create_app(
        {"TESTING": True, "DATABASE_URL": url, "API_ORIGIN": API_ORIGIN, "PASSWORD_HASH_FAST": True}
    )
    steps = {"n": 0}

    def count(dbapi_conn, _record):
        def tick():
            steps["n"] += 1
            return 0

        dbapi_conn.set_progress_handler(tick, 1)

    with app.app_context():
        users.add_user(EMAIL, PASSWORD)
        for name, kind in (("Bank", "asset"), ("Food", "expense")):
            accounts.create_account(name, kind)
        token = credentials.mint_token(EMAIL, label="stats", days=1, audience=API_ORIGIN)
        store.commit()
        event.listen(db.engine, "connect", count)
    yield app, path, token, steps
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


def _post_steps(app, token, steps) -> int:
    """VM steps of one 2-entry POST (after a warm-up POST on fresh connections)."""
    with app.app_context():
        db.session.remove()
        db.engine.dispose()  # new connections read the current statistics
    client = app.test_client()
    headers = {"Authorization": f"Bearer {token}"}
    body = {
        "occurred_on": "2024-05-05",
        "description": "groceries",
        "entries": [
            {"account_id": 2, "amount_cents": 250},
            {"account_id": 1, "amount_cents": -250},
        ],
    }
    assert client.post("/transactions", json=body, headers=headers).status_code == 201
    steps["n"] = 0
    assert client.post("/transactions", json=body, headers=headers).status_code == 201
    return steps["n"]


def test_a_posting_costs_the_same_on_a_big_analysed_ledger(books):
    app, path, token, steps = books
    _grow(path, 10)
    small = _post_steps(app, token, steps)
    _grow(path, 4000)
    big = _post_steps(app, token, steps)
    # Lookups by key grow with the depth of a B-tree (a level or two here), a scan
    # with the rows: the buggy plan took well over 10x the steps at this size.
    assert big < small * 1.5, (small, big)


def test_the_balance_check_starts_from_the_pending_rows(books):
    app, path, _token, _steps = books
    _grow(path, 4000)
    conn = sqlite3.connect(path)
    try:
        plan = [
            row[-1]
            for row in conn.execute("EXPLAIN QUERY PLAN " + str(store.sqlite._SQLITE_TAKE_PENDING))
        ]
    finally:
        conn.close()
    assert plan[0] == "SCAN ledger_balance_pending", plan
    assert not any(line.startswith("SCAN") for line in plan[1:]), plan


def _old_history(path: str, n: int) -> None:
    """Add n two-entry postings of Bank and Food dated January 2016 by plain SQL (the
    triggers run), then ANALYZE: history far below a register's first pages."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(
        "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?)"
        " INSERT INTO transactions (occurred_on, description, created_at)"
        " SELECT date('2016-01-01', '+' || (i % 28) || ' days'), 'old', '2026-01-01 00:00:00'"
        " FROM k",
        (n,),
    )
    conn.execute(
        "INSERT INTO entries (transaction_id, account_id, amount_cents)"
        " SELECT id, 1, 100 FROM transactions WHERE description = 'old'"
        " UNION ALL SELECT id, 2, -100 FROM transactions WHERE description = 'old'"
    )
    conn.execute("UPDATE transactions SET description = 'history' WHERE description = 'old'")
    conn.execute("DELETE FROM ledger_balance_pending")
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()


def _register_steps(app, token, steps) -> tuple[int, int, list]:
    """VM steps of Bank's first register page of 10 and of the page after it."""
    with app.app_context():
        db.session.remove()
        db.engine.dispose()
    client = app.test_client()
    headers = {"Authorization": f"Bearer {token}"}
    url = "/accounts/1/register?limit=10"
    client.get(url, headers=headers)  # warm-up on fresh connections
    steps["n"] = 0
    first = client.get(url, headers=headers).get_json()
    first_steps = steps["n"]
    steps["n"] = 0
    second = client.get(url + "&cursor=" + first["next_cursor"], headers=headers).get_json()
    return first_steps, steps["n"], first["items"] + second["items"]


def test_a_register_page_costs_the_same_over_a_long_history(books):
    """A page reads the days it shows, the derived balances and the cleared entries:
    none of that grows with the account's uncleared history (the cleared balance once
    read every entry of the account: 23 of the 25 ms of a page at 1M transactions)."""
    app, path, token, steps = books
    client = app.test_client()
    headers = {"Authorization": f"Bearer {token}"}
    for i in range(40):
        body = {
            "occurred_on": f"2024-05-{1 + i % 10:02d}",
            "description": f"recent {i}",
            "entries": [
                {"account_id": 1, "amount_cents": 10 + i},
                {"account_id": 2, "amount_cents": -10 - i},
            ],
        }
        assert client.post("/transactions", json=body, headers=headers).status_code == 201
    small_first, small_next, small_items = _register_steps(app, token, steps)
    _old_history(path, 4000)
    big_first, big_next, big_items = _register_steps(app, token, steps)
    # The same entries, each balance moved by the 4000 older entries of 100.
    assert [i["entry_id"] for i in big_items] == [i["entry_id"] for i in small_items]
    assert [
        b["balance_cents"] - s["balance_cents"] for b, s in zip(big_items, small_items, strict=True)
    ] == [400_000] * 20
    assert big_first < small_first * 1.5, (small_first, big_first)
    assert big_next < small_next * 1.5, (small_next, big_next)
