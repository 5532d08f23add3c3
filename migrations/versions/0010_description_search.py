"""description search: a trigram index for the listing's q filter

The listing's q (a case-insensitive substring of the description) walks the
(occurred_on, id) index newest first and stops after a page of matches: cheap for a
common word, a read of every description for a rare one. This adds an index of the
descriptions' trigrams, which the listing uses when the ordered walk finds too few
matches (services/ledger/listing.py):

- PostgreSQL: the pg_trgm extension (contrib; a trusted extension since PostgreSQL 13,
  so the database's owner may create it) and a GIN index on lower(description)
  gin_trgm_ops. A server without pg_trgm, or a role that may not create it, gets no
  index and a warning: the migration succeeds and q answers exactly as before, by the
  ordered walk (slow for rare words only). Re-running this migration's upgrade
  (downgrade to 0009, upgrade) after installing contrib adds the index.
- SQLite: transaction_search, an FTS5 table with the trigram tokenizer (SQLite >= 3.34)
  over transactions.description (external content: the text is not stored twice;
  columnsize=0: no per-row token counts, which only ranking would read),
  kept in step by three triggers on transactions (insert, delete, update of the
  description) and filled from the existing rows here. The tokenizer folds case by
  SQLite's own table, which is not Python's str.lower for every letter, so the
  listing only asks it for runs of the query whose letters both fold alike and always
  checks the exact condition on the rows it returns. A SQLite without FTS5 or the
  trigram tokenizer (before 3.34) gets no table and a warning, as PostgreSQL without
  pg_trgm: q answers by the ordered walk.

Revision ID: 0010_description_search
Revises: 0009_books_at_scale
"""

import logging
from sqlite3 import sqlite_version as _sqlite_version

import sqlalchemy as sa
from alembic import op

revision = "0010_description_search"
down_revision = "0009_books_at_scale"
branch_labels = None
depends_on = None

log = logging.getLogger("alembic.runtime.migration")

PG_INDEX = "ix_transactions_description_trgm"
FTS_TABLE = "transaction_search"
SQLITE_TRIGGERS = {
    "trg_transaction_search_insert": f"""
        CREATE TRIGGER trg_transaction_search_insert AFTER INSERT ON transactions
        BEGIN
            INSERT INTO {FTS_TABLE} (rowid, description) VALUES (new.id, new.description);
        END""",
    "trg_transaction_search_delete": f"""
        CREATE TRIGGER trg_transaction_search_delete AFTER DELETE ON transactions
        BEGIN
            INSERT INTO {FTS_TABLE} ({FTS_TABLE}, rowid, description)
            VALUES ('delete', old.id, old.description);
        END""",
    "trg_transaction_search_update": f"""
        CREATE TRIGGER trg_transaction_search_update
        AFTER UPDATE OF id, description ON transactions
        BEGIN
            INSERT INTO {FTS_TABLE} ({FTS_TABLE}, rowid, description)
            VALUES ('delete', old.id, old.description);
            INSERT INTO {FTS_TABLE} (rowid, description) VALUES (new.id, new.description);
        END""",
}


def sqlite_version() -> str:
    return _sqlite_version


def upgrade():
    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        try:
            with conn.begin_nested():
                conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
        except sa.exc.DBAPIError as exc:
            log.warning(
                "pg_trgm is not available (%s): no trigram index on descriptions;"
                " the listing's q filter stays correct but reads every description for a"
                " rare word. Install PostgreSQL's contrib package, then downgrade to"
                " 0009_books_at_scale and upgrade again to add it.",
                type(exc.orig).__name__ if getattr(exc, "orig", None) else type(exc).__name__,
            )
            return
        op.execute(
            f"CREATE INDEX {PG_INDEX} ON transactions USING gin (lower(description) gin_trgm_ops)"
        )
        return
    try:
        with conn.begin_nested():
            conn.execute(
                sa.text(
                    f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(description,"
                    " content='transactions', content_rowid='id', columnsize=0,"
                    " tokenize='trigram case_sensitive 0')"
                )
            )
    except sa.exc.OperationalError as exc:
        log.warning(
            "SQLite %s has no FTS5 trigram tokenizer (%s; it needs 3.34 or newer with"
            " FTS5): no description search index; the listing's q filter stays correct"
            " but reads every description for a rare word.",
            sqlite_version(),
            exc.orig if getattr(exc, "orig", None) else exc,
        )
        return
    conn.execute(sa.text(f"INSERT INTO {FTS_TABLE} ({FTS_TABLE}) VALUES ('rebuild')"))
    for sql in SQLITE_TRIGGERS.values():
        conn.execute(sa.text(sql))


def downgrade():
    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        op.execute(f"DROP INDEX IF EXISTS {PG_INDEX}")
        # the extension stays: other objects of the database may use it
        return
    for name in SQLITE_TRIGGERS:
        conn.execute(sa.text(f"DROP TRIGGER IF EXISTS {name}"))
    conn.execute(sa.text(f"DROP TABLE IF EXISTS {FTS_TABLE}"))
