"""Backup and restore: every table exactly, across dialects, while writers post; refusals."""

import json
import threading
from contextlib import ExitStack
from datetime import timedelta

import pytest
from sqlalchemy import select, text

from app import create_app, store
from app.extensions import db
from app.models import OAuthClient, Passkey, WebAuthnChallenge
from app.services import clock, crypto
from app.services.identity import credentials, sessions, users
from app.services.interchange import backup
from app.services.ledger import listing, transactions
from tests.support import API_ORIGIN, PASSWORD, SESSION_COOKIE, WEB_ORIGIN, throwaway_database
from tests.testkit import migrate


@pytest.fixture
def fresh_url(tmp_path):
    """make(dialect) -> the URL of a new database with no tables at all."""
    with ExitStack() as stack:
        yield lambda dialect: stack.enter_context(
            throwaway_database(dialect, tmp_path, "ledger_restore_")
        )


def make_app(url, clock):
    return create_app(
        {
            "TESTING": True,
            "DATABASE_URL": url,
            "API_ORIGIN": API_ORIGIN,
            "WEB_ORIGIN": WEB_ORIGIN,
            "CLOCK": clock,
            "PASSWORD_HASH_FAST": True,
        }
    )


def all_rows(app) -> dict[str, list[tuple]]:
    with app.app_context():
        rows = {
            t.name: [
                tuple(r) for r in db.session.execute(select(t).order_by(*t.primary_key.columns))
            ]
            for t in db.metadata.sorted_tables
        }
        db.session.remove()
        return rows


def populate(app) -> dict:
    """A user with everything: token, sessions, passkey and challenge bytes, ledger rows."""
    with app.app_context():
        store.write_intent.set(True)
        alice = users.add_user("alice@example.com", PASSWORD)
        users.add_user("bob@example.com", PASSWORD)
        token = credentials.mint_token(
            "alice@example.com", label="phone", days=30, audience=API_ORIGIN
        )
        cookie = sessions.create(alice.id, mfa_complete=True)
        now = clock.now()
        db.session.add(
            Passkey(
                user_id=alice.id,
                credential_id="AAEC_-xyz",
                public_key=bytes(range(256)) + b"\x00\xff",
                sign_count=7,
                name="laptop",
                transports='["internal"]',
                created_at=now,
            )
        )
        db.session.add(
            WebAuthnChallenge(
                session_id=crypto.digest(cookie),
                purpose="authenticate",
                challenge=b"\x00\x01\xfe\xff" * 8,
                expires_at=now + timedelta(minutes=5),
            )
        )
        db.session.add(
            OAuthClient(
                id="dyn_abc",
                name="Some app",
                dynamic=True,
                redirect_uris='["https://x.example/cb"]',
                created_at=now,
            )
        )
        db.session.execute(text("UPDATE settings SET book_style = 'club'"))
        from app.services.ledger import accounts

        ids = [
            accounts.create_account(n, k)["id"]
            for n, k in (("Checking", "asset"), ("Salary", "income"), ("Rent", "expense"))
        ]
        transactions.record_transaction(
            "2026-01-02",
            "Pay",
            [
                {"account_id": ids[0], "amount_cents": 250000},
                {"account_id": ids[1], "amount_cents": -250000},
            ],
            created_by=alice.id,
        )
        transactions.record_transaction(
            "2026-01-03",
            "Rent",
            [
                {"account_id": ids[2], "amount_cents": 120000},
                {"account_id": ids[0], "amount_cents": -120000},
            ],
            created_by=None,
        )
        from app.services.ledger import budgets

        plan = budgets.create_budget({"name": "Plan 2027", "starts_on": "2027-01-01"})
        budgets.update_budget(
            plan["id"], {"lines": [{"account_id": ids[2], "annual_cents": -1205}]}
        )
        budgets.approve_budget(plan["id"], "alice@example.com")
        budgets.create_budget({"name": "Draft", "starts_on": "2027-01-01", "based_on": "actuals"})
        store.commit()
        return {"token": token, "cookie": cookie}


