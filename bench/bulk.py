"""Bulk loading straight into the database (not through HTTP).

PostgreSQL: COPY with session_replication_role = replica, which skips every
trigger (the balance check, the derived-table maintenance and the foreign-key
checks) for the load; the generator's books are balanced by construction.
SQLite: executemany in one transaction with the entries/transactions triggers
dropped for the load and recreated from their own stored SQL, then the description
search (FTS5 trigram, migration 0010) rebuilt from the loaded rows and its mark
(search_indexed, migration 0016) set to the newest id. PostgreSQL keeps
its trigram index during COPY as any other index.
Either way the derived tables are then rebuilt from the entries by one
INSERT ... SELECT per table (services.derived.rebuild), and the harness runs
`ledger-service check` to prove they equal what the triggers maintain.
"""

from __future__ import annotations

import argparse
import io
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from harness import databases
from harness.server import BENCH_EMAIL, cli

from . import ledger_gen

CREATED_AT = datetime(2026, 1, 1, tzinfo=UTC).replace(tzinfo=None)
BATCH = 50_000


def load_postgresql(url: str, n: int, seed: int) -> None:
    import psycopg

    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        conn.execute("SET session_replication_role = replica")
        with conn.cursor() as cur:
            name_key = cur.execute(
                "SELECT 1 FROM information_schema.columns"
                " WHERE table_name = 'accounts' AND column_name = 'name_key'"
            ).fetchone()
            if name_key:
                with cur.copy("COPY accounts (id, name, kind, name_key) FROM STDIN") as copy:
                    for row in ledger_gen.accounts():
                        copy.write_row((*row, row[1].casefold()))
            else:  # a schema before migration 0009 (python -m bench.verify loads at 0005)
                with cur.copy("COPY accounts (id, name, kind) FROM STDIN") as copy:
                    for row in ledger_gen.accounts():
                        copy.write_row(row)
            entry_id = 0
            tx_buf, entry_buf = io.StringIO(), io.StringIO()
            for tx_id, day, description, legs in ledger_gen.transactions(n, seed):
                tx_buf.write(
                    f"{tx_id}\t{day.isoformat()}\t{description}\t{CREATED_AT.isoformat()}\n"
                )
                for account_id, cents in legs:
                    entry_id += 1
                    entry_buf.write(f"{entry_id}\t{tx_id}\t{account_id}\t{cents}\n")
            with cur.copy(
                "COPY transactions (id, occurred_on, description, created_at) FROM STDIN"
            ) as copy:
                copy.write(tx_buf.getvalue())
            with cur.copy(
                "COPY entries (id, transaction_id, account_id, amount_cents) FROM STDIN"
            ) as copy:
                copy.write(entry_buf.getvalue())
            for table in ("accounts", "transactions", "entries"):
                cur.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                    f" (SELECT max(id) FROM {table}))"
                )
        conn.execute("SET session_replication_role = origin")
        conn.commit()


def load_sqlite(url: str, n: int, seed: int) -> None:
    conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA foreign_keys=OFF")
    conn.execute("BEGIN IMMEDIATE")
    triggers = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"
        " AND tbl_name IN ('entries', 'transactions')"
    ).fetchall()
    for name, _ in triggers:
        conn.execute(f'DROP TRIGGER "{name}"')
    if any(column[1] == "name_key" for column in conn.execute("PRAGMA table_info(accounts)")):
        conn.executemany(
            "INSERT INTO accounts (id, name, kind, name_key) VALUES (?, ?, ?, ?)",
            [(*row, row[1].casefold()) for row in ledger_gen.accounts()],
        )
    else:  # a schema before migration 0009 (python -m bench.verify loads at 0005)
        conn.executemany(
            "INSERT INTO accounts (id, name, kind) VALUES (?, ?, ?)", ledger_gen.accounts()
        )
    tx_rows, entry_rows = [], []
    for tx_id, day, description, legs in ledger_gen.transactions(n, seed):
        tx_rows.append((tx_id, day.isoformat(), description, CREATED_AT.isoformat(sep=" ")))
        entry_rows.extend((tx_id, a, c) for a, c in legs)
        if len(tx_rows) >= BATCH:
            _flush_sqlite(conn, tx_rows, entry_rows)
    _flush_sqlite(conn, tx_rows, entry_rows)
    for _, sql in triggers:
        conn.execute(sql)
    # The description search (FTS5, migration 0010) is kept by triggers on transactions,
    # dropped for the load: index the loaded descriptions in one pass.
    # Every loaded row is indexed then: the mark of the batched trigger (migration 0016)
    # goes to the newest id (a schema before 0016 has no mark).
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'transaction_search'").fetchone():
        conn.execute("INSERT INTO transaction_search (transaction_search) VALUES ('rebuild')")
    # The descriptions' words (migration 0026), kept under the same mark.
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'transaction_words'").fetchone():
        conn.execute("INSERT INTO transaction_words (transaction_words) VALUES ('rebuild')")
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'search_indexed'").fetchone():
        from app.services.ledger.search import MARK_ALL

        conn.execute(MARK_ALL)
    conn.execute("COMMIT")
    conn.close()


def _flush_sqlite(conn, tx_rows, entry_rows) -> None:
    conn.executemany(
        "INSERT INTO transactions (id, occurred_on, description, created_at) VALUES (?, ?, ?, ?)",
        tx_rows,
    )
    conn.executemany(
        "INSERT INTO entries (transaction_id, account_id, amount_cents) VALUES (?, ?, ?)",
        entry_rows,
    )
    tx_rows.clear()
    entry_rows.clear()


def rebuild_and_analyze(url: str) -> None:
    """Rebuild the derived tables from the entries, then refresh planner statistics."""
    from sqlalchemy import text

    from app import create_app, store
    from app.extensions import db
    from app.services.ledger import derived

    app = create_app({"DATABASE_URL": url})
    with app.app_context():
        store.write_intent.set(True)
        derived.rebuild()
        store.commit()
        if db.engine.dialect.name == "postgresql":
            with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.execute(text("VACUUM ANALYZE"))
        else:
            with db.engine.begin() as conn:
                conn.execute(text("ANALYZE"))
        db.engine.dispose()


def books_parser(prog: str, doc: str, *, repeat: int) -> argparse.ArgumentParser:
    """The command line of an in-process bench over loaded_books (--dialect,
    --transactions, --seed, --admin-url, --database-url), its --repeat and --json."""
    p = argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    p.add_argument("--dialect", choices=("postgresql", "sqlite"), default="sqlite")
    p.add_argument("--transactions", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--repeat", type=int, default=repeat)
    p.add_argument("--admin-url", default=databases.PG_ADMIN_URL)
    p.add_argument("--database-url", help="measure a database already loaded (same size/seed)")
    p.add_argument("--json", help="also write the figures to this file")
    return p


@contextmanager
def loaded_books(args) -> Iterator[str]:
    """The url of books to measure: args.database_url as it stands (loaded before, by
    python -m bench --load-only), or a throwaway database of args.dialect with the bench
    user and args.transactions generated transactions (seed args.seed), rebuilt and
    analysed, dropped on the way out."""
    with databases.throwaway(args.dialect, args.admin_url, existing=args.database_url) as url:
        if not args.database_url:
            cli(url, "user", "add", BENCH_EMAIL, "--password", "-", stdin="bench-password\n")
            load = load_postgresql if args.dialect == "postgresql" else load_sqlite
            load(url, args.transactions, args.seed)
            rebuild_and_analyze(url)
        yield url
