"""Helpers shared by tests (importable; fixtures live in conftest.py)."""

import os
import secrets
from contextlib import contextmanager
from pathlib import Path

import pytest

PG_ADMIN_URL = os.environ.get(
    "TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


def require_postgres() -> bool:
    flag = os.environ.get("LEDGER_REQUIRE_POSTGRES") or os.environ.get("CI") or ""
    return flag.strip().lower() not in ("", "0", "false", "no")


def require_tools() -> bool:
    """True where the external programs `.ci/run` installs must be present: skip -> fail.

    Those are nginx, hledger, ledger-cli, npx and bean-check (node and Chromium have their
    own flag, tests/web_support.py). LEDGER_REQUIRE_TOOLS wins when set (0/false/no turns
    the requirement off); otherwise CI or LEDGER_REQUIRE_POSTGRES, the flags `.ci/run`
    sets, imply it.
    """
    explicit = os.environ.get("LEDGER_REQUIRE_TOOLS")
    if explicit is not None and explicit.strip() != "":
        return explicit.strip().lower() not in ("0", "false", "no")
    flag = os.environ.get("CI") or os.environ.get("LEDGER_REQUIRE_POSTGRES") or ""
    return flag.strip().lower() not in ("", "0", "false", "no")


def missing_tool(reason: str):
    """A required external program is absent: a visible skip here, a failure under CI."""
    if require_tools():
        pytest.fail(reason + " (CI/LEDGER_REQUIRE_TOOLS set: .ci/run installs it, so it must run)")
    pytest.skip(reason)


def console_script() -> list[str]:
    """The installed `ledger-service` command (from this interpreter's environment)."""
    import shutil
    import sys
    from pathlib import Path

    beside = Path(sys.executable).parent / "ledger-service"
    found = str(beside) if beside.exists() else shutil.which("ledger-service")
    if not found:
        pytest.skip("the ledger-service console script is not installed (pip install -e .)")
    return [found]


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def throwaway_database(dialect: str, folder: Path, prefix: str = "ledger_test_"):
    """The URL of a new, empty database of dialect (no tables), dropped afterwards.

    SQLite: a new file in folder. PostgreSQL: a new database on PG_ADMIN_URL; if the
    server cannot be reached the test is skipped with the reason, or fails when
    PostgreSQL runs are required (require_postgres: CI, LEDGER_REQUIRE_POSTGRES).
    """
    if dialect == "sqlite":
        yield f"sqlite:///{Path(folder) / (prefix + secrets.token_hex(4))}.db"
        return
    from sqlalchemy import create_engine, text

    name = prefix + secrets.token_hex(4)
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001 - any failure means "no PostgreSQL here"
        admin.dispose()
        reason = f"PostgreSQL not reachable at {PG_ADMIN_URL}: {type(exc).__name__}"
        if require_postgres():
            pytest.fail(reason + " (CI/LEDGER_REQUIRE_POSTGRES set: PostgreSQL runs are required)")
        pytest.skip(reason)
    try:
        yield PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
