"""statements: bank statements held for review, their lines, filing rules, bank_ref

Three tables and one column (docs/statements.md; app/models/banking.py):

- `statements`: one uploaded bank statement, its bytes (bytea / BLOB) and SHA-256,
  what the reader found (format, bank account, currency, period, balances);
- `statement_lines`: each line of it in file order (line_id 1, 2, ...), with its
  status and the transaction it names (ON DELETE SET NULL), deleted with the
  statement (ON DELETE CASCADE);
- `rules`: the person's filing rules (conditions as canonical JSON);
- `entries.bank_ref`: the bank's reference a statement line left on the entry it
  posted or matched, null otherwise; indexed (account_id, bank_ref) where present,
  so a line's duplicate is one index look-up. Adding a nullable column without a
  default rewrites nothing on either store.

Revision ID: 0020_statements
Revises: 0018_posting_triggers
"""

import sqlalchemy as sa
from alembic import op

revision = "0020_statements"
down_revision = "0019_document_chunks"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade():
    op.add_column("entries", sa.Column("bank_ref", sa.Text(), nullable=True))
    op.create_index(
        "ix_entries_bank_ref",
        "entries",
        ["account_id", "bank_ref"],
        postgresql_where=sa.text("bank_ref IS NOT NULL"),
        sqlite_where=sa.text("bank_ref IS NOT NULL"),
    )
    op.create_table(
        "statements",
        sa.Column("id", BigId, primary_key=True),
        sa.Column(
            "account_id",
            sa.Integer(),
            sa.ForeignKey("accounts.id", ondelete="RESTRICT"),
            nullable=False,
        ),
        sa.Column("format", sa.String(16), nullable=False),
        sa.Column("bank_account", sa.String(200), nullable=True),
        sa.Column("currency", sa.String(16), nullable=True),
        sa.Column("period_from", sa.Date(), nullable=True),
        sa.Column("period_to", sa.Date(), nullable=True),
        sa.Column("opening_balance_cents", sa.BigInteger(), nullable=True),
        sa.Column("closing_balance_cents", sa.BigInteger(), nullable=True),
        sa.Column("closing_balance_on", sa.Date(), nullable=True),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column(
            "created_by",
            sa.Integer(),
            sa.ForeignKey("users.id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.Column("content_bytes", sa.LargeBinary(), nullable=False),
    )
    op.create_index("ix_statements_account_id", "statements", ["account_id", "id"])
    op.create_index("ix_statements_created_by", "statements", ["created_by"])
    op.create_table(
        "statement_lines",
        sa.Column(
            "statement_id",
            BigId,
            sa.ForeignKey("statements.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("line_id", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("booked_on", sa.Date(), nullable=False),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
        sa.Column("payee", sa.Text(), nullable=True),
        sa.Column("payee_key", sa.Text(), nullable=True),
        sa.Column("memo", sa.Text(), nullable=True),
        sa.Column("bank_ref", sa.Text(), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column(
            "transaction_id",
            BigId,
            sa.ForeignKey("transactions.id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.CheckConstraint(
            "status IN ('duplicate', 'match', 'new', 'posted', 'matched', 'ignored')",
            name="line_status",
        ),
    )
    op.create_index("ix_statement_lines_payee", "statement_lines", ["payee_key", "status"])
    op.create_index("ix_statement_lines_transaction", "statement_lines", ["transaction_id"])
    op.create_table(
        "rules",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("name_key", sa.String(200), nullable=False, unique=True),
        sa.Column("priority", sa.BigInteger(), nullable=False),
        sa.Column(
            "account_id",
            sa.Integer(),
            sa.ForeignKey("accounts.id", ondelete="RESTRICT"),
            nullable=True,
        ),
        sa.Column("conditions", sa.Text(), nullable=False),
        sa.Column(
            "counter_account_id",
            sa.Integer(),
            sa.ForeignKey("accounts.id", ondelete="RESTRICT"),
            nullable=False,
        ),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("active", sa.Boolean(), nullable=False, server_default=sa.true()),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_rules_priority", "rules", ["priority", "id"])
    op.create_index("ix_rules_account_id", "rules", ["account_id"])
    op.create_index("ix_rules_counter_account_id", "rules", ["counter_account_id"])


def downgrade():
    op.drop_table("rules")
    op.drop_table("statement_lines")
    op.drop_table("statements")
    op.drop_index("ix_entries_bank_ref", table_name="entries")
    op.drop_column("entries", "bank_ref")
