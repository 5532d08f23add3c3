"""`serve` backs up books before it migrates them (docs/export-import-backup.md, "The
backup before an upgrade"): a backup in the ordinary format, at the schema's current
revision, in the instance folder's backups/, the newest 5 kept; a failed upgrade
leaves the books as they were and names the backup; nothing is written when nothing is
pending or there are no books. Both stores."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from flask_migrate import downgrade
from sqlalchemy import create_engine, inspect, text

from app import create_app, store
from app.extensions import db
from app.services.identity import users
from app.services.interchange import upgrade_backup
from app.services.ledger import accounts, documents, transactions
from harness.server import Service, cli
from tests.support import PASSWORD, throwaway_database
from tests.testkit import migrate

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


MIGRATIONS = Path(__file__).resolve().parents[3] / "migrations"
NEWEST = ScriptDirectory(str(MIGRATIONS)).get_current_head()
PREVIOUS = ScriptDirectory(str(MIGRATIONS)).get_revision(NEWEST).down_revision
RECEIPT = b"%PDF-1.4\n" + os.urandom(1024 * 1024 + 4096)


def _app(url, **extra):
    return create_app({"DATABASE_URL": url, "TESTING": True, "PASSWORD_HASH_FAST": True, **extra})


def books_one_revision_behind(url: str) -> None:
    """A user, two accounts and a transaction, stored at the newest revision, then
    the schema taken back one migration: what an upgrade of the code finds."""
    migrate(url)
    app = _app(url)
    with app.app_context():
        store.write_intent.set(True)
        alice = users.add_user("alice@example.com", PASSWORD)
        bank = accounts.create_account("Bank", "asset")["id"]
        food = accounts.create_account("Food", "expense")["id"]
        transactions.record_transaction(
            "2026-11-20",
            "Weekly shop",
            [
                {"account_id": food, "amount_cents": 4250},
                {"account_id": bank, "amount_cents": -4250},
            ],
            created_by=alice.id,
        )
        tx_id = transactions.record_transaction(
            "2026-11-21",
            "Receipt kept",
            [
                {"account_id": food, "amount_cents": 100},
                {"account_id": bank, "amount_cents": -100},
            ],
            created_by=alice.id,
        )
        # A receipt of more than one chunk: its bytes go through the backup and restore.
        documents.upload(tx_id, io.BytesIO(RECEIPT), "receipt.pdf", alice.id)
        store.commit()
        downgrade(revision=PREVIOUS)
        db.session.remove()
        db.engine.dispose()


def books(url: str) -> dict:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return {
                "revision": conn.execute(text("SELECT version_num FROM alembic_version")).scalar(),
                "accounts": conn.execute(
                    text("SELECT id, name, kind FROM accounts ORDER BY id")
                ).all(),
                "entries": conn.execute(
                    text(
                        "SELECT t.id, CAST(t.occurred_on AS VARCHAR(10)), t.description, "
                        "e.account_id, e.amount_cents "
                        "FROM transactions t JOIN entries e ON e.transaction_id = t.id "
                        "ORDER BY e.id"
                    )
                ).all(),
                "tables": sorted(inspect(conn).get_table_names()),
                "documents": _document_bytes(conn),
            }
    finally:
        engine.dispose()


def _document_bytes(conn) -> dict[int, bytes]:
    """Each document's bytes, stored as chunks (migration 0019) or as one column."""
    if "document_chunks" not in inspect(conn).get_table_names():
        rows = conn.execute(text("SELECT id, content_bytes FROM documents")).all()
        return {int(i): bytes(c) for i, c in rows}
    found: dict[int, bytes] = {}
    for doc_id, content in conn.execute(
        text("SELECT document_id, chunk_bytes FROM document_chunks ORDER BY document_id, seq")
    ):
        found[int(doc_id)] = found.get(int(doc_id), b"") + bytes(content)
    return found


