"""The write path: few statements per posting, retries where the database asks, no
lost or doubled writes under concurrency."""

from __future__ import annotations

import sqlite3
import threading
import time

import psycopg.errors
import pytest
from sqlalchemy import event, func, select
from sqlalchemy.exc import OperationalError

from app import store
from app.extensions import db
from app.models import Transaction
from app.services.ledger import derived, listing, transactions


@pytest.fixture
def statements(sql_sent):
    """Every SQL statement the app sends, in order (tests/conftest.py's sql_sent)."""
    return sql_sent


def _posting(bank, food, cents=500):
    return {
        "occurred_on": "2026-03-01",
        "description": "groceries",
        "entries": [
            {"account_id": food, "amount_cents": cents},
            {"account_id": bank, "amount_cents": -cents},
        ],
    }


def test_post_of_two_entries_takes_a_fixed_number_of_statements(
    api, make_account, statements, dialect
):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    assert api.post("/transactions", json=_posting(bank, food)).status_code == 201  # warm-up
    for cents in (1, 2):
        statements.clear()
        assert api.post("/transactions", json=_posting(bank, food, cents)).status_code == 201
        # PostgreSQL, 2: the token lookup by digest (primary key), and one statement
        # (services.transactions._INSERT_CHECKED) that reads the lock date, checks the
        # accounts exist and are open, makes sure no schedule may meet the posting
        # (schedule_meeting.MAY_MEET: else it writes nothing, and the schedules are read
        # and the posting written as on SQLite), inserts the header and its entries (the derived
        # tables are kept by triggers inside it) and writes the audit event as pending
        # (its object built around the new ids); after the COMMIT the same connection
        # seals it into the chain (audit_seal(), sent by the driver directly, its own
        # short transaction: the posting's commit never waits on the chain's head; see
        # test_audit_sealing.py). SQLite, 6: BEGIN IMMEDIATE
        # (the credential check and the write share one database transaction), the
        # token lookup, one INSERT of the header that reads the lock date and checks
        # the accounts exist and are open (services.transactions._INSERT_CHECKED_SQLITE,
        # RETURNING id), one INSERT of the entries ... RETURNING, the audit event's
        # INSERT into the chain, and app.store's pre-COMMIT balance re-check: one
        # DELETE of the pending transactions RETURNING their entries' amounts
        # (docs/performance.md, "The write path, issue 30"), and before the posting one
        # indexed read: the active schedules on the posting's accounts it may meet
        # (services/ledger/schedule_meeting.candidates, docs/schedules.md). Without an
        # Idempotency-Key no statement is spent on keys.
        expected = 2 if dialect == "postgresql" else 7
        assert len(statements) == expected, "\n".join(statements)
        assert not [s for s in statements if "idempotency" in s], statements
        if dialect == "postgresql":
            assert statements[1].startswith("WITH books AS ( SELECT locked_through")
            assert "NOT EXISTS (SELECT 1 FROM schedules WHERE active" in statements[1]
        else:
            assert statements[0] == "BEGIN IMMEDIATE", statements
            assert "FROM schedules WHERE active" in statements[2], statements
            assert statements[3].startswith("INSERT INTO transactions"), statements
            assert statements[5].startswith("INSERT INTO audit_events"), statements


def _round_trips(monkeypatch) -> tuple[list, list]:
    """psycopg's own BEGIN/COMMIT commands (Connection._exec_command) and the pipelines
    opened (app/store/postgresql.py sends a unit's BEGIN with its first statement in one)."""
    commands: list[bytes] = []
    pipelines: list[int] = []
    real_exec, real_pipeline = psycopg.Connection._exec_command, psycopg.Connection.pipeline

    def exec_command(self, command, *args, **kwargs):
        commands.append(bytes(command) if isinstance(command, bytes) else command)
        return real_exec(self, command, *args, **kwargs)

    def pipeline(self, *args, **kwargs):
        pipelines.append(1)
        return real_pipeline(self, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "_exec_command", exec_command)
    monkeypatch.setattr(psycopg.Connection, "pipeline", pipeline)
    return commands, pipelines