def reports_of(client, headers) -> list:
    return [
        client.get(path, headers=headers).get_json()
        for path in (
            "/reports/balances",
            "/reports/income-statement?from=2026-01-01&to=2026-12-31",
            "/reports/balance-sheet?as_of=2026-12-31",
            "/transactions",
            "/budgets",
            "/budgets/1",
            "/reports/income-statement?from=2027-01-01&to=2027-12-31&budget=approved",
        )
    ]


# slow: a restore into a new PostgreSQL database (created, migrated, dropped) takes seconds
@pytest.mark.parametrize("target", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_every_table_round_trips_exactly(app, runner, clock, fresh_url, tmp_path, target):
    secrets_ = populate(app)
    path = tmp_path / "ledger.backup.gz"
    result = runner.invoke(args=["backup", str(path)])
    assert result.exit_code == 0, result.output

    restored = make_app(fresh_url(target), clock)
    result = restored.test_cli_runner().invoke(args=["restore", str(path)])
    assert result.exit_code == 0, result.output
    source_rows, target_rows = all_rows(app), all_rows(restored)
    assert source_rows == target_rows  # passkey, handle and challenge bytes included
    assert source_rows["passkeys"][0][3] == bytes(range(256)) + b"\x00\xff"
    assert len(source_rows["budgets"]) == 2 and len(source_rows["budget_lines"]) == 3

    bearer = {"Authorization": f"Bearer {secrets_['token']}"}
    client = restored.test_client()
    assert reports_of(client, bearer) == reports_of(app.test_client(), bearer)
    client.set_cookie(SESSION_COOKIE, secrets_["cookie"], domain="localhost")
    assert client.get("/settings").get_json() == {"book_style": "club"}
    # Sequences continue after the restored ids (PostgreSQL setval).
    made = client.post("/accounts", json={"name": "New", "kind": "asset"}, headers=bearer)
    assert made.status_code == 201 and made.get_json()["id"] == 4
    with restored.app_context():
        db.engine.dispose()


# A new PostgreSQL database at one end (created, migrated, dropped: dropping waits for a
# checkpoint) takes seconds (README, the quick loop).
@pytest.mark.slow
@pytest.mark.parametrize(
    "source_dialect, target_dialect",
    [
        ("sqlite", "postgresql"),  # the move the docs describe
        ("postgresql", "sqlite"),
    ],
)
def test_backup_while_a_writer_posts_then_restore_elsewhere(
    clock, fresh_url, tmp_path, source_dialect, target_dialect
):
    """The snapshot neither blocks the writer nor lets its later commits in."""
    source_url = fresh_url(source_dialect)
    target_url = fresh_url(target_dialect)
    migrate(source_url)
    source = make_app(source_url, clock)
    secrets_ = populate(source)
    checking, salary = 1, 2  # ids in the fresh source, as populate() made them
    acked: list[int] = []
    more = threading.Condition()
    stop = threading.Event()
    failures: list[BaseException] = []

    def writer():
        try:
            with source.app_context():
                store.write_intent.set(True)
                n = 0
                while not stop.is_set():
                    n += 1
                    tx = transactions.record_transaction(
                        "2026-03-01",
                        f"tick {n}",
                        [
                            {"account_id": checking, "amount_cents": n},
                            {"account_id": salary, "amount_cents": -n},
                        ],
                        created_by=None,
                    )
                    store.commit()
                    with more:
                        acked.append(tx)
                        more.notify_all()
                db.session.remove()
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            failures.append(exc)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    with more:
        assert more.wait_for(lambda: len(acked) >= 20, timeout=60)
    path = tmp_path / "live.backup"
    with source.app_context(), path.open("w", encoding="utf-8") as out:
        acked_before = set(acked)
        lines = backup.generate()
        out.write(next(lines))  # the snapshot is taken here
        seen = len(acked)
        with more:  # writers keep committing while the snapshot is open
            assert more.wait_for(lambda: len(acked) >= seen + 20, timeout=60), failures
        for line in lines:
            out.write(line)
    stop.set()
    thread.join(timeout=60)
    assert not failures and not thread.is_alive()
    acked_all = set(acked)

    target = make_app(target_url, clock)
    result = target.test_cli_runner().invoke(args=["restore", str(path)])
    assert result.exit_code == 0, result.output
    with target.app_context():
        restored = {t["id"]: t for t in listing.list_transactions(None, None)}
    ticks = {i for i, t in restored.items() if t["description"].startswith("tick")}
    assert acked_before <= ticks <= acked_all
    assert len(ticks) <= len(acked_all) - 20  # later commits are not in the snapshot

    # Bring the source back to the snapshot's contents; then everything must agree.
    with source.app_context():
        store.write_intent.set(True)
        for tx_id in acked_all - ticks:
            transactions.delete_transaction(tx_id)
        store.commit()
        db.session.remove()
    bearer = {"Authorization": f"Bearer {secrets_['token']}"}
    assert reports_of(target.test_client(), bearer) == reports_of(source.test_client(), bearer)
    assert target.test_client().get("/accounts", headers=bearer).status_code == 200
    assert all_rows(target)["passkeys"] == all_rows(source)["passkeys"]
    for a in (source, target):
        with a.app_context():
            db.engine.dispose()


def test_restore_refuses_a_target_with_data(app, runner, make_user, clock, fresh_url, tmp_path):
    populate(app)
    path = tmp_path / "b.jsonl"
    assert runner.invoke(args=["backup", str(path)]).exit_code == 0
    result = runner.invoke(args=["restore", str(path)])  # into the same, non-empty database
    assert result.exit_code == 1
    assert "the target database is not empty (table accounts has 3 rows)" in result.output

    fresh = make_app(fresh_url("sqlite"), clock)
    cli = fresh.test_cli_runner()
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-1]), encoding="utf-8")
    result = cli.invoke(args=["restore", str(cut)])
    assert result.exit_code == 1 and "incomplete" in result.output
    assert all(
        not rows
        for name, rows in all_rows(fresh).items()
        if name not in ("settings", "oauth_clients")
    )
    # The failed attempt left a migrated but empty database: a good file now restores.
    assert cli.invoke(args=["restore", str(path)]).exit_code == 0
    assert all_rows(fresh)["accounts"] == all_rows(app)["accounts"]


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda h: {"hello": 1}, "not a ledger-service backup file"),
        (lambda h: {**h, "version": 99}, "format version 99 is not supported"),
        (lambda h: {**h, "schema_revision": "9999_future"}, "does not know"),
    ],
)
def test_restore_refuses_foreign_files(app, runner, clock, fresh_url, tmp_path, mutate, message):
    path = tmp_path / "b.jsonl"
    assert runner.invoke(args=["backup", str(path)]).exit_code == 0
    header, *rest = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(json.dumps(mutate(json.loads(header))) + "\n" + "".join(rest), encoding="utf-8")
    fresh = make_app(fresh_url("sqlite"), clock)
    result = fresh.test_cli_runner().invoke(args=["restore", str(path)])
    assert result.exit_code == 1 and message in result.output


