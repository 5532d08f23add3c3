"""Sealing (migration 0011): on PostgreSQL a change writes its audit event as pending in
its own transaction, and events join the hash chain in batches (services/ledger/audit/writing.py,
"writing"). What a user relies on: every committed change is in the trail anyone reads
or verifies, in order, gapless, hashing right; a refused change leaves no event; a seal
that fails never fails the change; nothing pending is lost by a backup and restore.

SQLite appends inside the change (one writer at a time): the same reads hold there,
with nothing ever pending.
"""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text

from app import store
from app.extensions import db
from app.services.ledger import audit, transactions
from tests.services.ledger.audit_chain import all_events, assert_chain, tx_body


def pending_count(app) -> int:
    with app.app_context(), db.engine.connect() as conn:
        return conn.execute(text("SELECT count(*) FROM audit_pending")).scalar_one()


def sealed_count(app) -> int:
    with app.app_context(), db.engine.connect() as conn:
        return conn.execute(text("SELECT count(*) FROM audit_events")).scalar_one()


@pytest.fixture
def two_accounts(make_account):
    return make_account("Bank", "asset"), make_account("Food", "expense")


def post_n(post_tx, accounts, n, start=0):
    bank, food = accounts
    return [
        post_tx("2026-04-01", f"p {k}", (food, k + 1), (bank, -(k + 1))).get_json()["id"]
        for k in range(start, start + n)
    ]


def test_every_committed_change_is_in_the_trail_a_reader_sees(app, api, post_tx, two_accounts):
    """However few changes have been made (fewer than a batch), GET /audit, /audit/head and
    verify show all of them: a reader seals what is waiting first."""
    ids = post_n(post_tx, two_accounts, 3)
    head = api.get("/audit/head").get_json()
    assert head["seq"] == 5  # two accounts, three postings
    items = all_events(api)
    assert [i["object"]["transaction"]["id"] for i in items[2:]] == ids
    assert_chain(items)
    assert head["hash"] == items[-1]["hash"]
    assert pending_count(app) == 0


def test_postgresql_changes_seal_in_batches_without_any_reader(
    app, api, post_tx, two_accounts, dialect
):
    """PostgreSQL: the change whose pending id is a multiple of SEAL_EVERY seals every
    waiting event with its commit; between such changes events wait, in the database.
    SQLite: every event is in the chain as its change commits."""
    # Seven seals, most through the same pooled connection: more than psycopg's
    # prepare threshold (5), which must never try to prepare "COMMIT; SELECT ...".
    post_n(post_tx, two_accounts, 7 * audit.SEAL_EVERY)
    total = 2 + 7 * audit.SEAL_EVERY
    waiting = pending_count(app)
    if dialect == "sqlite":
        assert (waiting, sealed_count(app)) == (0, total)
        return
    # Pending ids count from 1 after the test reset: every 16th event sealed what was
    # waiting; what came after the last of them waits.
    assert waiting == total % audit.SEAL_EVERY
    assert sealed_count(app) == total - waiting
    assert_chain(all_events(api))  # the reader seals the rest, after the others
    assert (pending_count(app), sealed_count(app)) == (0, total)


def test_a_refused_change_leaves_no_event_pending_or_sealed(app, api, post_tx, two_accounts):
    bank, food = two_accounts
    before = pending_count(app) + sealed_count(app)
    refused = api.post("/transactions", json=tx_body("2026-04-01", "x", (food, 5), (bank, -4)))
    assert refused.status_code == 400
    unknown = api.post("/transactions", json=tx_body("2026-04-01", "x", (food, 5), (999, -5)))
    assert unknown.status_code == 400
    assert pending_count(app) + sealed_count(app) == before


def test_verify_seals_what_waits_and_counts_what_it_could_not(
    app, runner, post_tx, two_accounts, dialect, monkeypatch
):
    post_n(post_tx, two_accounts, 3)
    if dialect == "postgresql":
        assert pending_count(app) == 5
        # A seal that cannot run (say the trail is read from a read-only replica):
        # verify replays the waiting events too, after the chain, and says so.
        monkeypatch.setattr(audit, "seal", lambda: 0)
        result = runner.invoke(args=["verify"])
        assert result.exit_code == 0, result.output
        assert "0 events chained to head seq 0 (" in result.output
        assert "(and 5 written but not yet sealed)" in result.output
        monkeypatch.undo()
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 0, result.output
    assert "verify: ok: 5 events chained to head seq 5" in result.output
    assert "not yet sealed" not in result.output
    assert pending_count(app) == 0