def _warmed_round_trips(api, make_account, dialect, monkeypatch):
    """PostgreSQL only: two accounts, one posting to warm the statement caches, then
    (bank, food, commands, pipelines) counted from here on (_round_trips)."""
    if dialect != "postgresql":
        pytest.skip("PostgreSQL only: SQLite has no round trips")
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    assert api.post("/transactions", json=_posting(bank, food)).status_code == 201  # warm-up
    return (bank, food, *_round_trips(monkeypatch))


def test_postgresql_posting_is_two_round_trips(app, api, make_account, dialect, monkeypatch):
    """PostgreSQL: the token lookup and the posting each run as a transaction of their
    own (store.on_its_own; the posting is the route's declared sole write): no BEGIN,
    no COMMIT, two round trips in all, and the posting is committed."""
    bank, food, commands, pipelines = _warmed_round_trips(api, make_account, dialect, monkeypatch)
    assert api.post("/transactions", json=_posting(bank, food, 7)).status_code == 201
    assert commands == [], commands
    assert pipelines == []
    with app.app_context():
        assert db.session.execute(select(func.count()).select_from(Transaction)).scalar_one() == 2


@pytest.mark.parametrize("keyed", [False, True])
def test_postgresql_other_writes_send_begin_with_their_first_statement(
    app, api, make_account, dialect, monkeypatch, keyed
):
    """PostgreSQL: a unit that is not a sole write (a new account; a posting with an
    Idempotency-Key, whose claim, posting and kept answer commit together) sends its
    BEGIN in one round trip with its first statement (app/store/postgresql.py), not as
    psycopg's own BEGIN that waits for its answer, and ends with one COMMIT."""
    bank, food, commands, pipelines = _warmed_round_trips(api, make_account, dialect, monkeypatch)
    if keyed:
        headers = {"Idempotency-Key": "write-path-keyed-1"}
        response = api.post("/transactions", json=_posting(bank, food, 7), headers=headers)
    else:
        response = api.post("/accounts", json={"name": "Cash", "kind": "asset"})
    assert response.status_code == 201, response.get_json()
    assert not [c for c in commands if c.startswith(b"BEGIN")], commands
    assert commands == [b"COMMIT"], commands
    assert len(pipelines) == 1  # BEGIN and the unit's first statement


def test_a_read_runs_no_balance_check(api, make_account, statements, dialect):
    """SQLite re-checks balances before COMMIT only when the transaction changed rows."""
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    assert api.post("/transactions", json=_posting(bank, food)).status_code == 201
    assert api.get("/accounts").status_code == 200  # warm-up (last-use bookkeeping)
    statements.clear()
    for path in ("/accounts", "/transactions", "/reports/balances"):
        assert api.get(path).status_code == 200
    assert not [s for s in statements if "ledger_balance_pending" in s], statements
    # ... while a write still runs it
    statements.clear()
    assert api.post("/transactions", json=_posting(bank, food)).status_code == 201
    if dialect == "sqlite":
        assert [s for s in statements if "ledger_balance_pending" in s], statements


# The unit runner's tests below post with an Idempotency-Key: the key's claim, the
# posting and the kept answer are one unit in one database transaction on both stores
# (a plain POST /transactions on PostgreSQL is a sole write committed on its own:
# test_a_sole_write_committed_on_its_own_is_never_rerun).
KEYED = {"Idempotency-Key": "write-path-retry-1"}


def _fail_once(monkeypatch, make_error):
    """record_transaction does its real work, then the database 'asks' for a retry once."""
    real = transactions.record_transaction
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        tx_id = real(*args, **kwargs)
        if len(calls) == 1:
            raise make_error()
        return tx_id

    monkeypatch.setattr(transactions, "record_transaction", flaky)
    return calls


