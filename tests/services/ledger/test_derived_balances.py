"""The derived balance tables: kept exact by the triggers, read by every report.

Worked examples first, then property tests: random postings and deletions (and
edits made straight in SQL, which no service performs but a restore or an admin
might), after which the fast report path must equal a plain aggregate over the
entries for any window, and `derived.differences()` must find nothing.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select, text

from app import store
from app.extensions import db
from app.models import Account, AccountDayBalance, AccountMonthBalance, Entry, Transaction
from app.services.ledger import derived, reports, transactions

KINDS = ("asset", "liability", "equity", "income", "expense")


def plain_sums(start=None, end=None) -> list[tuple]:
    """The reference: a plain SUM over the entries, as reports did before issue 7."""
    sums = (
        select(Entry.account_id, func.sum(Entry.amount_cents).label("cents"))
        .join(Transaction, Transaction.id == Entry.transaction_id)
        .group_by(Entry.account_id)
    )
    if start is not None:
        sums = sums.where(Transaction.occurred_on >= start)
    if end is not None:
        sums = sums.where(Transaction.occurred_on <= end)
    sums = sums.subquery()
    query = (
        select(Account.id, Account.name, Account.kind, func.coalesce(sums.c.cents, 0))
        .outerjoin(sums, sums.c.account_id == Account.id)
        .order_by(Account.kind, Account.name)
    )
    return [(r[0], r[1], r[2], int(r[3])) for r in db.session.execute(query)]


def stored(model, key) -> dict:
    rows = db.session.execute(select(key, model.account_id, model.cents)).all()
    return {(k, a): c for k, a, c in rows if c != 0}


def test_posting_and_deleting_keep_day_and_month_rows(app, make_account, post_tx, api):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    pay = make_account("Salary", "income")
    first = post_tx("2026-01-05", "salary", (bank, 100_00), (pay, -100_00)).get_json()["id"]
    post_tx("2026-01-05", "lunch", (food, 12_34), (bank, -12_34))
    post_tx("2026-01-20", "dinner", (food, 40_00), (bank, -40_00))
    with app.app_context():
        assert stored(AccountDayBalance, AccountDayBalance.day) == {
            (date(2026, 1, 5), bank): 87_66,
            (date(2026, 1, 5), pay): -100_00,
            (date(2026, 1, 5), food): 12_34,
            (date(2026, 1, 20), food): 40_00,
            (date(2026, 1, 20), bank): -40_00,
        }
        assert stored(AccountMonthBalance, AccountMonthBalance.month) == {
            (date(2026, 1, 1), bank): 47_66,
            (date(2026, 1, 1), pay): -100_00,
            (date(2026, 1, 1), food): 52_34,
        }
    assert api.delete(f"/transactions/{first}").status_code == 204
    with app.app_context():
        assert stored(AccountMonthBalance, AccountMonthBalance.month) == {
            (date(2026, 1, 1), bank): -52_34,
            (date(2026, 1, 1), food): 52_34,
        }
        assert derived.differences() == []
    lines = api.get("/reports/balances", query_string={"from": "2026-01-06"}).get_json()
    assert {line["account"]: line["cents"] for line in lines} == {
        "Bank": -40_00,
        "Food": 40_00,
        "Salary": 0,
    }


def test_refused_posting_leaves_derived_tables_untouched(app, make_account, post_tx):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    assert post_tx("2026-02-01", "bad", (bank, 5), (food, -4)).status_code == 400
    assert post_tx("2026-02-01", "bad", (bank, 5), (999_999, -5)).status_code == 400
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(AccountDayBalance)) == 0
        assert db.session.scalar(select(func.count()).select_from(AccountMonthBalance)) == 0


def test_window_edges_split_between_months_and_days(app, make_account, post_tx):
    bank = make_account("Bank", "asset")
    gift = make_account("Gifts", "income")
    days = ["2025-12-31", "2026-01-01", "2026-01-31", "2026-02-01", "2026-02-28", "2026-03-01"]
    for i, day in enumerate(days):
        post_tx(day, f"gift {i}", (bank, 10**i), (gift, -(10**i)))
    windows = [
        (None, None),
        (date(2026, 1, 1), date(2026, 1, 31)),  # exactly one whole month
        (date(2026, 1, 2), date(2026, 1, 30)),  # inside one month
        (date(2025, 12, 31), date(2026, 3, 1)),  # partial, whole, whole, partial
        (date(2026, 1, 31), date(2026, 2, 1)),  # two partial months, no whole one
        (None, date(2026, 2, 27)),
        (date(2026, 2, 28), None),
        (date(2026, 3, 2), None),
        (date(1, 1, 1), date.max),
        (date(9999, 12, 2), date.max),
    ]
    with app.app_context():
        for start, end in windows:
            assert reports.account_sums(start, end) == plain_sums(start, end), (start, end)


def test_edits_made_in_sql_are_followed(app, make_account, post_tx):
    """No service updates entries, but a restore or an administrator's SQL might."""
    bank = make_account("Bank", "asset")
    cash = make_account("Cash", "asset")
    card = make_account("Card", "liability")
    tx = post_tx("2026-03-15", "move", (bank, 700), (card, -700)).get_json()["id"]
    post_tx("2026-04-02", "other", (cash, 5), (card, -5))
    with app.app_context():
        db.session.execute(
            text("UPDATE transactions SET occurred_on = :d WHERE id = :id"),
            {"d": date(2026, 5, 9), "id": tx},
        )
        db.session.execute(
            text("UPDATE entries SET account_id = :a, amount_cents = 900 WHERE amount_cents = 700"),
            {"a": cash},
        )
        db.session.execute(text("UPDATE entries SET amount_cents = -900 WHERE amount_cents = -700"))
        db.session.execute(text("DELETE FROM entries WHERE amount_cents = 5"))
        db.session.execute(
            text(
                "INSERT INTO entries (transaction_id, account_id, amount_cents)"
                " SELECT transaction_id, :a, 5 FROM entries"
                " WHERE amount_cents = -5"
            ),
            {"a": bank},
        )
        store.commit()
        assert derived.differences() == []
        assert reports.account_sums() == plain_sums()
        assert reports.account_sums(date(2026, 5, 1), date(2026, 5, 31)) == plain_sums(
            date(2026, 5, 1), date(2026, 5, 31)
        )


