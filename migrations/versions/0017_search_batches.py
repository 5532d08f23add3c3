"""search batches: SQLite's description index written every 16th posting (issue 30)

Migration 0010's insert trigger added each new transaction to transaction_search (FTS5,
trigram) at once: the tokenizer ran per row and every COMMIT wrote a new FTS5 segment,
50-100 µs of each posting. Now the newest transactions wait, a few at a time, and go in
together:

- search_indexed, one row (id = 1): `upto`. Every transaction with id <= upto is in
  transaction_search; none above it is (the tail). Filled with max(transactions.id), or
  0, here (0010 indexed every row).
- trg_transaction_search_insert, one AFTER INSERT trigger doing both jobs:
  - a row inserted with an id at or below the mark (an explicit id, e.g. a restore into
    a gap): indexed at once, alone;
  - a row whose id is a multiple of BATCH (16) above the mark: every transaction with
    upto < id <= new.id (the tail, this row included) indexed by one INSERT ... SELECT,
    and upto = new.id.
  Any other insert (the common case: a new posting above the mark) does nothing but
  evaluate the WHEN clause.
  One trigger, not two (an immediate one and a batch one): SQLite fires the triggers
  of one event newest first (verified on 3.40: reverse creation order, as sqlite_schema
  is read back) and evaluates each one's WHEN after the previous one ran, so a batch
  trigger that fired first would raise the mark and the immediate one would then index
  the same row again (FTS5 has no unique rowid: the index would hold it twice, which
  its integrity check reports as corrupt). Two triggers would be right only in one
  creation order, which every tool that drops and recreates triggers (bench/bulk.py
  does) would have to keep; the one trigger computes its range from the mark it reads
  before writing: (min(upto, new.id - 1), new.id].
- delete and update of id or description: they touch transaction_search only for a row
  at or below the mark. An unindexed row must not get FTS5's 'delete' command: with
  external content that subtracts tokens the index never held, which corrupts it.
  Update: 'delete' the old row if old.id <= upto, add the new one if new.id <= upto.

Why 16: the cost saved is the per-commit segment write (and its merges), paid now once
per batch. Measured in raw sqlite3 (docs/performance.md, "Fourth pass"), µs per
single-row posting: no index 28, 0010's trigger 225, batches of 8 117, of 16 76, of 32
66, of 64 71: 16 takes most of the gain, larger batches save less than the rounds'
spread, while the tail that a search for a rare word reads by
the exact condition (services/ledger/search.py: the index's matches and every id above
the mark, a rowid range) grows with the batch: at most 15 unindexed rows as postings come in
(ids given explicitly, e.g. by a restore, can skip a multiple of 16 and leave more
until the next one arrives).

Readers: search.sqlite_condition narrows to the index's matches or the tail;
derived.search_index_differences (`ledger-service check`) indexes the tail before FTS5's
integrity check (which would otherwise read the unindexed tail as corruption), and
derived.rebuild_search_index sets upto after 'rebuild' (search.py holds that SQL).

Only where 0010 made transaction_search (a SQLite without FTS5 trigram has neither it
nor search_indexed). PostgreSQL: nothing (its GIN trigram index is the server's).
Downgrade: index the tail, drop search_indexed and the triggers, restore 0010's three.

Revision ID: 0017_search_batches
Revises: 0016_audit_seal_sets
"""

import sqlalchemy as sa
from alembic import context, op

revision = "0017_search_batches"
down_revision = "0016_audit_seal_sets"
branch_labels = None
depends_on = None

FTS_TABLE = "transaction_search"
MARK_TABLE = "search_indexed"
BATCH = 16  # a batch every 16th id; why 16: the docstring
UPTO = f"(SELECT upto FROM {MARK_TABLE} WHERE id = 1)"

BATCHED_TRIGGERS = {
    "trg_transaction_search_insert": f"""
        CREATE TRIGGER trg_transaction_search_insert AFTER INSERT ON transactions
        WHEN new.id <= {UPTO} OR new.id % {BATCH} = 0
        BEGIN
            INSERT INTO {FTS_TABLE} (rowid, description)
            SELECT id, description FROM transactions
            WHERE id > min(new.id - 1, {UPTO}) AND id <= new.id;
            UPDATE {MARK_TABLE} SET upto = new.id WHERE id = 1 AND upto < new.id;
        END""",
    "trg_transaction_search_delete": f"""
        CREATE TRIGGER trg_transaction_search_delete AFTER DELETE ON transactions
        WHEN old.id <= {UPTO}
        BEGIN
            INSERT INTO {FTS_TABLE} ({FTS_TABLE}, rowid, description)
            VALUES ('delete', old.id, old.description);
        END""",
    "trg_transaction_search_update": f"""
        CREATE TRIGGER trg_transaction_search_update
        AFTER UPDATE OF id, description ON transactions
        WHEN old.id <= {UPTO} OR new.id <= {UPTO}
        BEGIN
            INSERT INTO {FTS_TABLE} ({FTS_TABLE}, rowid, description)
            SELECT 'delete', old.id, old.description WHERE old.id <= {UPTO};
            INSERT INTO {FTS_TABLE} (rowid, description)
            SELECT new.id, new.description WHERE new.id <= {UPTO};
        END""",
}


def _has(conn, name: str) -> bool:
    found = conn.execute(
        sa.text("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :name"),
        {"name": name},
    )
    return found.first() is not None


def _replace_triggers(conn, triggers: dict[str, str]) -> None:
    for name in triggers:
        conn.execute(sa.text(f"DROP TRIGGER IF EXISTS {name}"))
    for sql in triggers.values():
        conn.execute(sa.text(sql))


def upgrade():
    conn = op.get_bind()
    if conn.dialect.name != "sqlite" or not _has(conn, FTS_TABLE):
        return
    conn.execute(
        sa.text(
            f"CREATE TABLE {MARK_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1),"
            " upto BIGINT NOT NULL)"
        )
    )
    conn.execute(
        sa.text(
            f"INSERT INTO {MARK_TABLE} (id, upto) SELECT 1, coalesce(max(id), 0) FROM transactions"
        )
    )
    _replace_triggers(conn, BATCHED_TRIGGERS)


def downgrade():
    conn = op.get_bind()
    if conn.dialect.name != "sqlite" or not _has(conn, MARK_TABLE):
        return
    conn.execute(
        sa.text(
            f"INSERT INTO {FTS_TABLE} (rowid, description)"
            f" SELECT id, description FROM transactions WHERE id > {UPTO}"
        )
    )
    # Migration 0010's triggers, as it made them (Alembic has its module loaded).
    _replace_triggers(
        conn, context.script.get_revision("0010_description_search").module.SQLITE_TRIGGERS
    )
    conn.execute(sa.text(f"DROP TABLE {MARK_TABLE}"))
