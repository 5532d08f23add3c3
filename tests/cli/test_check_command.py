"""`ledger-service check`: recompute every derived figure from the entries."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from app.extensions import db


def _books(make_account, post_tx):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    post_tx("2026-01-05", "lunch", (food, 1234), (bank, -1234))
    post_tx("2026-02-07", "dinner", (food, 4000), (bank, -4000))
    return bank, food


def _sql(app, statement, **params):
    with app.app_context():
        db.session.execute(text(statement), params)
        db.session.commit()


def test_check_passes_on_exact_books(runner, make_account, post_tx):
    _books(make_account, post_tx)
    result = runner.invoke(args=["check"])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "every derived figure equals the entries" in result.stderr


def test_check_passes_on_an_empty_database(runner):
    result = runner.invoke(args=["check"])
    assert result.exit_code == 0, result.output


def test_check_reports_each_corrupted_figure(app, runner, make_account, post_tx):
    bank, food = _books(make_account, post_tx)
    _sql(app, "UPDATE account_day_balances SET cents = cents + 1 WHERE account_id = :a", a=food)
    _sql(
        app,
        "DELETE FROM account_month_balances WHERE account_id = :a AND month = '2026-02-01'",
        a=bank,
    )
    result = runner.invoke(args=["check"])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines == [
        f"account_day_balances 2026-01-05 account {food} (Food): stored 1235, entries give 1234",
        f"account_day_balances 2026-02-07 account {food} (Food): stored 4001, entries give 4000",
        f"account_month_balances 2026-02-01 account {bank} (Bank): stored 0, entries give -4000",
    ]
    assert "check: 3 difference(s)" in result.stderr


def test_check_reports_a_stray_row(app, runner, make_account, post_tx):
    bank, _ = _books(make_account, post_tx)
    _sql(
        app,
        "INSERT INTO account_day_balances (day, account_id, cents) VALUES ('2030-01-01', :a, 7)",
        a=bank,
    )
    result = runner.invoke(args=["check"])
    assert result.exit_code == 1
    assert result.stdout == (
        f"account_day_balances 2030-01-01 account {bank} (Bank): stored 7, entries give 0\n"
    )


def test_check_repair_rebuilds_from_entries(app, runner, api, make_account, post_tx):
    _, food = _books(make_account, post_tx)
    _sql(app, "UPDATE account_month_balances SET cents = 0")
    assert api.get("/reports/balances").get_json()[0]["cents"] == 0  # the corruption shows
    result = runner.invoke(args=["check", "--repair"])
    assert result.exit_code == 1  # differences were found (and are listed) ...
    assert len(result.stdout.splitlines()) == 4  # 2 accounts x 2 months
    assert "rebuilt the derived tables" in result.stderr
    again = runner.invoke(args=["check"])  # ... and are gone afterwards
    assert again.exit_code == 0, again.output
    lines = {line["account"]: line["cents"] for line in api.get("/reports/balances").get_json()}
    assert lines == {"Bank": -5234, "Food": 5234}


def test_check_reports_an_unbalanced_transaction(app, runner, make_account, post_tx, dialect):
    """Only reachable by bypassing the store's own check; SQLite's runs in app.store."""
    bank, food = _books(make_account, post_tx)
    if dialect == "postgresql":
        with app.app_context():
            db.session.execute(text("SET session_replication_role = replica"))
            db.session.execute(
                text("UPDATE entries SET amount_cents = 1 WHERE amount_cents = 1234")
            )
            db.session.commit()
    else:  # straight through the engine, past the session's pre-commit check
        with app.app_context(), db.engine.begin() as conn:
            conn.execute(text("UPDATE entries SET amount_cents = 1 WHERE amount_cents = 1234"))
            conn.execute(text("DELETE FROM ledger_balance_pending"))
    result = runner.invoke(args=["check"])
    assert result.exit_code == 1
    assert "transactions 1: 2 entries summing to -1233 (must be >= 2 summing to 0)" in result.stdout


def test_postings_go_on_while_a_check_runs(app, runner, api, make_account, post_tx, monkeypatch):
    """The check reads one snapshot without taking the write lock (SQLite: no
    BEGIN IMMEDIATE), so the service keeps accepting postings during a long check."""
    import threading

    from app.services.ledger import derived

    bank, food = _books(make_account, post_tx)
    entered, release = threading.Event(), threading.Event()
    real = derived.differences

    def held_open():
        lines = real()
        entered.set()
        release.wait(timeout=60)
        return lines

    monkeypatch.setattr(derived, "differences", held_open)
    outcome = {}
    check = threading.Thread(target=lambda: outcome.update(result=runner.invoke(args=["check"])))
    check.start()
    try:
        assert entered.wait(timeout=60)
        response = post_tx("2026-03-01", "during the check", (food, 99), (bank, -99))
        assert response.status_code == 201
    finally:
        release.set()
        check.join(timeout=60)
    assert outcome["result"].exit_code == 0, outcome["result"].output


def test_check_names_and_repairs_a_damaged_description_search(
    app, api, runner, make_account, post_tx, dialect, monkeypatch
):
    """SQLite: the FTS5 table of migration 0010 is derived from the descriptions; a row
    taken out of it behind the triggers' back is a difference, and --repair rebuilds it
    (PostgreSQL's trigram index is the server's own: check has nothing to add there)."""
    from app.services.ledger import listing

    _books(make_account, post_tx)
    lunch = post_tx("2026-03-01", "Lunch at Zqxville", (1, 5), (2, -5)).get_json()["id"]
    if dialect == "sqlite":
        # lunch is in the unindexed tail (migration 0017): check indexes it first; only
        # then is taking it out of the index a damage (FTS5 refuses to 'delete' a row
        # it never held: the statement itself fails as a malformed index).
        assert runner.invoke(args=["check"]).exit_code == 0
        _sql(
            app,
            "INSERT INTO transaction_search (transaction_search, rowid, description)"
            " VALUES ('delete', :id, 'Lunch at Zqxville')",
            id=lunch,
        )
        _names_and_rebuilds_the_search_index(runner)
    result = runner.invoke(args=["check"])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    monkeypatch.setattr(listing, "WALK_ROWS", 1)
    found = api.get("/transactions?limit=5&q=ZQXVILLE").get_json()["items"]
    assert [t["id"] for t in found] == [lunch]


def test_check_names_and_repairs_a_damaged_words_table(
    app, api, runner, make_account, post_tx, dialect
):
    """SQLite: the FTS5 table of the descriptions' words (migration 0026), kept under
    the same mark as the description search, is checked and rebuilt with it: a row
    taken out of it behind the triggers' back is a difference, and --repair rebuilds
    it (the statements' history finds the transaction by its word again)."""
    _books(make_account, post_tx)
    lunch = post_tx("2026-03-01", "Lunch at Zqxville", (1, 5), (2, -5)).get_json()["id"]
    if dialect != "sqlite":
        pytest.skip("the words table is SQLite's (migration 0026); PostgreSQL's is an index")
    assert runner.invoke(args=["check"]).exit_code == 0  # lunch indexed: the tail goes in
    _sql(
        app,
        "INSERT INTO transaction_words (transaction_words, rowid, words)"
        " VALUES ('delete', :id, 'Lunch at Zqxville')",
        id=lunch,
    )
    with app.app_context():
        found = text("SELECT rowid FROM transaction_words WHERE transaction_words MATCH 'zqxville'")
        assert db.session.execute(found).scalars().all() == []
        db.session.remove()
    _names_and_rebuilds_the_search_index(runner)
    result = runner.invoke(args=["check"])
    assert result.exit_code == 0, result.output
    with app.app_context():
        assert db.session.execute(found).scalars().all() == [lunch]
        db.session.remove()


def test_check_passes_with_an_unindexed_tail(
    app, api, runner, make_account, post_tx, dialect, monkeypatch
):
    """SQLite: the newest postings wait for their batch of 16 above search_indexed.upto
    (migration 0017); FTS5's integrity check would read them as a damaged index, so
    check indexes them first (and keeps that: the mark moves to the newest id)."""
    from app.services.ledger import listing

    _books(make_account, post_tx)
    tail = [
        post_tx("2026-03-01", f"Zqx tail {i}", (1, 5), (2, -5)).get_json()["id"] for i in range(3)
    ]
    if dialect == "sqlite":
        with app.app_context():
            assert db.session.execute(text("SELECT upto FROM search_indexed")).scalar() == 0
            db.session.remove()
    result = runner.invoke(args=["check"])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    if dialect == "sqlite":
        with app.app_context():
            upto = db.session.execute(text("SELECT upto FROM search_indexed")).scalar()
            assert upto == tail[-1]
            db.session.remove()
    lunch = post_tx("2026-03-02", "Zqx after the check", (1, 5), (2, -5)).get_json()["id"]
    assert runner.invoke(args=["check"]).exit_code == 0
    monkeypatch.setattr(listing, "WALK_ROWS", 1)
    found = api.get("/transactions?limit=10&q=ZQX").get_json()["items"]
    assert sorted(t["id"] for t in found) == sorted([*tail, lunch])


def _names_and_rebuilds_the_search_index(runner):
    """check names the damaged description index (exit 1); --repair rebuilds it and
    says so (exit 1: it found a difference)."""
    result = runner.invoke(args=["check"])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "transaction_search: the description search index differs from the descriptions"
        " (repair rebuilds it)"
    ]
    repaired = runner.invoke(args=["check", "--repair"])
    assert repaired.exit_code == 1
    assert "rebuilt the description search index" in repaired.stderr