def test_one_sql_statement_over_several_days_of_a_month_is_followed(app, make_account, post_tx):
    """One statement changing entries of several days in one month, and of another
    month: the month rows get the sum of every day's change (PostgreSQL folds the day
    sums into the month, migration 0018), the day rows each their own."""
    bank = make_account("Bank", "asset")
    cash = make_account("Cash", "asset")
    food = make_account("Food", "expense")
    for day, cents in (("2026-03-02", 100), ("2026-03-17", 250), ("2026-03-31", 40)):
        post_tx(day, "groceries", (food, cents), (bank, -cents))
    post_tx("2026-04-01", "groceries", (food, 7), (bank, -7))
    with app.app_context():
        moved = db.session.execute(
            text("UPDATE entries SET account_id = :cash WHERE account_id = :bank"),
            {"cash": cash, "bank": bank},
        )
        assert moved.rowcount == 4
        store.commit()
        assert derived.differences() == []
        months = stored(AccountMonthBalance, AccountMonthBalance.month)
        assert months[(date(2026, 3, 1), cash)] == -390
        assert months[(date(2026, 4, 1), cash)] == -7
        assert (date(2026, 3, 1), bank) not in months
        days = stored(AccountDayBalance, AccountDayBalance.day)
        assert days[(date(2026, 3, 17), cash)] == -250
        assert reports.account_sums() == plain_sums()


# --- property tests -----------------------------------------------------------

BASE = date(2024, 1, 1)
SPAN = 3 * 366  # three years: many month boundaries, a leap day

posting = st.tuples(
    st.integers(0, SPAN),  # day offset
    st.lists(st.tuples(st.integers(0, 5), st.integers(-(10**12), 10**12)), min_size=1, max_size=4),
)
action = st.one_of(
    st.tuples(st.just("post"), posting),
    st.tuples(st.just("delete"), st.integers(0, 50)),
)
window = st.tuples(
    st.one_of(st.none(), st.integers(-5, SPAN + 5)),
    st.one_of(st.none(), st.integers(-5, SPAN + 5)),
)


def _day(offset):
    return None if offset is None else BASE + timedelta(days=offset)


def _apply(actions, account_ids, live):
    for kind, arg in actions:
        if kind == "post":
            offset, legs = arg
            entries = [{"account_id": account_ids[i], "amount_cents": c} for i, c in legs]
            # Balance the posting with one more leg so every posting is accepted.
            entries.append({"account_id": account_ids[0], "amount_cents": -sum(c for _, c in legs)})
            day = (BASE + timedelta(days=offset)).isoformat()
            live.append(transactions.record_transaction(day, "p", entries, created_by=None))
        elif live:
            transactions.delete_transaction(live.pop(arg % len(live)))
        store.commit()


@pytest.fixture
def six_accounts(app, service_account):
    return [service_account(f"acct {i}", KINDS[i % 5]) for i in range(6)]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(actions=st.lists(action, max_size=30), windows=st.lists(window, min_size=1, max_size=6))
def test_fast_path_equals_plain_aggregate(app, six_accounts, actions, windows):
    with app.app_context():
        db.session.execute(text("DELETE FROM transactions"))  # previous example's books
        store.commit()
        _apply(actions, six_accounts, [])
        assert derived.differences() == []
        assert reports.account_sums() == plain_sums()
        for a, b in windows:
            start, end = _day(a), _day(b)
            if start and end and end < start:
                start, end = end, start
            assert reports.account_sums(start, end) == plain_sums(start, end), (start, end)
            assert reports.account_sums(None, end) == plain_sums(None, end)
