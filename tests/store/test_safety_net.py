"""The store's own balance check, exercised by writing rows past the service.

PostgreSQL: a deferred constraint trigger raises P0001 at COMMIT.
SQLite: triggers note touched transactions; app.store re-checks them before COMMIT.
Either way the commit fails, nothing is stored, and the caller sees our words.
"""

import pytest
from sqlalchemy import create_engine, text

from app import store
from app.extensions import db
from app.services.errors import BALANCE_MESSAGE, BadRequestError


@pytest.fixture
def accounts(service_account):
    return service_account("Bank", "asset"), service_account("Food", "expense")


def insert_tx(tx_id, *legs):
    db.session.execute(
        text(
            "INSERT INTO transactions (id, occurred_on, description, created_at) "
            "VALUES (:id, '2026-01-01', 'raw', '2026-01-01 00:00:00')"
        ),
        {"id": tx_id},
    )
    for account_id, cents in legs:
        db.session.execute(
            text(
                "INSERT INTO entries (transaction_id, account_id, amount_cents) VALUES (:t, :a, :c)"
            ),
            {"t": tx_id, "a": account_id, "c": cents},
        )


def tx_count():
    return db.session.execute(text("SELECT count(*) FROM transactions")).scalar()


def assert_commit_refused():
    with pytest.raises(BadRequestError) as caught:
        store.commit()
    assert caught.value.message == BALANCE_MESSAGE


@pytest.mark.parametrize(
    "legs",
    [
        [(0, 100), (1, -99)],  # does not sum to zero
        [(0, 0)],  # a single entry
        [],  # a header without entries
    ],
)
def test_unbalanced_raw_rows_fail_at_commit(app, accounts, legs):
    with app.app_context():
        insert_tx(77, *[(accounts[i], c) for i, c in legs])
        assert_commit_refused()
        assert tx_count() == 0


def test_balanced_raw_rows_commit(app, accounts):
    with app.app_context():
        insert_tx(5, (accounts[0], -40), (accounts[1], 40))
        store.commit()
        assert tx_count() == 1


def test_breaking_a_stored_transaction_fails(app, accounts):
    with app.app_context():
        insert_tx(5, (accounts[0], -40), (accounts[1], 40))
        store.commit()
        db.session.execute(text("UPDATE entries SET amount_cents = 41 WHERE amount_cents = 40"))
        assert_commit_refused()
        db.session.execute(text("DELETE FROM entries WHERE amount_cents = 40"))
        assert_commit_refused()
        sums = db.session.execute(text("SELECT sum(amount_cents), count(*) FROM entries")).one()
        assert tuple(sums) == (0, 2)


def test_deleting_a_whole_transaction_passes(app, accounts):
    with app.app_context():
        insert_tx(5, (accounts[0], -40), (accounts[1], 40))
        store.commit()
        db.session.execute(text("DELETE FROM transactions WHERE id = 5"))
        store.commit()
        assert tx_count() == 0
        assert db.session.execute(text("SELECT count(*) FROM entries")).scalar() == 0


def test_the_http_answer_for_a_store_refusal_is_400(app, api, accounts, monkeypatch):
    """If the service's own check were missing, the store's answer reaches the client as 400."""
    from app.services.ledger import postable

    monkeypatch.setattr(postable, "check_balanced", lambda entries: None)
    response = api.post(
        "/transactions",
        json={
            "occurred_on": "2026-01-01",
            "description": "slips past the service",
            "entries": [
                {"account_id": accounts[0], "amount_cents": 5},
                {"account_id": accounts[1], "amount_cents": 6},
            ],
        },
    )
    assert response.status_code == 400
    assert response.get_json() == {"error": BALANCE_MESSAGE}
    assert api.get("/transactions").get_json() == []


def test_postgres_trigger_refuses_a_client_that_bypasses_the_app(
    app, accounts, dialect, database_url
):
    if dialect != "postgresql":
        pytest.skip(
            "SQLite's check runs in the app's commit; only PostgreSQL enforces it for any client"
        )
    engine = create_engine(database_url)
    try:
        with pytest.raises(Exception) as caught, engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO transactions (id, occurred_on, description, created_at) "
                    "VALUES (9, '2026-01-01', 'raw', now())"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO entries (transaction_id, account_id, amount_cents) "
                    "VALUES (9, :a, 1)"
                ),
                {"a": accounts[0]},
            )
        assert getattr(caught.value.orig, "sqlstate", None) == "P0001"
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM transactions")).scalar() == 0
    finally:
        engine.dispose()
