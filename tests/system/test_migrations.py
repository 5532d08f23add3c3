"""Migrations: the models and the migrations agree, and the chain goes down and up."""

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from flask_migrate import downgrade, upgrade
from sqlalchemy.exc import IntegrityError

from app.extensions import db

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


def _script_head() -> str:
    """The newest revision in migrations/versions."""
    from pathlib import Path

    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option(
        "script_location", str(Path(__file__).resolve().parents[2] / "migrations")
    )
    return ScriptDirectory.from_config(config).get_current_head() or ""


def test_models_match_the_migrated_schema(app):
    with app.app_context(), db.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(context, db.metadata)
    # SQLite-only bookkeeping table of the balance check; the description search
    # (migration 0010): SQLite's FTS5 table and its shadow tables, and its mark
    # search_indexed (migration 0017), PostgreSQL's trigram index and its index of
    # description words (migration 0025; expression indexes the models do not declare).
    # Nothing else may differ.
    ignorable = {"ledger_balance_pending", "transaction_search", "search_indexed"}
    ignorable |= {f"transaction_search_{shadow}" for shadow in ("data", "idx", "config")}
    # SQLite's FTS5 table of the descriptions' words (migration 0026) and its shadows.
    ignorable |= {"transaction_words"}
    ignorable |= {f"transaction_words_{shadow}" for shadow in ("data", "idx", "config")}
    diff = [
        d
        for d in diff
        if not (d[0] == "remove_table" and d[1].name in ignorable)
        and not (
            d[0] == "remove_index"
            and d[1].name
            in ("ix_transactions_description_trgm", "ix_transactions_description_words")
        )
    ]
    assert diff == []


def test_downgrade_to_base_and_upgrade_again(scratch_database_url):
    from app import create_app, store

    app = create_app({"DATABASE_URL": scratch_database_url, "TESTING": True})
    with app.app_context():
        store.write_intent.set(True)
        upgrade()
        downgrade(revision="base")
        assert db.inspect(db.engine).get_table_names() == ["alembic_version"]
        upgrade()
        assert "entries" in db.inspect(db.engine).get_table_names()
        db.engine.dispose()


def test_0005_adds_and_removes_the_device_rate_table(scratch_database_url):
    from app import create_app, store

    app = create_app({"DATABASE_URL": scratch_database_url, "TESTING": True})
    with app.app_context():
        store.write_intent.set(True)
        upgrade(revision="0004_entries_listing_index")
        assert "device_starts" not in db.inspect(db.engine).get_table_names()
        upgrade(revision="0005_device_starts")
        inspector = db.inspect(db.engine)
        assert "device_starts" in inspector.get_table_names()
        assert [i["name"] for i in inspector.get_indexes("device_starts")] == [
            "ix_device_starts_client_address"
        ]
        downgrade(revision="0004_entries_listing_index")
        assert "device_starts" not in db.inspect(db.engine).get_table_names()
        db.engine.dispose()


