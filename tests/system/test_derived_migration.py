"""Migration 0002 on books that already exist: backfill, and a clean way back."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text

from app import create_app, store
from app.extensions import db
from app.services.ledger import derived, reports

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


@pytest.fixture
def fresh_url(scratch_database_url):
    """An empty database of each dialect (conftest's scratch_database_url)."""
    return scratch_database_url


BOOKS = [
    "INSERT INTO accounts (id, name, kind) VALUES (1, 'Bank', 'asset'), (2, 'Food', 'expense')",
    "INSERT INTO transactions (id, occurred_on, description, created_at) VALUES"
    " (1, '2025-12-31', 'a', '2026-01-01 00:00:00'), (2, '2026-01-01', 'b', '2026-01-01 00:00:00'),"
    " (3, '2026-01-01', 'c', '2026-01-01 00:00:00')",
    "INSERT INTO entries (transaction_id, account_id, amount_cents) VALUES"
    " (1, 2, 100), (1, 1, -100), (2, 2, 250), (2, 1, -250), (3, 1, 7), (3, 2, -7)",
]


def test_upgrade_backfills_existing_entries_and_downgrade_removes_the_tables(fresh_url):
    from flask_migrate import downgrade, upgrade

    app = create_app({"DATABASE_URL": fresh_url, "TESTING": True})
    with app.app_context():
        store.write_intent.set(True)
        upgrade(revision="0001")
        with db.engine.begin() as conn:
            for statement in BOOKS:
                conn.execute(text(statement))
            if conn.dialect.name == "sqlite":
                conn.execute(text("DELETE FROM ledger_balance_pending"))
        upgrade()
        rows = db.session.execute(
            text("SELECT day, account_id, cents FROM account_day_balances ORDER BY day, account_id")
        ).all()
        assert [(str(d)[:10], a, c) for d, a, c in rows] == [
            ("2025-12-31", 1, -100),
            ("2025-12-31", 2, 100),
            ("2026-01-01", 1, -243),
            ("2026-01-01", 2, 243),
        ]
        assert derived.differences() == []
        assert [r[3] for r in reports.account_sums()] == [-343, 343]  # asset, expense
        db.session.rollback()

        downgrade(revision="0001")
        tables = set(inspect(db.engine).get_table_names())
        assert "account_day_balances" not in tables and "account_month_balances" not in tables
        with db.engine.begin() as conn:  # entries still write without the triggers
            conn.execute(text("DELETE FROM transactions WHERE id = 3"))
            assert conn.execute(text("SELECT count(*) FROM entries")).scalar() == 4
        upgrade()
        assert derived.differences() == []
        db.session.remove()
        db.engine.dispose()