def _retry_error(dialect):
    if dialect == "postgresql":
        return OperationalError("INSERT ...", {}, psycopg.errors.DeadlockDetected("deadlock"))
    return OperationalError("INSERT ...", {}, sqlite3.OperationalError("database is locked"))


def _count(app):
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(Transaction))


def test_a_unit_the_database_refuses_is_rerun_whole(app, api, make_account, monkeypatch, dialect):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    calls = _fail_once(monkeypatch, lambda: _retry_error(dialect))
    response = api.post("/transactions", json=_posting(bank, food), headers=KEYED)
    assert response.status_code == 201
    assert len(calls) == 2
    assert _count(app) == 1  # the first attempt was rolled back, not kept
    lines = {line["account"]: line["cents"] for line in api.get("/reports/balances").get_json()}
    assert lines == {"Bank": -500, "Food": 500}


def test_other_store_errors_are_not_retried(generic_500, app, api, make_account, monkeypatch):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    disk_error = sqlite3.OperationalError("disk I/O error")
    calls = _fail_once(monkeypatch, lambda: OperationalError("INSERT ...", {}, disk_error))
    response = api.post("/transactions", json=_posting(bank, food), headers=KEYED)
    assert response.status_code == 500
    assert "INSERT" not in response.get_data(as_text=True)
    assert len(calls) == 1
    assert _count(app) == 0


def test_a_sole_write_committed_on_its_own_is_never_rerun(
    generic_500, app, api, make_account, monkeypatch, dialect
):
    """PostgreSQL: a plain POST /transactions commits its one statement on its own. If
    anything then failed and asked for a retry, re-running the unit would post it
    twice: the runner does not (the error is answered; the posting is stored once).
    SQLite has no such write: its unit is rolled back and re-run whole."""
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    calls = _fail_once(monkeypatch, lambda: _retry_error(dialect))
    response = api.post("/transactions", json=_posting(bank, food))
    if dialect == "postgresql":
        assert response.status_code == 500
        assert len(calls) == 1
    else:
        assert response.status_code == 201
        assert len(calls) == 2
    assert _count(app) == 1


def test_a_sole_write_the_database_refuses_is_retried(app, api, make_account, monkeypatch, dialect):
    """PostgreSQL: the server refusing the sole write's own statement (a deadlock)
    commits nothing: the unit is re-run and the posting stored once."""
    if dialect != "postgresql":
        pytest.skip("PostgreSQL only: the sole write on its own")
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    real = transactions._tuples
    refused = []

    def refuse_once(connection, statement, params=None):
        if statement is transactions._INSERT_CHECKED and not refused:
            refused.append(1)
            # sent in the posting's place, on its own, and refused by the server
            connection.exec_driver_sql(
                "DO $$ BEGIN RAISE EXCEPTION 'deadlock' USING ERRCODE = '40P01'; END $$"
            )
        return real(connection, statement, params)

    monkeypatch.setattr(transactions, "_tuples", refuse_once)
    response = api.post("/transactions", json=_posting(bank, food))
    assert response.status_code == 201
    assert refused == [1]
    assert _count(app) == 1


def test_retries_give_up_after_the_limit(generic_500, app, api, make_account, monkeypatch, dialect):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    calls = []

    def always(*args, **kwargs):
        calls.append(1)
        raise _retry_error(dialect)

    monkeypatch.setattr(transactions, "record_transaction", always)
    assert api.post("/transactions", json=_posting(bank, food)).status_code == 500
    assert len(calls) == store.RETRY_ATTEMPTS
    assert _count(app) == 0


