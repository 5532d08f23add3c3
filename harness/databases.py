"""Throwaway databases (a PostgreSQL database or a SQLite file) for a benchmark run
or a test: the one helper both use (tests/support.py adds pytest's skip-or-fail
rule for an unreachable PostgreSQL)."""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

PG_ADMIN_URL = os.environ.get(
    "TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


class Unreachable(RuntimeError):
    """The PostgreSQL server at the admin URL could not create a database."""


@contextmanager
def throwaway(
    dialect: str,
    admin_url: str = PG_ADMIN_URL,
    *,
    folder=None,
    prefix: str = "ledger_bench_",
    keep: bool = False,
    existing: str | None = None,
):
    """The URL of a new, empty database of dialect (no tables), dropped afterwards
    unless keep (then its name is printed).

    SQLite: a new file in folder (the caller's: left in place), or in a new temporary
    folder removed afterwards. PostgreSQL: a new database on admin_url; Unreachable
    if it cannot be created there. existing: the caller's own database, used as it
    is and never dropped.
    """
    if existing:
        yield existing
        return
    name = prefix + secrets.token_hex(4)
    if dialect == "sqlite":
        own = folder is None
        folder = Path(tempfile.mkdtemp(prefix="ledger-bench-") if own else folder)
        try:
            yield f"sqlite:///{folder / name}.db"
        finally:
            if keep:
                print(f"kept {folder / name}.db")
            elif own:
                shutil.rmtree(folder, ignore_errors=True)
        return

    import psycopg

    admin = admin_url.replace("postgresql+psycopg://", "postgresql://")
    try:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except Exception as exc:  # noqa: BLE001 - any failure means "no PostgreSQL here"
        raise Unreachable(f"PostgreSQL not reachable at {admin_url}: {type(exc).__name__}") from exc
    try:
        yield admin_url.rsplit("/", 1)[0] + "/" + name
    finally:
        if keep:
            print(f"kept PostgreSQL database {name}")
        else:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