def test_serve_backs_up_the_books_before_it_migrates_them(scratch_database_url, dialect, tmp_path):
    books_one_revision_behind(scratch_database_url)
    before = books(scratch_database_url)
    assert before["revision"] == PREVIOUS
    instance = tmp_path / "instance"
    with Service(scratch_database_url, instance) as service:
        service.start()
    [saved] = list((instance / "backups").iterdir())
    assert saved.name.startswith("before-upgrade-") and saved.name.endswith(f"-{PREVIOUS}.jsonl.gz")
    assert f"backed up the books before upgrading the schema: {saved}" in service.log_text()
    assert saved.stat().st_mode & 0o777 == 0o600
    with gzip.open(saved, "rt", encoding="utf-8") as stream:
        header = json.loads(stream.readline())
    assert header["format"] == "ledger-service-backup"
    assert header["schema_revision"] == PREVIOUS  # the books as they were, not yet migrated
    assert books(scratch_database_url)["revision"] == NEWEST

    # Restorable, into a new database of either store: the same books.
    for target in ("sqlite", "postgresql"):
        with throwaway_database(target, tmp_path, "ledger_restored_") as url:
            result = cli(url, "restore", str(saved), check=False)
            assert result.returncode == 0, result.stderr
            restored = books(url)
            assert restored["revision"] == NEWEST
            assert (restored["accounts"], restored["entries"]) == (
                before["accounts"],
                before["entries"],
            )
            assert restored["documents"] == before["documents"] == {1: RECEIPT}


def _failing_migrations(folder: Path) -> Path:
    """The migrations, plus one after the newest that changes the books, then fails."""
    copy = folder / "migrations"
    shutil.copytree(MIGRATIONS, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "versions" / "9999_fails.py").write_text(
        f'''"""A migration that fails halfway (test_upgrade_backup.py)."""
import sqlalchemy as sa
from alembic import op

revision = "9999_fails"
down_revision = "{NEWEST}"
branch_labels = None
depends_on = None


def upgrade():
    op.execute("UPDATE accounts SET name = name || ' (renamed)'")
    op.execute("DELETE FROM entries")
    op.create_table("half_made", sa.Column("id", sa.Integer, primary_key=True))
    raise RuntimeError("injected failure in migration 9999")


def downgrade():
    pass
'''
    )
    return copy


def test_a_failed_upgrade_leaves_the_books_and_names_the_backup(
    scratch_database_url, tmp_path, monkeypatch
):
    books_one_revision_behind(scratch_database_url)
    before = books(scratch_database_url)
    instance = tmp_path / "instance"
    monkeypatch.setenv("LEDGER_INSTANCE_PATH", str(instance))
    app = _app(scratch_database_url)
    app.extensions["migrate"].directory = str(_failing_migrations(tmp_path))
    try:
        result = app.test_cli_runner().invoke(args=["serve", "--no-web"])
    finally:
        with app.app_context():
            db.engine.dispose()
    [saved] = list((instance / "backups").iterdir())
    assert result.exit_code == 1, result.output
    assert (
        "error: the schema upgrade failed (RuntimeError: injected failure in migration 9999)"
        in (result.output)
    )
    assert f"the books are as they were; the backup taken just before it is {saved}" in (
        result.output
    )
    assert "listening" not in result.output
    # Not one of the upgrade's steps stayed: neither the good migration before nor the
    # broken one's changes.
    assert books(scratch_database_url) == before


def test_no_backup_when_nothing_is_pending_or_there_are_no_books(scratch_database_url, tmp_path):
    folder = tmp_path / "backups"
    app = _app(scratch_database_url)
    directory = str(MIGRATIONS)
    with app.app_context():
        assert upgrade_backup.backup_if_pending(directory, folder) is None  # no schema yet
    migrate(scratch_database_url, PREVIOUS)
    with app.app_context():
        assert upgrade_backup.backup_if_pending(directory, folder) is None  # seeds, no books
        db.engine.dispose()
    migrate(scratch_database_url)
    with app.app_context():
        store.write_intent.set(True)
        accounts.create_account("Bank", "asset")
        store.commit()
        assert upgrade_backup.backup_if_pending(directory, folder) is None  # at the newest
        db.engine.dispose()
    assert not folder.exists()


def test_only_the_newest_five_backups_are_kept(scratch_database_url, tmp_path):
    books_one_revision_behind(scratch_database_url)
    folder = tmp_path / "backups"
    folder.mkdir()
    mine = folder / "my-own.backup.gz"
    mine.write_text("a backup someone made by hand")
    app = _app(scratch_database_url)
    with app.app_context():
        written = [upgrade_backup.backup_if_pending(str(MIGRATIONS), folder) for _ in range(7)]
        db.engine.dispose()
    assert upgrade_backup.KEEP == 5
    assert sorted(folder.iterdir()) == sorted([mine, *written[2:]])
    assert len(set(written)) == 7
    assert all(p.stat().st_size > 0 for p in written[2:])