def test_concurrent_postings_in_opposite_orders_all_land(app, api, make_account):
    """Four clients post to the same account-days with entries in opposite orders
    (the classic deadlock shape for row locks); every posting is stored once."""
    names = ["A", "B", "C", "D"]
    ids = [make_account(n, "asset") for n in names]
    per_client = 15
    failures = []

    def client_loop(k):
        client = app.test_client()
        order = ids if k % 2 == 0 else list(reversed(ids))
        amounts = [300, -100, -100, -100]
        for i in range(per_client):
            body = {
                "occurred_on": f"2026-06-{1 + i % 3:02d}",
                "description": f"client {k} #{i}",
                "entries": [
                    {"account_id": a, "amount_cents": c}
                    for a, c in zip(order, amounts, strict=True)
                ],
            }
            r = client.post(
                "/transactions", json=body, headers={"Authorization": f"Bearer {api.token}"}
            )
            if r.status_code != 201:
                failures.append((r.status_code, r.get_data(as_text=True)))

    threads = [threading.Thread(target=client_loop, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert _count(app) == 4 * per_client
    with app.app_context():
        assert derived.differences() == []
    lines = {line["account"]: line["cents"] for line in api.get("/reports/balances").get_json()}
    # Clients 0 and 2 put +300 on A; clients 1 and 3 put +300 on D.
    assert lines == {
        "A": 2 * per_client * 200,
        "B": -4 * per_client * 100,
        "C": -4 * per_client * 100,
        "D": 2 * per_client * 200,
    }


def test_listing_a_window_returns_its_transactions_with_their_entries(api, make_account, post_tx):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    rent = make_account("Rent", "expense")
    ids = {}
    for day, name, legs in [
        ("2026-04-30", "before", [(food, 1), (bank, -1)]),
        ("2026-05-01", "first", [(rent, 700), (food, 300), (bank, -1000)]),
        ("2026-05-31", "last", [(bank, -5), (food, 5)]),
        ("2026-05-01", "first again", [(food, 2), (bank, -2)]),
        ("2026-06-01", "after", [(food, 3), (bank, -3)]),
    ]:
        ids[name] = post_tx(day, name, *legs).get_json()["id"]
    listed = api.get("/transactions", query_string={"from": "2026-05-01", "to": "2026-05-31"})
    assert listed.status_code == 200
    body = listed.get_json()
    assert [t["description"] for t in body] == ["last", "first again", "first"]
    assert body[2] == {
        "id": ids["first"],
        "occurred_on": "2026-05-01",
        "description": "first",
        "created_by_email": "alice@example.com",
        "entries": [
            {"account_id": rent, "account_name": "Rent", "amount_cents": 700},
            {"account_id": food, "account_name": "Food", "amount_cents": 300},
            {"account_id": bank, "account_name": "Bank", "amount_cents": -1000},
        ],
    }
    assert [e["amount_cents"] for e in body[0]["entries"]] == [-5, 5]  # entry id order
    assert len(api.get("/transactions").get_json()) == 5
    assert api.get("/transactions", query_string={"from": "2027-01-01"}).get_json() == []


def test_listing_more_transactions_than_one_id_chunk(app, api, service_account):
    bank = service_account("Bank", "asset")
    food = service_account("Food", "expense")
    with app.app_context():
        for i in range(store.dialect.IN_LIST_MAX + 50):
            transactions.record_transaction(
                "2026-07-01",
                f"t{i}",
                [
                    {"account_id": food, "amount_cents": i + 1},
                    {"account_id": bank, "amount_cents": -(i + 1)},
                ],
                None,
            )
        store.commit()
    body = api.get("/transactions").get_json()
    assert len(body) == store.dialect.IN_LIST_MAX + 50
    assert all(t["entries"][0]["amount_cents"] == int(t["description"][1:]) + 1 for t in body)


def test_listing_scattered_ids_takes_the_one_by_one_path(app, api, service_account):
    """Transactions of one month whose ids are far apart (backdated postings between
    later ones): more runs than MAX_RUNS, so the ids are looked up one by one."""
    bank = service_account("Bank", "asset")
    food = service_account("Food", "expense")
    n = listing.MAX_RUNS + 5
    with app.app_context():
        for i in range(n):
            for day in ("2026-08-15", *["2026-09-01"] * (listing.RUN_GAP + 1)):
                transactions.record_transaction(
                    day,
                    f"{day} {i}",
                    [
                        {"account_id": food, "amount_cents": i + 1},
                        {"account_id": bank, "amount_cents": -(i + 1)},
                    ],
                    None,
                )
        store.commit()
    body = api.get("/transactions", query_string={"from": "2026-08-01", "to": "2026-08-31"})
    listed = body.get_json()
    assert len(listed) == n
    assert all(t["occurred_on"] == "2026-08-15" for t in listed)
    assert sorted(t["entries"][0]["amount_cents"] for t in listed) == list(range(1, n + 1))
    assert all(len(t["entries"]) == 2 for t in listed)
    ranged = api.get("/transactions", query_string={"from": "2026-09-01"}).get_json()
    assert len(ranged) == n * (listing.RUN_GAP + 1)
    assert all(len(t["entries"]) == 2 for t in ranged)


def test_the_record_transaction_tool_is_rerun_whole_too(
    app, rpc, make_account, monkeypatch, dialect
):
    """The MCP tool runs through the same retrying unit of work as POST /transactions."""
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    calls = _fail_once(monkeypatch, lambda: _retry_error(dialect))
    result = rpc.result("record_transaction", _posting(bank, food))
    assert result["recorded"] is True
    assert len(calls) == 2
    assert _count(app) == 1


def test_sqlite_writer_lock_is_free_after_every_kind_of_unit(
    app, api, make_account, dialect, monkeypatch
):
    """Writers of one process queue on a lock (not SQLite's sleeping busy handler);
    it is handed back at commit and at rollback, whatever the unit's outcome."""
    if dialect != "sqlite":
        with app.app_context():
            assert store.writer_lock(db.engine) is None
        return
    with app.app_context():
        lock = store.writer_lock(db.engine)
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    assert not lock.locked()
    assert api.post("/transactions", json=_posting(bank, food)).status_code == 201
    assert not lock.locked()
    refused = _posting(bank, food)
    refused["entries"][0]["account_id"] = 9999
    assert api.post("/transactions", json=refused).status_code == 400
    assert not lock.locked()
    calls = _fail_once(monkeypatch, lambda: _retry_error(dialect))
    assert api.post("/transactions", json=_posting(bank, food)).status_code == 201
    assert len(calls) == 2 and not lock.locked()
    assert api.get("/transactions").status_code == 200  # readers never take it
    assert not lock.locked()


def test_sqlite_writer_lock_is_held_until_the_commit_is_done(app, api, make_account, dialect):
    """The next writer is let in after SQLite's COMMIT, not before it (SQLAlchemy's
    `commit` event fires before the COMMIT: a writer let in there found SQLite still
    committing and slept in its busy handler)."""
    with app.app_context():
        engine = db.engine
        lock = store.writer_lock(engine)
    if dialect != "sqlite":
        assert lock is None  # PostgreSQL orders writers itself
        return
    held_at_commit: list[bool] = []

    def trace(dbapi_conn, _record):
        dbapi_conn.set_trace_callback(
            lambda sql: held_at_commit.append(lock.locked()) if sql == "COMMIT" else None
        )

    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    engine.dispose()
    event.listen(engine, "connect", trace)
    try:
        assert api.post("/transactions", json=_posting(bank, food)).status_code == 201
    finally:
        event.remove(engine, "connect", trace)
        engine.dispose()
    assert held_at_commit and all(held_at_commit), held_at_commit
    assert not lock.locked()


def test_sqlite_writer_file_lock_queues_processes(tmp_path):
    """Processes sharing one SQLite file queue on a flock of `<file>-writer.lock`:
    the second waits while the first holds it and gets it as soon as it is released.
    (Two WriterLock objects open the file twice; flock treats two open files like
    two processes.)"""
    first = store.WriterLock(str(tmp_path / "books.db"))
    second = store.WriterLock(str(tmp_path / "books.db"))
    if first.path is None:
        pytest.skip("no flock on this platform: writers queue within one process only")
    assert first.acquire(1) and first.locked()
    got = threading.Event()

    def wait_for_it():
        second.acquire(10)
        got.set()

    waiter = threading.Thread(target=wait_for_it)
    waiter.start()
    assert not got.wait(0.3), "the second writer got in while the first held the lock"
    first.release()
    assert got.wait(2), "the second writer was not let in after the release"
    waiter.join()
    assert second.locked() and not first.locked()
    second.release()
    assert not second.locked()
    assert (tmp_path / "books.db-writer.lock").exists()


def test_sqlite_writer_file_lock_wait_is_bounded(tmp_path):
    """A writer that cannot have the file lock in time goes on without it (SQLite's
    own lock still orders it); the abandoned wait never keeps the lock afterwards."""
    first = store.WriterLock(str(tmp_path / "books.db"))
    second = store.WriterLock(str(tmp_path / "books.db"))
    third = store.WriterLock(str(tmp_path / "books.db"))
    if first.path is None:
        pytest.skip("no flock on this platform: writers queue within one process only")
    assert first.acquire(1)
    started = time.monotonic()
    assert second.acquire(0.3)  # gave up on the file lock after 0.3 s
    assert 0.25 <= time.monotonic() - started < 5
    assert second._file_held is False
    second.release()
    first.release()
    # the abandoned wait got the lock on first's release and let it go at once
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if third.acquire(0.05) and third._file_held:
            break
        third.release()
    assert third._file_held, "the file lock stayed taken after everyone released it"
    third.release()


def test_post_of_an_account_takes_a_fixed_number_of_statements(api, statements, dialect):
    """POST /accounts is one INSERT ... ON CONFLICT DO NOTHING RETURNING id and its
    audit event: no look-up of the name before it, no savepoint around it
    (docs/performance.md, "The write path, issue 30")."""
    assert api.post("/accounts", json={"name": "Warm-up", "kind": "asset"}).status_code == 201
    statements.clear()
    assert api.post("/accounts", json={"name": "Bank", "kind": "asset"}).status_code == 201
    # PostgreSQL, 3: the token lookup, the INSERT and the pending audit event.
    # SQLite, 5: BEGIN IMMEDIATE, the token lookup, the INSERT, the event's INSERT into
    # the chain, and the pre-COMMIT balance re-check (it finds nothing pending).
    expected = 3 if dialect == "postgresql" else 5
    assert len(statements) == expected, "\n".join(statements)
    assert not [s for s in statements if "SAVEPOINT" in s], statements
    # A taken name (any spelling of it) is still refused, naming the account, and
    # nothing is written.
    statements.clear()
    taken = api.post("/accounts", json={"name": " bank ", "kind": "asset"})
    assert taken.status_code == 400
    assert taken.get_json() == {"error": "an account named 'Bank' already exists"}
    assert not [s for s in statements if s.startswith("INSERT INTO audit")], statements


def test_mcp_record_transaction_takes_a_fixed_number_of_statements(
    rpc, make_account, statements, dialect
):
    """The MCP tool posts through the same one statement on PostgreSQL, in the lookup's
    transaction (no ROLLBACK and BEGIN between them)."""
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    arguments = _posting(bank, food)
    assert "result" in rpc.call("record_transaction", arguments)  # warm-up
    statements.clear()
    assert "result" in rpc.call("record_transaction", arguments)
    # PostgreSQL, 4: the token lookup, the posting's one statement (which also makes
    # sure no schedule may meet it), and the tool's answer read back (the header, its
    # entries). SQLite, 10: the lookup's read unit (BEGIN, the token), then the tool's
    # writer unit: as for HTTP (with its read of the schedules it may meet,
    # schedule_meeting.candidates), plus the answer's two reads.
    expected = 4 if dialect == "postgresql" else 10
    assert len(statements) == expected, "\n".join(statements)
