"""Throwaway databases for a benchmark run: a PostgreSQL database or a SQLite file."""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from contextlib import contextmanager

PG_ADMIN_URL = os.environ.get(
    "TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


@contextmanager
def throwaway(dialect: str, admin_url: str, *, keep: bool = False, existing: str | None = None):
    if existing:  # the caller's own database: used as it is, never dropped
        yield existing
        return
    if dialect == "sqlite":
        folder = tempfile.mkdtemp(prefix="ledger-bench-")
        try:
            yield "sqlite:///" + os.path.join(folder, "ledger.db")
        finally:
            if keep:
                print(f"kept {folder}/ledger.db")
            else:
                shutil.rmtree(folder, ignore_errors=True)
        return

    import psycopg

    admin = admin_url.replace("postgresql+psycopg://", "postgresql://")
    name = "ledger_bench_" + secrets.token_hex(4)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin_url.rsplit("/", 1)[0] + "/" + name
    finally:
        if keep:
            print(f"kept PostgreSQL database {name}")
        else:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