def test_a_seal_that_fails_never_fails_the_change(app, api, post_tx, two_accounts, dialect):
    """The seal rides on the change's COMMIT: should it fail, the change stands (its
    response, its rows, its event waiting), and a later seal takes the events."""
    if dialect != "postgresql":
        pytest.skip("PostgreSQL only: SQLite appends inside the change")
    with app.app_context(), db.engine.begin() as conn:
        conn.execute(
            text("ALTER TABLE audit_events ADD CONSTRAINT no_sealing CHECK (false) NOT VALID")
        )
    try:
        ids = post_n(post_tx, two_accounts, audit.SEAL_EVERY + 2)  # crosses a sealing change
        assert sealed_count(app) == 0
        assert pending_count(app) == 2 + len(ids)
        with app.app_context():
            assert audit.seal() == -1  # a reader's seal fails the same way: no error
    finally:
        with app.app_context(), db.engine.begin() as conn:
            conn.execute(text("ALTER TABLE audit_events DROP CONSTRAINT no_sealing"))
    items = all_events(api)
    assert [i["object"]["transaction"]["id"] for i in items[2:]] == ids
    assert_chain(items)


def test_a_commit_refused_with_a_seal_attached_is_the_commits_refusal(app, dialect):
    """store.after_commit: when the COMMIT itself fails (here the balance trigger on an
    entry slipped in by SQL), the caller gets the commit's refusal and the statement
    after it does not run."""
    if dialect != "postgresql":
        pytest.skip("PostgreSQL only: store.after_commit is its plumbing")
    from app.services.errors import BadRequestError

    with app.app_context(), store.writing():
        db.session.execute(
            text(
                "INSERT INTO accounts (id, name, kind, name_key) VALUES (1, 'A', 'asset', 'a');"
                " INSERT INTO transactions (id, occurred_on, description, created_at)"
                " VALUES (1, '2026-01-01', 'unbalanced', now());"
                " INSERT INTO entries (transaction_id, account_id, amount_cents) VALUES (1, 1, 5)"
            )
        )
        store.after_commit(
            db.session.connection(), "INSERT INTO audit_head (id, seq, hash) VALUES (1, 99, 'x')"
        )
        with pytest.raises(BadRequestError):
            store.commit()
        assert db.session.execute(text("SELECT count(*) FROM transactions")).scalar_one() == 0
        assert db.session.execute(text("SELECT count(*) FROM audit_head")).scalar_one() == 0
        # ... and a rolled-back unit's request does not ride on the connection's next commit
        store.after_commit(
            db.session.connection(), "INSERT INTO audit_head (id, seq, hash) VALUES (1, 98, 'y')"
        )
        store.rollback()
        db.session.execute(text("SELECT 1"))
        store.commit()
        assert db.session.execute(text("SELECT count(*) FROM audit_head")).scalar_one() == 0
        store.commit()


