"""statement_lines: the payee index holds any payee a statement may carry

`ix_statement_lines_payee` was a btree on (payee_key, status): PostgreSQL refuses a btree
entry over 2,704 bytes, so a line whose payee (at most 2,000 characters,
docs/statements.md) was of characters of two or three bytes each, and did not compress,
made the upload a 500. The index is now on payee_key alone (the suggestions look lines up
by their payee key, then keep the posted ones), a hash index on PostgreSQL (a 4-byte hash
per entry, whatever the key's length; equality is all it serves), a plain one on SQLite
(which has no such limit).

Revision ID: 0022_statement_payee_hash
Revises: 0021_bank_ref_once
"""

from alembic import op

revision = "0022_statement_payee_hash"
down_revision = "0021_bank_ref_once"
branch_labels = None
depends_on = None


def upgrade():
    op.drop_index("ix_statement_lines_payee", table_name="statement_lines")
    op.create_index(
        "ix_statement_lines_payee", "statement_lines", ["payee_key"], postgresql_using="hash"
    )


def downgrade():
    op.drop_index("ix_statement_lines_payee", table_name="statement_lines")
    op.create_index("ix_statement_lines_payee", "statement_lines", ["payee_key", "status"])