def test_0006_widens_client_ids_and_keeps_every_row(scratch_database_url):
    """Existing clients, codes, tokens and device records survive the widening on both
    dialects (SQLite rebuilds the tables), their foreign keys still hold, a 2,000-character
    client id fits, and the downgrade drops only the clients that no longer fit."""
    from sqlalchemy import text

    from app import create_app, store

    app = create_app({"DATABASE_URL": scratch_database_url, "TESTING": True})
    long_id = "https://app.example/" + "c" * 1980
    with app.app_context():
        store.write_intent.set(True)
        upgrade(revision="0005_device_starts")
        with db.engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO users (id, email, password_hash, webauthn_handle, created_at)"
                    " VALUES (1, 'a@example.com', 'x', :handle, '2026-01-01 00:00:00')"
                ),
                {"handle": b"h" * 64},
            )
            conn.execute(
                text(
                    "INSERT INTO oauth_clients (id, name, dynamic, redirect_uris, created_at)"
                    " VALUES ('dyn_old', 'Old', true, '[]', '2026-01-01 00:00:00')"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO tokens (id, user_id, client_id, kind, label, audience,"
                    " created_at, expires_at) VALUES ('t1', 1, 'dyn_old', 'access', '',"
                    " 'http://x', '2026-01-01 00:00:00', '2027-01-01 00:00:00')"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO device_records (id, user_code, client_id, resource, status,"
                    " interval, created_at, expires_at) VALUES ('d1', 'ABCD-EFGH', 'svc-cli',"
                    " 'http://x', 'pending', 5, '2026-01-01 00:00:00', '2026-01-01 00:10:00')"
                )
            )
        upgrade(revision="0006_cimd_client_ids")
        inspector = db.inspect(db.engine)
        for table, column in [
            ("oauth_clients", "id"),
            ("tokens", "client_id"),
            ("authorization_codes", "client_id"),
            ("device_records", "client_id"),
            ("device_starts", "client_id"),
        ]:
            (width,) = [
                c["type"].length for c in inspector.get_columns(table) if c["name"] == column
            ]
            assert width == 2000, (table, column)
        assert "ix_device_starts_client_address" in [
            i["name"] for i in inspector.get_indexes("device_starts")
        ]
        with db.engine.begin() as conn:
            assert conn.execute(text("SELECT client_id FROM tokens")).scalars().all() == ["dyn_old"]
            assert conn.execute(text("SELECT client_id FROM device_records")).scalars().all() == [
                "svc-cli"
            ]
            assert (
                conn.execute(
                    text("SELECT application_type FROM oauth_clients WHERE id = 'dyn_old'")
                ).scalar_one()
                == "native"
            )
            conn.execute(
                text(
                    "INSERT INTO oauth_clients (id, name, dynamic, redirect_uris, created_at)"
                    " VALUES (:id, 'Doc', true, '[]', '2026-01-01 00:00:00')"
                ),
                {"id": long_id},
            )
            conn.execute(
                text(
                    "INSERT INTO tokens (id, user_id, client_id, kind, label, audience,"
                    " created_at, expires_at) VALUES ('t2', 1, :id, 'access', '',"
                    " 'http://x', '2026-01-01 00:00:00', '2027-01-01 00:00:00')"
                ),
                {"id": long_id},
            )
        # The foreign keys still hold after the rebuild: an unknown client is refused.
        with db.engine.connect() as conn:
            with pytest.raises(IntegrityError):
                conn.execute(
                    text(
                        "INSERT INTO tokens (id, user_id, client_id, kind, label, audience,"
                        " created_at, expires_at) VALUES ('t3', 1, 'nobody', 'access', '',"
                        " 'http://x', '2026-01-01 00:00:00', '2027-01-01 00:00:00')"
                    )
                )
            conn.rollback()
        downgrade(revision="0005_device_starts")
        with db.engine.begin() as conn:
            assert conn.execute(text("SELECT id FROM tokens")).scalars().all() == ["t1"]
            assert sorted(conn.execute(text("SELECT id FROM oauth_clients")).scalars()) == [
                "dyn_old",
                "svc-cli",
                "svc-desktop",
            ]
        db.engine.dispose()


def test_0010_without_pg_trgm_skips_the_index_and_q_still_answers(tmp_path, monkeypatch):
    """A role that may not create pg_trgm (no CREATE on the database) migrates to the
    head all the same: no extension, no trigram index, and q answers by the walk. After
    an owner adds the extension, downgrading to 0009 and upgrading again adds the index."""
    import secrets

    import psycopg
    from sqlalchemy import text

    from app import create_app, store
    from app.services.ledger import listing
    from app.services.ledger.validate import ListingQuery
    from tests.support import throwaway_database

    role = "ledger_noext_" + secrets.token_hex(4)
    with throwaway_database("postgresql", tmp_path, "ledger_noext_") as url:
        plain = url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(plain, autocommit=True) as admin:
            admin.execute(f"CREATE ROLE {role} LOGIN")
            admin.execute(f"GRANT CREATE, USAGE ON SCHEMA public TO {role}")
        try:
            role_url = url.replace("postgres@", f"{role}@", 1)
            app = create_app({"DATABASE_URL": role_url, "TESTING": True})
            with app.app_context():
                store.write_intent.set(True)
                upgrade()
                has_index = text(
                    "SELECT count(*) FROM pg_indexes"
                    " WHERE indexname = 'ix_transactions_description_trgm'"
                )
                assert db.session.execute(has_index).scalar_one() == 0
                assert (
                    db.session.execute(
                        text("SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'")
                    ).scalar_one()
                    == 0
                )
                version = text("SELECT version_num FROM alembic_version")
                # The head of the chain (whichever migration is newest), not one name.
                assert db.session.execute(version).scalar_one() == _script_head()
                db.session.execute(
                    text(
                        "INSERT INTO accounts (id, name, kind, name_key) VALUES"
                        " (1, 'A', 'asset', 'a'), (2, 'B', 'expense', 'b');"
                        " INSERT INTO transactions (id, occurred_on, description, created_at)"
                        " VALUES (1, '2026-01-01', 'Rare Wörd 4242', now()),"
                        " (2, '2026-01-02', 'common', now());"
                        " INSERT INTO entries (transaction_id, account_id, amount_cents) VALUES"
                        " (1, 2, 5), (1, 1, -5), (2, 2, 6), (2, 1, -6)"
                    )
                )
                store.commit()
                monkeypatch.setattr(listing, "WALK_ROWS", 1)
                found = listing.page(ListingQuery(q="WÖRD 42", limit=5)).data()["items"]
                assert [t["id"] for t in found] == [1]
                db.session.remove()
                with psycopg.connect(plain, autocommit=True) as admin:
                    admin.execute("CREATE EXTENSION pg_trgm")
                downgrade(revision="0009_books_at_scale")
                upgrade()
                assert db.session.execute(has_index).scalar_one() == 1
                found = listing.page(ListingQuery(q="WÖRD 42", limit=5)).data()["items"]
                assert [t["id"] for t in found] == [1]
                db.session.remove()
                db.engine.dispose()
        finally:
            with psycopg.connect(plain, autocommit=True) as admin:
                admin.execute(f"DROP OWNED BY {role}")
        with psycopg.connect(plain.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
            admin.execute(f"DROP ROLE {role}")


def test_0017_batches_the_sqlite_index_and_goes_down_and_up(
    scratch_database_url, dialect, monkeypatch
):
    """SQLite: 0017 marks every transaction 0010 indexed (upto = the newest id), then
    indexes new ones 16 at a time; its downgrade indexes the tail and puts 0010's
    per-row triggers back; upgrading again marks them all. q answers exactly at every
    step, and FTS5's integrity check passes. PostgreSQL: the migration does nothing."""
    from sqlalchemy import text

    from app import create_app, store
    from app.services.ledger import listing
    from app.services.ledger.validate import ListingQuery

    monkeypatch.setattr(listing, "WALK_ROWS", 1)
    app = create_app({"DATABASE_URL": scratch_database_url, "TESTING": True})

    def post(first: int, last: int) -> None:
        with db.engine.begin() as conn:
            for tx_id in range(first, last + 1):
                conn.execute(
                    text(
                        "INSERT INTO transactions (id, occurred_on, description, created_at)"
                        " VALUES (:id, '2026-01-01', :d, '2026-01-01 00:00:00')"
                    ),
                    {"id": tx_id, "d": f"Zqx {tx_id}" if tx_id % 3 == 0 else f"other {tx_id}"},
                )
                conn.execute(
                    text(
                        "INSERT INTO entries (transaction_id, account_id, amount_cents)"
                        " VALUES (:id, 2, 5), (:id, 1, -5)"
                    ),
                    {"id": tx_id},
                )

    def mark():
        if dialect != "sqlite":
            return None
        tables = db.inspect(db.engine).get_table_names()
        if "search_indexed" not in tables:
            return "none"
        with db.engine.connect() as conn:
            return conn.execute(text("SELECT upto FROM search_indexed")).scalar_one()

    def exact(newest: int) -> None:
        found = listing.page(ListingQuery(q="zqx", limit=100)).data()["items"]
        assert sorted(t["id"] for t in found) == list(range(3, newest + 1, 3))
        db.session.remove()
        if dialect == "sqlite":
            with db.engine.begin() as conn:
                conn.execute(text("SAVEPOINT tail"))
                if "search_indexed" in db.inspect(conn).get_table_names():
                    conn.execute(
                        text(
                            "INSERT INTO transaction_search (rowid, description) SELECT id,"
                            " description FROM transactions"
                            " WHERE id > (SELECT upto FROM search_indexed)"
                        )
                    )
                conn.execute(
                    text(
                        "INSERT INTO transaction_search (transaction_search, rank)"
                        " VALUES ('integrity-check', 1)"
                    )
                )
                conn.execute(text("ROLLBACK TO tail"))

    with app.app_context():
        store.write_intent.set(True)
        upgrade(revision="0016_audit_seal_sets")
        with db.engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO accounts (id, name, kind, name_key) VALUES"
                    " (1, 'A', 'asset', 'a'), (2, 'B', 'expense', 'b')"
                )
            )
        post(1, 20)
        upgrade(revision="0017_search_batches")
        assert mark() in (20, None)
        post(21, 35)
        assert mark() in (32, None)  # the batch at 32: 21..32; 33..35 wait
        exact(35)
        downgrade(revision="0016_audit_seal_sets")
        assert mark() in ("none", None)
        if dialect == "sqlite":
            with db.engine.connect() as conn:
                triggers = conn.execute(
                    text("SELECT sql FROM sqlite_master WHERE name LIKE 'trg_transaction_search%'")
                ).scalars()
                assert not [sql for sql in triggers if "search_indexed" in sql]
        exact(35)  # the tail went into the index (the check passes without it)
        post(36, 37)
        exact(37)
        upgrade()
        assert mark() in (37, None)
        post(38, 48)
        assert mark() in (48, None)
        exact(48)
        db.session.remove()
        db.engine.dispose()


def test_0019_cuts_every_document_into_chunks_and_joins_them_again(scratch_database_url):
    """0019 moves each stored document's bytes (documents.content_bytes) into
    document_chunks, 1 MiB a row in order, and drops the column; its downgrade joins
    them back byte for byte. A document of 2.5 MiB, one of exactly 1 MiB, a small one."""
    import os

    from sqlalchemy import text

    from app import create_app, store

    app = create_app({"DATABASE_URL": scratch_database_url, "TESTING": True})
    mib = 1024 * 1024
    contents = {
        1: b"%PDF-" + os.urandom(2 * mib + mib // 2 - 5),
        2: b"\x89PNG" + os.urandom(mib - 4),
        3: b"%PDF-1.4 small",
    }
    with app.app_context():
        store.write_intent.set(True)
        upgrade(revision="0018_posting_triggers")
        with db.engine.begin() as conn:
            for doc_id, data in contents.items():
                conn.execute(
                    text(
                        "INSERT INTO documents (id, filename, content_type, size, sha256,"
                        " uploaded_at, content_bytes) VALUES (:i, 'a.pdf', 'application/pdf',"
                        " :n, 'x', '2026-01-01 00:00:00', :c)"
                    ),
                    {"i": doc_id, "n": len(data), "c": data},
                )
        upgrade(revision="0019_document_chunks")
        columns = [c["name"] for c in db.inspect(db.engine).get_columns("documents")]
        assert "content_bytes" not in columns
        with db.engine.connect() as conn:
            rows = conn.execute(
                text("SELECT document_id, seq, chunk_bytes FROM document_chunks ORDER BY 1, 2")
            ).all()
        assert [(d, s, len(c)) for d, s, c in rows] == [
            (1, 0, mib),
            (1, 1, mib),
            (1, 2, mib // 2),
            (2, 0, mib),
            (3, 0, len(contents[3])),
        ]
        for doc_id, data in contents.items():
            assert b"".join(bytes(c) for d, _, c in rows if d == doc_id) == data
        downgrade(revision="0018_posting_triggers")
        assert "document_chunks" not in db.inspect(db.engine).get_table_names()
        with db.engine.connect() as conn:
            back = dict(conn.execute(text("SELECT id, content_bytes FROM documents")).all())
        assert {i: bytes(c) for i, c in back.items()} == contents
        upgrade()
        db.engine.dispose()


def test_0021_keeps_each_bank_reference_once_and_makes_it_a_key(scratch_database_url, caplog):
    """Books from before 0021 in which one bank line was booked twice (the race 0021
    closes): the transaction of the lowest id keeps the reference, the other entry
    keeps its cleared mark without it (logged, naming its transaction), and the same
    reference with another amount or in another account is left alone. Afterwards the
    database refuses a second holder; the downgrade goes back to 0020's index."""
    import logging

    from sqlalchemy import text

    from app import create_app, store

    app = create_app({"DATABASE_URL": scratch_database_url, "TESTING": True})
    give = text("UPDATE entries SET cleared = true, bank_ref = :r WHERE id = :e")
    with app.app_context():
        store.write_intent.set(True)
        upgrade(revision="0020_statements")
        with db.engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO accounts (id, name, kind, name_key) VALUES"
                    " (1, 'Bank', 'asset', 'bank'), (2, 'Food', 'expense', 'food'),"
                    " (3, 'Card', 'liability', 'card')"
                )
            )
            for tx_id in range(1, 6):
                conn.execute(
                    text(
                        "INSERT INTO transactions (id, occurred_on, description, created_at)"
                        " VALUES (:t, '2026-03-02', 'Shop', '2026-03-02 00:00:00')"
                    ),
                    {"t": tx_id},
                )
            # Entry 2t-1 on the bank (the card for transaction 5), 2t on Food.
            for tx_id, (account, cents) in enumerate(
                [(1, -2500), (1, -2500), (1, -2500), (1, -2600), (3, -2500)], start=1
            ):
                conn.execute(
                    text(
                        "INSERT INTO entries (id, transaction_id, account_id, amount_cents)"
                        " VALUES (:e, :t, :a, :c), (:e2, :t, 2, :neg)"
                    ),
                    {"e": 2 * tx_id - 1, "e2": 2 * tx_id, "t": tx_id, "a": account, "c": cents}
                    | {"neg": -cents},
                )
            for entry_id in (5, 3, 1, 7, 9):  # transactions 3, 2, 1 share R1 and -25.00
                conn.execute(give, {"r": "R1", "e": entry_id})
        with caplog.at_level(logging.WARNING, logger="alembic.runtime.migration"):
            upgrade(revision="0021_bank_ref_once")
        with db.engine.connect() as conn:
            rows = conn.execute(
                text("SELECT id, cleared, bank_ref FROM entries WHERE id % 2 = 1 ORDER BY id")
            ).all()
        assert [(i, bool(c), r) for i, c, r in rows] == [
            (1, True, "R1"),  # transaction 1 keeps it
            (3, True, None),
            (5, True, None),
            (7, True, "R1"),  # another amount
            (9, True, "R1"),  # another account
        ]
        warned = [r.getMessage() for r in caplog.records if "0021" in r.getMessage()]
        assert len(warned) == 2, warned
        assert "of transaction 2 " in warned[0] and "of transaction 3 " in warned[1]
        assert all("which transaction 1 holds" in w for w in warned), warned
        with pytest.raises(IntegrityError), db.engine.begin() as conn:
            conn.execute(give, {"r": "R1", "e": 3})
        downgrade(revision="0020_statements")
        indexes = {i["name"] for i in db.inspect(db.engine).get_indexes("entries")}
        assert "ix_entries_bank_ref" in indexes and "uq_entries_bank_ref" not in indexes
        upgrade()
        db.engine.dispose()
