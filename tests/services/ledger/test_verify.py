"""`ledger-service verify` (issue 19): clean books pass; each kind of tampering is caught
and named; books that predate the trail are backfilled by migration 0007 and verify."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import pytest
from sqlalchemy import text

from app import create_app, store
from app.extensions import db
from app.services.ledger import audit, verify_trail, verify_transactions
from tests.testkit import restored_backup


@pytest.fixture
def books(api, make_account, post_tx):
    """Two accounts, three transactions (one deleted), a settings change: ids by name."""
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    ids = [
        post_tx(f"2026-01-0{n}", f"shop {n}", (food, 100 * n), (bank, -100 * n)).get_json()["id"]
        for n in (1, 2, 3)
    ]
    assert api.delete(f"/transactions/{ids[1]}").status_code == 204
    assert api.put("/settings", json={"book_style": "club"}).status_code == 200
    # The trail as anyone who reads it leaves it: every event sealed into the chain
    # (PostgreSQL seals in batches; GET /audit/head seals what is waiting first).
    assert api.get("/audit/head").get_json()["seq"] == 7
    return {"bank": bank, "food": food, "tx": ids}


def run_verify(runner):
    result = runner.invoke(args=["verify"])
    return result.exit_code, result.output.strip()


def sql(app, *statements, **params):
    with app.app_context(), db.engine.begin() as conn:
        for statement in statements:
            conn.execute(text(statement), params)


def first_entry(app, tx_id):
    with app.app_context(), db.engine.connect() as conn:
        return conn.execute(
            text("SELECT min(id) FROM entries WHERE transaction_id = :t"), {"t": tx_id}
        ).scalar_one()


def test_clean_books_verify_with_one_summary_line(runner, books):
    code, output = run_verify(runner)
    assert code == 0, output
    assert len(output.splitlines()) == 1
    assert output.startswith("verify: ok: 7 events")
    assert "2 transactions, 4 entries, 2 accounts" in output


def test_an_empty_ledger_verifies(runner, app):
    code, output = run_verify(runner)
    assert code == 0 and "0 events" in output, output


def test_an_amount_changed_by_sql_is_named(runner, app, books):
    entry = first_entry(app, books["tx"][2])
    # Both legs changed, so the transaction still balances and only the trail can tell.
    sql(
        app,
        "UPDATE entries SET amount_cents = amount_cents * 2 WHERE transaction_id = :t",
        t=books["tx"][2],
    )
    code, output = run_verify(runner)
    assert code == 1
    assert output == (
        f"verify: FAILED: entry {entry} of transaction {books['tx'][2]}: amount_cents is 600 "
        "in the ledger but 300 in event seq 5"
    )


def test_an_entry_added_behind_the_service_is_named(runner, app, books):
    tx = books["tx"][0]
    sql(
        app,
        "INSERT INTO entries (transaction_id, account_id, amount_cents) VALUES"
        " (:t, :a, 7), (:t, :b, -7)",
        t=tx,
        a=books["food"],
        b=books["bank"],
    )
    code, output = run_verify(runner)
    assert code == 1
    assert f"of transaction {tx} is in the ledger but not in event seq 3" in output
    assert "added outside the service" in output


def test_a_transaction_deleted_by_sql_is_named(runner, app, books):
    sql(app, "DELETE FROM transactions WHERE id = :t", t=books["tx"][0])
    code, output = run_verify(runner)
    assert code == 1
    assert f"transaction {books['tx'][0]} (posted by event seq 3) is missing" in output


def test_a_removed_audit_row_is_named(runner, app, books):
    sql(app, "DELETE FROM audit_events WHERE seq = 4")
    code, output = run_verify(runner)
    assert code == 1
    assert "audit event seq 4 is missing: the trail goes from seq 3 to seq 5" in output


def test_a_removed_newest_audit_row_is_caught(runner, app, books):
    sql(app, "DELETE FROM audit_events WHERE seq = 7")
    code, output = run_verify(runner)
    assert code == 1
    assert "the trail's head names event seq 7, but the trail ends at seq 6" in output
    # Without the head row too, the replay still finds the settings the trail lost.
    sql(app, "DELETE FROM audit_head")
    code, output = run_verify(runner)
    assert code == 1
    assert "settings: book_style is 'club' in the ledger but 'personal'" in output


def test_an_inserted_or_edited_audit_row_is_named(runner, app, books):
    sql(
        app,
        "INSERT INTO audit_events (seq, at, action, via, object, hash) VALUES"
        " (8, '2026-11-21 12:00:00', 'settings.changed', 'cli',"
        ' \'{"settings":{"book_style":"club"}}\', :h)',
        h="f" * 64,
    )
    code, output = run_verify(runner)
    assert code == 1
    assert output.startswith("verify: FAILED: audit event seq 8 does not match its hash")
    sql(
        app,
        "DELETE FROM audit_events WHERE seq = 8",
        # (on SQLite the head's trigger followed the inserted row: put it back too)
        "UPDATE audit_head SET seq = 7, hash = (SELECT hash FROM audit_events WHERE seq = 7)",
    )
    assert run_verify(runner)[0] == 0
    sql(app, "UPDATE audit_events SET object = replace(object, '300', '3000') WHERE seq = 5")
    code, output = run_verify(runner)
    assert code == 1 and "audit event seq 5 does not match its hash" in output


def test_an_account_renamed_or_added_by_sql_is_named(runner, app, books):
    sql(app, "UPDATE accounts SET name = 'Bank 2' WHERE id = :a", a=books["bank"])
    code, output = run_verify(runner)
    assert code == 1
    assert f"account {books['bank']}: name is 'Bank 2' in the ledger but 'Bank'" in output
    sql(app, "UPDATE accounts SET name = 'Bank' WHERE id = :a", a=books["bank"])
    sql(app, "INSERT INTO accounts (name, kind) VALUES ('Hidden', 'asset')")
    code, output = run_verify(runner)
    assert code == 1 and "is in the ledger but no event created it" in output


def test_a_transaction_inserted_by_sql_is_named(runner, app, books):
    sql(
        app,
        "INSERT INTO transactions (id, occurred_on, description, created_at)"
        " VALUES (900, '2026-02-01', 'slipped in', '2026-02-01 00:00:00')",
        "INSERT INTO entries (transaction_id, account_id, amount_cents) VALUES"
        " (900, :a, 1), (900, :b, -1)",
        a=books["food"],
        b=books["bank"],
    )
    code, output = run_verify(runner)
    assert code == 1
    assert "transaction 900 is in the ledger but no event posted it" in output


def _digest(tx: dict) -> int:
    """The per-transaction digest the replay comparison used to sum per block of ids."""
    return int.from_bytes(hashlib.sha256(audit.canonical(tx).encode()).digest(), "big")


def test_compensating_edits_inside_one_block_of_ids_are_named(
    runner, app, books, post_tx, monkeypatch
):
    """The replay comparison is exact. It used to sum SHA-256 digests mod 2**256 per block
    of transaction ids: a database writer who doubles one transaction's amounts and edits
    another of the block until the sums agree again (a generalised birthday search, about
    2**32 work) passed. Here the edit is the one that makes the old sums agree when cut to
    8 bits (a few hundred tries), and verify's blocks are cut to two transactions
    (BATCH, the rows read at a time: the events' in verify_trail, the transactions' in
    verify_transactions), so the books span two blocks and both edits lie in the second:
    a block read wrongly (one skipped or read twice) is named instead."""
    monkeypatch.setattr(verify_trail, "BATCH", 2)
    monkeypatch.setattr(verify_transactions, "BATCH", 2)
    other, changed = [
        post_tx(
            f"2026-01-0{n}", f"shop {n}", (books["food"], 100 * n), (books["bank"], -100 * n)
        ).get_json()["id"]
        for n in (4, 5)
    ]  # stored: tx[0], tx[2] (the first block), then other, changed (the second)
    with app.app_context():
        stored = {tx["id"]: tx for tx in verify_transactions._stored_transactions()}
        db.session.rollback()
    assert list(stored) == [books["tx"][0], books["tx"][2], other, changed]
    doubled = {
        **stored[changed],
        "entries": [
            {**e, "amount_cents": 2 * e["amount_cents"]} for e in stored[changed]["entries"]
        ],
    }
    wanted = (_digest(stored[changed]) - _digest(doubled) + _digest(stored[other])) % 2**8
    description = next(
        f"shop 4{' ' * k}"
        for k in range(1, 100_000)
        if _digest({**stored[other], "description": f"shop 4{' ' * k}"}) % 2**8 == wanted
    )
    sql(
        app,
        "UPDATE entries SET amount_cents = amount_cents * 2 WHERE transaction_id = :c",
        "UPDATE transactions SET description = :d WHERE id = :o",
        c=changed,
        o=other,
        d=description,
    )
    code, output = run_verify(runner)
    assert code == 1, output
    assert output == (
        f"verify: FAILED: transaction {other}: description is {description!r} in the ledger "
        "but 'shop 4' in event seq 8"
    )


def test_a_deletion_appended_with_a_valid_hash_must_match_a_posting(runner, app, books):
    """An event appended with the right next hash passes the chain (the hash rule is
    public); the replay still holds it to the trail: a deletion of a transaction as no
    event posted it is named."""
    tx = books["tx"][0]
    with app.app_context():
        stored = {t["id"]: t for t in verify_transactions._stored_transactions()}[tx]
        db.session.rollback()
    forged = {**stored, "description": "something else"}
    head = audit_head(app)
    obj = audit.canonical({"transaction": forged})
    event = audit.event_text(
        8, "2026-11-21T12:00:00Z", "transaction.deleted", None, "cli", None, None, obj
    )
    sql(
        app,
        "INSERT INTO audit_events (seq, at, action, via, object, hash) VALUES"
        " (8, '2026-11-21 12:00:00', 'transaction.deleted', 'cli', :obj, :h)",
        "UPDATE audit_head SET seq = 8, hash = :h",
        obj=obj,
        h=audit.chain(head, event),
    )
    code, output = run_verify(runner)
    assert code == 1
    assert output == (
        f"verify: FAILED: audit event seq 8 deletes transaction {tx} as no earlier event "
        "posted it: the trail was written outside the service"
    )


def audit_head(app) -> str:
    with app.app_context(), db.engine.connect() as conn:
        return conn.execute(text("SELECT hash FROM audit_events WHERE seq = 7")).scalar_one()


def test_a_balance_table_changed_by_sql_is_named(runner, app, api, books):
    """Every report reads the per-day and per-month balance tables: a 30.00 expense added
    there by SQL shows in the reports though no transaction holds it."""
    food = books["food"]
    sql(
        app,
        "INSERT INTO account_day_balances (day, account_id, cents) VALUES ('2026-03-05', :a, 3000)",
        "INSERT INTO account_month_balances (month, account_id, cents)"
        " VALUES ('2026-03-01', :a, 3000)",
        a=food,
    )
    march = api.get("/reports/balances?from=2026-03-01&to=2026-03-31").get_json()
    assert {line["account"]: line["cents"] for line in march}["Food"] == 3000
    code, output = run_verify(runner)
    assert code == 1
    assert output == (
        f"verify: FAILED: account_day_balances 2026-03-05 account {food} (Food): stored 3000, "
        "entries give 0: a balance table that reports read differs from the entries, so it "
        "was changed outside the service (`ledger-service check --repair` rebuilds it)"
    )
    sql(app, "DELETE FROM account_day_balances WHERE day = '2026-03-05'")
    code, output = run_verify(runner)  # the month alone
    assert code == 1
    assert f"account_month_balances 2026-03-01 account {food} (Food): stored 3000" in output
    sql(app, "UPDATE account_month_balances SET cents = cents - 3000 WHERE month = '2026-03-01'")
    code, output = run_verify(runner)  # a zero row means no figure: nothing differs
    assert code == 0, output
    assert output.endswith("; the balance tables equal the entries")


# --- events waiting to be sealed (audit_pending) ----------------------------------------

FORGED_AT = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def forge_waiting_posting(app, books, *, hashed_via="web"):
    """A 500.00 posting written by SQL as an attacker would: the transaction, its two
    entries, and a matching transaction.posted event waiting to be sealed, attributed
    to alice in the web app. hashed_via: what the text the seal hashes says instead."""
    entries = [(9001, books["food"], 50000), (9002, books["bank"], -50000)]
    obj = audit.canonical(audit.transaction_object(900, "2026-02-01", "slipped in", entries))
    before, after = audit.pending_texts(
        FORGED_AT, "transaction.posted", "alice@example.com", hashed_via, None, None
    )
    sql(
        app,
        "INSERT INTO transactions (id, occurred_on, description, created_at)"
        " VALUES (900, '2026-02-01', 'slipped in', '2026-02-01 00:00:00')",
        "INSERT INTO entries (id, transaction_id, account_id, amount_cents) VALUES"
        " (9001, 900, :food, 50000), (9002, 900, :bank, -50000)",
        "INSERT INTO audit_pending (at, action, user_email, via, object, text_before_object,"
        " text_after_seq) VALUES ('2026-11-21 12:00:00', 'transaction.posted',"
        " 'alice@example.com', 'web', :obj, :before, :after)",
        food=books["food"],
        bank=books["bank"],
        obj=obj,
        before=before,
        after=after,
    )


def test_a_forged_waiting_posting_is_named_or_sealed_into_view(runner, app, api, books, dialect):
    """SQLite: nothing but a restore writes a waiting event, and the restore seals it, so
    any waiting event was written outside the service: named. PostgreSQL: verify seals it
    first, so it joins the chain after every head an auditor noted and History shows it
    (an unkeyed chain cannot tell who appended: docs/reliability.md)."""
    forge_waiting_posting(app, books)
    code, output = run_verify(runner)
    if dialect == "sqlite":
        assert code == 1
        assert output.startswith("verify: FAILED: audit_pending holds an event (id ")
        assert "transaction.posted) that was written outside the service" in output
        return
    assert code == 0, output
    assert api.get("/audit/head").get_json()["seq"] == 8  # past the noted head (7)
    newest = api.get("/audit?limit=1").get_json()["items"][0]
    assert newest["object"]["transaction"]["id"] == 900


def test_a_waiting_event_whose_hashed_text_differs_from_its_columns_is_named(
    runner, app, books, dialect, monkeypatch
):
    """The seal hashes a waiting event's texts; History shows its columns. A waiting event
    whose texts say `cli` while its columns say `web` is named before it is sealed (here
    sealing is impossible, as on a read-only replica) and, sealed, fails its hash."""
    forge_waiting_posting(app, books, hashed_via="cli")
    monkeypatch.setattr(audit, "seal", lambda: 0)
    code, output = run_verify(runner)
    assert code == 1
    if dialect == "sqlite":
        assert "that was written outside the service" in output
        return
    assert output.startswith("verify: FAILED: a pending audit event (id ")
    assert ", to be seq 8) does not match its columns" in output
    monkeypatch.undo()
    code, output = run_verify(runner)
    assert code == 1
    assert output.startswith("verify: FAILED: audit event seq 8 does not match its hash")


# --- migration 0007 on books that already exist --------------------------------------

OLD_BOOKS = [
    "INSERT INTO users (id, email, password_hash, webauthn_handle, created_at) VALUES"
    " (1, 'bob@example.com', 'x', :handle, '2025-01-01 00:00:00')",
    "INSERT INTO accounts (id, name, kind) VALUES (1, 'Bank', 'asset'), (2, 'Épicerie', 'expense')",
    "INSERT INTO transactions (id, occurred_on, description, created_by, created_at) VALUES"
    " (1, '2025-12-31', 'a', 1, '2026-01-01 00:00:00'),"
    " (2, '2026-01-01', 'b', NULL, '2026-01-01 00:00:00'),"
    " (5, '2026-01-01', 'c', NULL, '2026-01-01 00:00:00')",
    "INSERT INTO entries (id, transaction_id, account_id, amount_cents) VALUES"
    " (1, 1, 2, 100), (2, 1, 1, -100), (3, 2, 2, 250), (4, 2, 1, -250), (9, 5, 1, 7),"
    " (10, 5, 2, -7)",
    "UPDATE settings SET book_style = 'club'",
]


@pytest.mark.slow  # a new database migrated up from an old revision: seconds (README)
def test_migration_backfills_existing_books_and_verify_holds(scratch_database_url):
    from flask_migrate import upgrade

    app = create_app({"DATABASE_URL": scratch_database_url, "TESTING": True})
    with app.app_context():
        store.write_intent.set(True)
        upgrade(revision="0005_device_starts")
        with db.engine.begin() as conn:
            for statement in OLD_BOOKS:
                conn.execute(text(statement), {"handle": b"h" * 16})
            if conn.dialect.name == "sqlite":
                conn.execute(text("DELETE FROM ledger_balance_pending"))
        upgrade()
        rows = db.session.execute(
            text(
                "SELECT seq, action, via, user_email, client_id, object FROM audit_events"
                " ORDER BY seq"
            )
        ).all()
        db.session.rollback()
        store.write_intent.set(False)
        runner = app.test_cli_runner()
        result = runner.invoke(args=["verify"])
        assert result.exit_code == 0, result.output
        assert "6 events" in result.output and "3 transactions, 6 entries" in result.output
        db.session.remove()
        db.engine.dispose()
    assert [(r.seq, r.action) for r in rows] == [
        (1, "account.created"),
        (2, "account.created"),
        (3, "settings.changed"),
        (4, "transaction.posted"),
        (5, "transaction.posted"),
        (6, "transaction.posted"),
    ]
    assert {(r.via, r.user_email, r.client_id) for r in rows} == {("cli", None, None)}
    assert rows[1].object == (
        '{"account":{"archived":false,"id":2,"kind":"expense","name":"Épicerie"}}'
    )
    assert rows[5].object == (
        '{"transaction":{"description":"c","entries":[{"account_id":1,"amount_cents":7,"id":9},'
        '{"account_id":2,"amount_cents":-7,"id":10}],"id":5,"occurred_on":"2026-01-01"}}'
    )


@pytest.mark.slow  # a new database migrated up from an old revision: seconds (README)
def test_posting_after_the_backfill_continues_the_chain(scratch_database_url):
    from flask_migrate import upgrade

    from app.services.ledger import audit, transactions

    app = create_app({"DATABASE_URL": scratch_database_url, "TESTING": True})
    with app.app_context():
        store.write_intent.set(True)
        upgrade(revision="0005_device_starts")
        with db.engine.begin() as conn:
            conn.execute(text(OLD_BOOKS[1]))
        upgrade()
        store.run_unit(
            transactions.record_transaction,
            "2026-02-02",
            "after",
            [{"account_id": 1, "amount_cents": 5}, {"account_id": 2, "amount_cents": -5}],
            created_by=None,
        )
        assert audit.head()["seq"] == 3
        db.session.rollback()
        store.write_intent.set(False)
        result = app.test_cli_runner().invoke(args=["verify"])
        assert result.exit_code == 0, result.output
        db.session.remove()
        db.engine.dispose()


# slow: a restore into a new PostgreSQL database (created, migrated, dropped) takes seconds
@pytest.mark.parametrize("target", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_a_restored_backup_keeps_the_trail_and_verifies(
    runner, books, app_config, tmp_path, target, api
):
    with restored_backup(runner, app_config, tmp_path, target, "ledger_audit_restore_") as (
        restored,
        cli,
        verified,
    ):
        assert "7 events" in verified, verified
        client = restored.test_client()
        headers = {"Authorization": f"Bearer {api.token}"}
        assert (
            client.get("/audit/head", headers=headers).get_json()
            == api.get("/audit/head").get_json()
        )
        made = client.post("/accounts", json={"name": "New", "kind": "asset"}, headers=headers)
        assert made.status_code == 201
        assert client.get("/audit/head", headers=headers).get_json()["seq"] == 8
        assert cli.invoke(args=["verify"]).exit_code == 0
        with restored.app_context():
            db.session.remove()
            db.engine.dispose()