def test_derived_tables_are_skipped_both_ways(app, runner, clock, fresh_url, tmp_path, monkeypatch):
    populate(app)
    path = tmp_path / "b.jsonl"
    assert runner.invoke(args=["backup", str(path)]).exit_code == 0
    monkeypatch.setitem(db.metadata.tables["sessions"].info, "derived", True)
    monkeypatch.setitem(db.metadata.tables["webauthn_challenges"].info, "derived", True)
    skipped = tmp_path / "skipped.jsonl"
    assert runner.invoke(args=["backup", str(skipped)]).exit_code == 0
    tables = [
        json.loads(line).get("table")
        for line in skipped.read_text().splitlines()[1:]
        if line.startswith("{")
    ]
    assert "sessions" not in tables and "accounts" in tables
    # A backup that still holds them restores without them (the store would rebuild them).
    fresh = make_app(fresh_url("sqlite"), clock)
    assert fresh.test_cli_runner().invoke(args=["restore", str(path)]).exit_code == 0
    rows = all_rows(fresh)
    assert rows["sessions"] == [] and rows["accounts"] == all_rows(app)["accounts"]


def test_commands_work_on_a_fresh_empty_database(clock, fresh_url, tmp_path):
    """backup, export and import bring a database with no schema up first, like every command."""
    first = make_app(fresh_url("sqlite"), clock)
    cli = first.test_cli_runner()
    exported = cli.invoke(args=["export", "--format", "csv"])
    assert exported.exit_code == 0, exported.output
    assert exported.output.startswith("transaction_id,date,description")
    path = tmp_path / "empty.jsonl"
    assert cli.invoke(args=["backup", str(path)]).exit_code == 0
    second = make_app(fresh_url("postgresql"), clock)
    result = second.test_cli_runner().invoke(args=["restore", str(path)])
    assert result.exit_code == 0, result.output
    assert all_rows(second)["oauth_clients"] == all_rows(first)["oauth_clients"]
    for a in (first, second):
        with a.app_context():
            db.engine.dispose()


