"""description words on SQLite: an FTS5 table of the descriptions' ASCII words

SQLite's counterpart of 0025's index (PostgreSQL): the history suggestion's word
fallback (services/banking/rules.py, `described`) asks it for the transactions that
may hold one of the payees' words instead of reading every two-entry transaction of
the account.

- transaction_words_source, a view: per transaction its id and `words`, the
  description with '*' made a space when the description is all ASCII (its UTF-8 is
  as long as its characters: a NUL or any other character makes them differ) and at
  most 2,000 characters long; else the one token '*' (as 0025's '*').
- transaction_words, FTS5 over that view (external content: nothing stored twice;
  detail=none, columnsize=0: only which rows hold a token), tokenizer unicode61 with
  '*' as a token character. On ASCII text unicode61's tokens are the runs of letters
  and digits, A-Z lowered: the words rules.words finds (rules.index_words proves it).
- Kept exactly as transaction_search (0017): the same batches of 16 under the same
  mark search_indexed.upto, by the same three triggers, replaced here by versions
  that write both tables (each table holds the ids <= upto, none above). Filled here
  by 'rebuild' after the trigram table's tail was indexed, so both start at the
  newest id. Readers add the tail (id > upto) themselves, as search.py does.

Only where 0017 made the mark (a SQLite with FTS5 trigram); else nothing, and the
fallback reads the whole account. PostgreSQL: nothing. Downgrade: 0017's triggers,
the table and the view dropped (the trigram table keeps its mark).

Revision ID: 0026_sqlite_description_words
Revises: 0025_description_words
"""

import sqlalchemy as sa
from alembic import context, op

revision = "0026_sqlite_description_words"
down_revision = "0025_description_words"
branch_labels = None
depends_on = None

FTS_TABLE = "transaction_search"
MARK_TABLE = "search_indexed"
WORDS_TABLE = "transaction_words"
SOURCE_VIEW = "transaction_words_source"
BATCH = 16  # 0017's batch
UPTO = f"(SELECT upto FROM {MARK_TABLE} WHERE id = 1)"
LONGEST = 2000


def words_of(column: str) -> str:
    """The text transaction_words indexes for a description column (the view's)."""
    return (
        f"CASE WHEN length(CAST({column} AS BLOB)) = length({column})"
        f" AND length({column}) <= {LONGEST} THEN replace({column}, '*', ' ') ELSE '*' END"
    )


TRIGGERS = {
    "trg_transaction_search_insert": f"""
        CREATE TRIGGER trg_transaction_search_insert AFTER INSERT ON transactions
        WHEN new.id <= {UPTO} OR new.id % {BATCH} = 0
        BEGIN
            INSERT INTO {FTS_TABLE} (rowid, description)
            SELECT id, description FROM transactions
            WHERE id > min(new.id - 1, {UPTO}) AND id <= new.id;
            INSERT INTO {WORDS_TABLE} (rowid, words)
            SELECT id, words FROM {SOURCE_VIEW}
            WHERE id > min(new.id - 1, {UPTO}) AND id <= new.id;
            UPDATE {MARK_TABLE} SET upto = new.id WHERE id = 1 AND upto < new.id;
        END""",
    "trg_transaction_search_delete": f"""
        CREATE TRIGGER trg_transaction_search_delete AFTER DELETE ON transactions
        WHEN old.id <= {UPTO}
        BEGIN
            INSERT INTO {FTS_TABLE} ({FTS_TABLE}, rowid, description)
            VALUES ('delete', old.id, old.description);
            INSERT INTO {WORDS_TABLE} ({WORDS_TABLE}, rowid, words)
            VALUES ('delete', old.id, {words_of("old.description")});
        END""",
    "trg_transaction_search_update": f"""
        CREATE TRIGGER trg_transaction_search_update
        AFTER UPDATE OF id, description ON transactions
        WHEN old.id <= {UPTO} OR new.id <= {UPTO}
        BEGIN
            INSERT INTO {FTS_TABLE} ({FTS_TABLE}, rowid, description)
            SELECT 'delete', old.id, old.description WHERE old.id <= {UPTO};
            INSERT INTO {WORDS_TABLE} ({WORDS_TABLE}, rowid, words)
            SELECT 'delete', old.id, {words_of("old.description")} WHERE old.id <= {UPTO};
            INSERT INTO {FTS_TABLE} (rowid, description)
            SELECT new.id, new.description WHERE new.id <= {UPTO};
            INSERT INTO {WORDS_TABLE} (rowid, words)
            SELECT new.id, {words_of("new.description")} WHERE new.id <= {UPTO};
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
    if conn.dialect.name != "sqlite" or not _has(conn, MARK_TABLE):
        return
    # The trigram table's tail first, so the mark is the newest id for both tables.
    conn.execute(
        sa.text(
            f"INSERT INTO {FTS_TABLE} (rowid, description)"
            f" SELECT id, description FROM transactions WHERE id > {UPTO}"
        )
    )
    conn.execute(
        sa.text(
            f"UPDATE {MARK_TABLE} SET upto = max(upto,"
            " (SELECT coalesce(max(id), 0) FROM transactions)) WHERE id = 1"
        )
    )
    conn.execute(
        sa.text(
            f"CREATE VIEW {SOURCE_VIEW} AS"
            f" SELECT id, {words_of('description')} AS words FROM transactions"
        )
    )
    conn.execute(
        sa.text(
            f"CREATE VIRTUAL TABLE {WORDS_TABLE} USING fts5(words,"
            f" content='{SOURCE_VIEW}', content_rowid='id', detail=none, columnsize=0,"
            " tokenize=\"unicode61 remove_diacritics 0 tokenchars '*'\")"
        )
    )
    conn.execute(sa.text(f"INSERT INTO {WORDS_TABLE} ({WORDS_TABLE}) VALUES ('rebuild')"))
    _replace_triggers(conn, TRIGGERS)


def downgrade():
    conn = op.get_bind()
    if conn.dialect.name != "sqlite" or not _has(conn, WORDS_TABLE):
        return
    # 0017's triggers, as it made them (Alembic has its module loaded).
    _replace_triggers(
        conn, context.script.get_revision("0017_search_batches").module.BATCHED_TRIGGERS
    )
    conn.execute(sa.text(f"DROP TABLE {WORDS_TABLE}"))
    conn.execute(sa.text(f"DROP VIEW {SOURCE_VIEW}"))
