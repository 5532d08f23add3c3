"""The register's span read on PostgreSQL probes the span's transactions for the
account's entries, however many transactions the span holds (docs/performance.md,
issue 39): priced by the planner, a span of a few hundred transactions read every
entry of the account from the table and hashed it against the span (5 ms of a
16 ms page at 100,000 transactions, 0.6 ms as probes). Nor is a page's read of its
spans compiled by JIT: below a deep cursor the spans' prices add up past
jit_above_cost, and compiling took 14 ms of a 2 ms read at a million transactions."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy import event, text

from app.extensions import db
from app.services.ledger import cursors, register


def _grow(account: int, other: int, n: int) -> None:
    """n two-entry transactions, 10 a day; `account` in every fifth, then ANALYZE."""
    db.session.execute(
        text(
            "INSERT INTO transactions (occurred_on, description, created_at)"
            " SELECT date '2016-01-01' + (i / 10), 'bulk ' || i, now()"
            " FROM generate_series(0, :n - 1) AS i"
        ),
        {"n": n},
    )
    db.session.execute(
        text(
            "INSERT INTO entries (transaction_id, account_id, amount_cents)"
            " SELECT id, CASE WHEN id % 5 = 0 THEN :a ELSE :o END, 100"
            " FROM transactions WHERE description LIKE 'bulk %'"
            " UNION ALL SELECT id, :o, -100 FROM transactions WHERE description LIKE 'bulk %'"
        ),
        {"a": account, "o": other},
    )
    db.session.commit()
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM ANALYZE"))


def _grown_bank(app, dialect, make_account, why: str) -> int:
    """PostgreSQL only (else skipped for `why`): a bank account grown by _grow."""
    if dialect != "postgresql":
        pytest.skip(why)
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    with app.app_context():
        _grow(bank, food, 30_000)
    return bank


def test_a_wide_span_is_probed_not_hashed(app, dialect, make_account):
    why = "PostgreSQL's join choice (SQLite is told its join order: CROSS JOIN)"
    bank = _grown_bank(app, dialect, make_account, why)
    with app.app_context():
        # What _page_rows does: the days (their statement sets the read's planner
        # settings), then the entries of a span of 100 days (1,000 transactions)
        # below the newest.
        register._days(bank, None, None, True, 3)
        # All of the span's ~200 entries are wanted (the limit is above them), as when a
        # span is read for the rest of a page.
        sql = register._entries_sql("AND t.occurred_on < :high")
        plan = [
            row[0]
            for row in db.session.execute(
                text("EXPLAIN " + sql),
                {
                    "account_id": bank,
                    "n": 500,
                    "lowest": date(2018, 1, 1),
                    "high": date(2018, 4, 11),
                },
            )
        ]
        db.session.rollback()
    joins = [line for line in plan if "Join" in line or "Nested Loop" in line]
    assert joins and all("Nested Loop" in line for line in joins), plan


def test_a_deep_pages_spans_are_read_without_jit_or_workers(app, dialect, make_account):
    bank = _grown_bank(
        app, dialect, make_account, "PostgreSQL's JIT and parallel workers (SQLite has neither)"
    )
    with app.app_context():
        if not db.session.execute(text("SELECT pg_jit_available()")).scalar():
            pytest.skip("this PostgreSQL server has no JIT")
        kind = f"register:{bank}"
        deep = cursors.encode(kind, cursors.scope_of(kind, None, None), date(2018, 1, 1), 10**9)
        spans: list = []

        def catch(_conn, _cursor, statement, params, _context, _many):
            if "UNION ALL" in statement:
                spans.append((statement, params))

        event.listen(db.engine, "before_cursor_execute", catch)
        try:
            page = register.register(bank, None, None, 50, deep)
        finally:
            event.remove(db.engine, "before_cursor_execute", catch)
        assert len(page["items"]) == 50 and len(spans) == 1
        # The read's own transaction, as register() left it. At a million transactions
        # the spans' summed price passes jit_above_cost; here a price of 0 stands in.
        connection = db.session.connection()
        connection.execute(text("SELECT set_config('jit_above_cost', '0', true)"))
        statement, params = spans[0]
        plan = [row[0] for row in connection.exec_driver_sql("EXPLAIN " + statement, params)]
        db.session.rollback()
    assert not any(line.startswith("JIT") for line in plan), plan
    assert not any("Gather" in line or "Hash" in line for line in plan), plan
