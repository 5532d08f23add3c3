"""Files the service creates are owner-only (mode 0600), whatever the umask.

The SQLite database holds the books, password hashes and token digests: the file,
its -wal and -shm companions (SQLite copies the database file's permissions to
them), the writer lock file and `ledger-service backup` output are all created
private, and so is the instance folder (0700) when the service creates it. Each test
runs under the common permissive umask 022.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from app import create_app, store
from app.extensions import db
from app.services.identity import users
from harness.server import Service, http
from tests.support import PASSWORD


@pytest.fixture
def permissive_umask():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def modes(folder: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir() if p.is_file()}


def assert_private(found: dict[str, int], expected: set[str]) -> None:
    assert expected <= set(found), found
    loose = {name: oct(mode) for name, mode in found.items() if mode & 0o077}
    assert loose == {}, loose


def test_a_fresh_database_from_the_app_factory_is_private(tmp_path, permissive_umask):
    from flask_migrate import upgrade

    folder = tmp_path / "data"
    folder.mkdir()
    app = create_app(
        {
            "DATABASE_URL": f"sqlite:///{folder}/ledger.db",
            "TESTING": True,
            "PASSWORD_HASH_FAST": True,
        }
    )
    try:
        with app.app_context():
            store.write_intent.set(True)
            upgrade()
            users.add_user("alice@example.com", PASSWORD)
            store.commit()
            # While a connection is open the WAL and its index exist.
            assert_private(
                modes(folder),
                {"ledger.db", "ledger.db-wal", "ledger.db-shm", "ledger.db-writer.lock"},
            )
    finally:
        with app.app_context():
            db.session.remove()
            db.engine.dispose()
    assert_private(modes(folder), {"ledger.db"})


@pytest.mark.slow  # runs `serve` in a subprocess: seconds (README, the quick loop)
def test_a_served_database_and_its_cli_are_private(tmp_path, permissive_umask):
    folder = tmp_path / "data"
    folder.mkdir()
    url = f"sqlite:///{folder}/books.db"
    with Service(url, tmp_path / "instance") as service:
        token = service.user_with_token()  # `user add` creates and migrates the database
        assert_private(modes(folder), {"books.db"})
        service.start()
        assert (
            http(
                "POST", service.origin + "/accounts", {"name": "Bank", "kind": "asset"}, token=token
            )[0]
            == 201
        )
        assert_private(
            modes(folder), {"books.db", "books.db-wal", "books.db-shm", "books.db-writer.lock"}
        )
    assert_private(modes(folder), {"books.db"})


def test_the_default_database_in_the_instance_folder_is_private(tmp_path, permissive_umask):
    service = Service("", tmp_path / "instance")
    service.env.pop("DATABASE_URL")
    service.cli("user", "add", "alice@example.com", "--password", "-", stdin=PASSWORD + "\n")
    assert_private(modes(tmp_path / "instance"), {"ledger.db"})


@pytest.mark.parametrize("name", ["books.backup", "books.backup.gz"])
def test_backup_output_is_private(runner, make_user, tmp_path, permissive_umask, name):
    make_user()
    target = tmp_path / name
    result = runner.invoke(args=["backup", str(target)])
    assert result.exit_code == 0, result.output
    assert_private(modes(tmp_path), {name})


def folder_mode(folder: Path) -> int:
    return stat.S_IMODE(folder.stat().st_mode)


def test_the_instance_folder_is_created_owner_only(tmp_path, permissive_umask, monkeypatch):
    """LEDGER_INSTANCE_PATH (default <repo>/instance) holds the default SQLite database:
    made 0700 when the service creates it; a folder that already exists is left as is."""
    fresh = tmp_path / "fresh" / "instance"
    monkeypatch.setenv("LEDGER_INSTANCE_PATH", str(fresh))
    app = create_app({"TESTING": True, "DATABASE_URL": None})  # None: the default, in it
    assert Path(app.instance_path) == fresh
    assert folder_mode(fresh) == 0o700
    assert app.config["DATABASE_URL"] == f"sqlite:///{fresh}/ledger.db"

    existing = tmp_path / "existing"
    existing.mkdir(mode=0o755)
    assert folder_mode(existing) == 0o755
    monkeypatch.setenv("LEDGER_INSTANCE_PATH", str(existing))
    create_app({"TESTING": True, "DATABASE_URL": None})
    assert folder_mode(existing) == 0o755


def test_apps_made_and_disposed_leave_no_open_files(tmp_path):
    """A process that makes many apps over one SQLite file (the test suite does, the
    service's workers restart) must not keep a descriptor per app: past 1024, a
    waitress server's select() fails and the server stops answering."""

    from app import create_app, store
    from app.extensions import db
    from tests.testkit import migrate

    url = f"sqlite:///{tmp_path / 'fds.db'}"
    migrate(url)

    def one_app():
        app = create_app({"DATABASE_URL": url, "TESTING": True})
        with app.app_context():
            with store.writing():
                db.session.execute(db.text("UPDATE settings SET book_style = book_style"))
                store.commit()
            db.session.remove()
            db.engine.dispose()

    one_app()
    before = len(list(Path("/proc/self/fd").iterdir()))
    for _ in range(20):
        one_app()
    assert len(list(Path("/proc/self/fd").iterdir())) <= before + 2