def test_unreadable_backups_are_refused_clearly(app, runner, clock, fresh_url, tmp_path):
    import gzip

    from app import MIGRATIONS_DIR
    from app.services.errors import BadRequestError
    from app.services.interchange import restore

    populate(app)
    good = tmp_path / "b.jsonl.gz"
    assert runner.invoke(args=["backup", str(good)]).exit_code == 0
    cut = tmp_path / "cut.gz"
    cut.write_bytes(good.read_bytes()[:-40])  # a compressed stream cut short
    binary = tmp_path / "photo.jpg"
    binary.write_bytes(b"\xff\xd8\xff\xe0" + bytes(range(256)))
    fresh = make_app(fresh_url("sqlite"), clock)
    cli = fresh.test_cli_runner()
    for path, message in ((cut, "cannot read"), (binary, "cannot read")):
        result = cli.invoke(args=["restore", str(path)])
        assert result.exit_code == 1 and message in result.output, result.output
    assert gzip.decompress(good.read_bytes()).startswith(b'{"format":"ledger-service-backup"')
    with pytest.raises(BadRequestError, match="newer than the backup's 0001"):
        restore.check_target_schema({"0099_from_the_future"}, ["0001"], MIGRATIONS_DIR)
    restore.check_target_schema({"0001"}, ["0001"], MIGRATIONS_DIR)  # same schema: fine
    restore.check_target_schema(set(), ["0001"], MIGRATIONS_DIR)  # no schema yet: fine


# slow: a restore into a new PostgreSQL database (created, migrated, dropped) takes seconds
@pytest.mark.parametrize("target", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_a_passkey_enrolled_before_the_backup_signs_in_after_the_restore(
    app, runner, clock, fresh_url, tmp_path, target, make_user, authenticator
):
    """The real ceremonies on both sides: enrol on the source, sign in on the restored copy."""
    from tests.testkit import SignIn

    make_user()
    source = SignIn(app.test_client(), authenticator)
    assert source.password().get_json()["has_passkeys"] is False
    enrolled = source.register(name="laptop")
    assert enrolled.status_code == 200, enrolled.get_json()
    assert source.client.get("/accounts").status_code == 200

    path = tmp_path / "ledger.backup"
    assert runner.invoke(args=["backup", str(path)]).exit_code == 0
    restored = make_app(fresh_url(target), clock)
    try:
        result = restored.test_cli_runner().invoke(args=["restore", str(path)])
        assert result.exit_code == 0, result.output

        again = SignIn(restored.test_client(), authenticator)
        login = again.password()
        assert login.status_code == 200
        assert login.get_json() == {"has_passkeys": True, "mfa_complete": False}
        assert again.client.get("/accounts").status_code == 401  # password alone is not enough
        finish = again.assert_passkey()
        assert finish.status_code == 200, finish.get_json()
        assert finish.get_json() == {"mfa_complete": True}
        assert again.client.get("/accounts").status_code == 200
        names = [p["name"] for p in again.client.get("/auth/passkeys").get_json()]
        assert names == ["laptop"]
    finally:
        with restored.app_context():
            db.session.remove()
            db.engine.dispose()
