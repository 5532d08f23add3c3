"""description words: an index of the descriptions' ASCII words (PostgreSQL)

A statement line's history suggestion by words (services/banking/rules.py, `described`)
looks for the account's two-entry transactions whose description shares a word with
the line's payee, over the whole books. Reading every such transaction of a busy
account took most of GET /statements/{id} at a million transactions (docs/performance.md).

PostgreSQL: ledger_description_words(description), an immutable SQL function, and a
GIN index on it. For a description of ASCII characters only it is the description's
runs of ASCII letters and digits, letters lowered (translate, not lower(): no locale);
for any other description, and for one longer than 2,000 characters (the API's limit:
a GIN entry must stay under about 2,700 bytes, so no longer word is ever indexed), the
one element '*' (never a word: words are letters and digits). rules.index_words proves
why this finds every transaction whose words (Python's casefold) hold a given word.
SQLite: nothing (its read stays the whole account's).

Revision ID: 0025_description_words
Revises: 0024_schedules
"""

from alembic import op

revision = "0025_description_words"
down_revision = "0024_schedules"
branch_labels = None
depends_on = None

FUNCTION = "ledger_description_words"
INDEX = "ix_transactions_description_words"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
SEPARATORS = "[^0123456789abcdefghijklmnopqrstuvwxyz]+"


def upgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        f"""
        CREATE FUNCTION {FUNCTION}(description text) RETURNS text[]
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
            SELECT CASE
                WHEN description ~ '[^[:ascii:]]' OR length(description) > 2000
                    THEN ARRAY['*']
                ELSE array_remove(regexp_split_to_array(
                    translate(description, '{UPPER}', '{UPPER.lower()}'), '{SEPARATORS}'), '')
            END
        $$
        """
    )
    op.execute(f"CREATE INDEX {INDEX} ON transactions USING gin ({FUNCTION}(description))")


def downgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(f"DROP INDEX IF EXISTS {INDEX}")
    op.execute(f"DROP FUNCTION IF EXISTS {FUNCTION}(text)")