def test_concurrent_writers_and_sealers_keep_one_gapless_chain(
    app, api, app_config, two_accounts, runner
):
    """Writers in threads (on PostgreSQL really at once, their commits no longer queued
    on the chain's head) while readers seal at the same time: every posting is in the
    chain exactly once, gapless, hashing right, and verify agrees with the books."""
    bank, food = two_accounts
    errors: list[BaseException] = []
    posted: list[int] = []
    lock = threading.Lock()

    def writer(w: int) -> None:
        try:
            for n in range(25):
                with app.app_context(), store.writing():
                    try:
                        tx_id = store.run_unit(
                            transactions.record_transaction,
                            "2026-05-01",
                            f"w{w} n{n}",
                            [
                                {"account_id": food, "amount_cents": n + 1},
                                {"account_id": bank, "amount_cents": -(n + 1)},
                            ],
                            created_by=None,
                        )
                    finally:
                        db.session.remove()
                with lock:
                    posted.append(tx_id)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def sealer() -> None:
        try:
            for _ in range(40):
                with app.app_context():
                    audit.seal()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(6)]
    threads += [threading.Thread(target=sealer) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    items = all_events(api)
    assert len(items) == 2 + len(posted)
    assert_chain(items)
    assert sorted(i["object"]["transaction"]["id"] for i in items[2:]) == sorted(posted)
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 0, result.output


def test_the_sql_seal_and_the_python_seal_hash_alike(app, api, post_tx, two_accounts, dialect):
    """audit_seal() (PostgreSQL, in SQL) and seal_here() (Python, used by a restore) are
    two writings of one rule: sealing the same waiting events gives the same hashes."""
    if dialect != "postgresql":
        pytest.skip("PostgreSQL only: the SQL seal")
    post_n(post_tx, two_accounts, 4)
    with app.app_context():
        assert db.session.execute(text("SELECT count(*) FROM audit_pending")).scalar() == 6
        assert audit.seal_here() == 6
        by_python = db.session.execute(text("SELECT seq, hash FROM audit_events ORDER BY seq"))
        by_python = by_python.all()
        db.session.rollback()
        assert audit.seal() == 6
        by_sql = db.session.execute(text("SELECT seq, hash FROM audit_events ORDER BY seq"))
        assert by_sql.all() == by_python
        db.session.rollback()
    assert_chain(all_events(api))


def test_a_seal_of_more_than_one_batch_hashes_as_python_does(
    app, api, post_tx, two_accounts, dialect
):
    """audit_seal() moves up to 1,000 events per INSERT and DELETE (migration 0016): a
    seal of 1,206 waiting events (two batches) gives the seqs and hashes the Python
    rule gives, and leaves nothing waiting."""
    if dialect != "postgresql":
        pytest.skip("PostgreSQL only: the SQL seal")
    post_n(post_tx, two_accounts, 4)
    columns = (
        "at, action, user_email, via, client_id, client_name, object, "
        "text_before_object, text_after_seq"
    )
    with app.app_context():
        db.session.execute(
            text(
                f"INSERT INTO audit_pending ({columns}) SELECT {columns} "
                "FROM audit_pending, generate_series(1, 200) ORDER BY audit_pending.id"
            )
        )
        db.session.commit()
        assert pending_count(app) == 6 * 201
        assert audit.seal_here() == 1206
        by_python = db.session.execute(text("SELECT seq, hash FROM audit_events ORDER BY seq"))
        by_python = by_python.all()
        db.session.rollback()
        assert audit.seal() == 1206
        by_sql = db.session.execute(text("SELECT seq, hash FROM audit_events ORDER BY seq"))
        assert by_sql.all() == by_python
        db.session.rollback()
    assert pending_count(app) == 0
    assert_chain(all_events(api))


@pytest.mark.slow  # a property run / a backup restored across stores (README)
@pytest.mark.parametrize("target", ["sqlite", "postgresql"])
def test_a_backup_carrying_waiting_events_restores_them_sealed(
    app, api, post_tx, two_accounts, runner, tmp_path, target, monkeypatch, dialect, clock
):
    """A backup taken while events wait (a change committing during the backup) carries
    them as they are; the restore seals them, so the restored books verify."""
    from app import create_app
    from tests.support import throwaway_database
    from tests.testkit import config_for_tests

    ids = post_n(post_tx, two_accounts, 3)
    monkeypatch.setattr(audit, "seal", lambda: 0)  # the backup's own seal came too early
    path = tmp_path / "books.backup.gz"
    result = runner.invoke(args=["backup", str(path)])
    assert result.exit_code == 0, result.output
    monkeypatch.undo()
    expected_waiting = 5 if dialect == "postgresql" else 0
    assert pending_count(app) == expected_waiting
    with throwaway_database(target, tmp_path, "ledger_restore_") as url:
        restored = create_app(config_for_tests(url, clock))
        cli = restored.test_cli_runner()
        result = cli.invoke(args=["restore", str(path)])
        assert result.exit_code == 0, result.output
        result = cli.invoke(args=["verify"])
        assert result.exit_code == 0, result.output
        assert "verify: ok: 5 events chained to head seq 5" in result.output
        assert pending_count(restored) == 0
        with restored.app_context():
            rows = db.session.execute(text("SELECT object FROM audit_events ORDER BY seq"))
            posted = [r[0] for r in rows.all()][2:]
            db.session.remove()
            db.engine.dispose()
        assert all(f'"id":{tx_id},' in o for tx_id, o in zip(ids, posted, strict=True))


def test_a_long_client_id_is_recorded(app, api, post_tx, two_accounts):
    """A metadata-document client's id is a URL of up to 2,000 characters; its changes
    are recorded with it (the trail's column was 64 before migration 0011)."""
    bank, food = two_accounts
    long_id = "https://apps.example.com/" + "c" * 1900 + "/client.json"
    with app.app_context(), store.writing(), audit.acting(client_id=long_id, via="mcp"):
        store.run_unit(
            transactions.record_transaction,
            "2026-04-02",
            "by a document client",
            [{"account_id": food, "amount_cents": 7}, {"account_id": bank, "amount_cents": -7}],
            created_by=None,
        )
    items = all_events(api)
    assert items[-1]["client_id"] == long_id
    assert_chain(items)
