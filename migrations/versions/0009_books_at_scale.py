"""books at scale: archived accounts, normalised names, reconciliation, register index

- accounts.archived (false) and accounts.name_key: the name trimmed, case-folded and
  with inner runs of spaces collapsed (services/ledger/accounts.name_key), unique, so
  "Cash box" and "cash  box" cannot both be created, even by two racing requests.
  Books may already hold such near-duplicates (they were allowed before): the oldest
  account (lowest id) keeps the plain key, each later one gets its key plus
  "  #<id>" (two spaces cannot occur in a normalised key, so no name typed later
  can ever equal it). Nothing is renamed or refused: the owner renames or archives
  one of them when convenient; a new account with that name is refused as usual.
- entries.cleared and entries.reconciled (false; reconciled implies cleared), the
  partial index of cleared entries per account (the cleared balance) and the table
  of reconciliations (one row per statement an account was reconciled against).
- account_day_balances (account_id, day): one account's active days, newest first,
  which bounds the date range an account register page reads.

Revision ID: 0009_books_at_scale
Revises: 0005_device_starts
"""

import sqlalchemy as sa
from alembic import op

revision = "0009_books_at_scale"
down_revision = "0005_device_starts"
branch_labels = None
depends_on = None

CLASH_SUFFIX = "  #{id}"


def name_key(name: str) -> str:
    """The same rule as services.ledger.accounts.name_key (kept here: migrations are frozen)."""
    return " ".join(name.casefold().split())


def upgrade():
    op.add_column(
        "accounts", sa.Column("name_key", sa.String(length=200), server_default="", nullable=False)
    )
    op.add_column(
        "accounts",
        sa.Column("archived", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    conn = op.get_bind()
    taken: set[str] = set()
    rows = conn.execute(sa.text("SELECT id, name FROM accounts ORDER BY id")).all()
    for account_id, name in rows:
        key = name_key(name)
        if key in taken:
            key = key + CLASH_SUFFIX.format(id=account_id)
        taken.add(key)
        conn.execute(
            sa.text("UPDATE accounts SET name_key = :key WHERE id = :id"),
            {"key": key, "id": account_id},
        )
    op.create_index("uq_accounts_name_key", "accounts", ["name_key"], unique=True)

    op.add_column(
        "entries", sa.Column("cleared", sa.Boolean(), server_default=sa.false(), nullable=False)
    )
    op.add_column(
        "entries",
        sa.Column("reconciled", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    if conn.dialect.name == "postgresql":
        op.create_check_constraint(
            "ck_entries_reconciled_is_cleared", "entries", "cleared OR NOT reconciled"
        )
    # SQLite cannot add a CHECK to an existing table without rebuilding it (which would
    # drop the triggers); the service keeps the rule (reconciling needs cleared entries).
    op.create_index(
        "ix_entries_cleared",
        "entries",
        ["account_id", "amount_cents"],
        postgresql_where=sa.text("cleared"),
        sqlite_where=sa.text("cleared"),
    )
    op.create_table(
        "reconciliations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("statement_date", sa.Date(), nullable=False),
        sa.Column("closing_balance_cents", sa.BigInteger(), nullable=False),
        sa.Column("entry_count", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_reconciliations_account_id_accounts"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["users.id"],
            name=op.f("fk_reconciliations_created_by_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reconciliations")),
    )
    op.create_index(
        "ix_reconciliations_account_date", "reconciliations", ["account_id", "statement_date"]
    )
    op.create_index("ix_reconciliations_created_by", "reconciliations", ["created_by"])
    op.create_index(
        "ix_account_day_balances_account_day", "account_day_balances", ["account_id", "day"]
    )


def downgrade():
    op.drop_index("ix_account_day_balances_account_day", table_name="account_day_balances")
    op.drop_index("ix_reconciliations_created_by", table_name="reconciliations")
    op.drop_index("ix_reconciliations_account_date", table_name="reconciliations")
    op.drop_table("reconciliations")
    op.drop_index("ix_entries_cleared", table_name="entries")
    if op.get_bind().dialect.name == "postgresql":
        op.drop_constraint("ck_entries_reconciled_is_cleared", "entries", type_="check")
    op.drop_column("entries", "reconciled")
    op.drop_column("entries", "cleared")
    op.drop_index("uq_accounts_name_key", table_name="accounts")
    op.drop_column("accounts", "archived")
    op.drop_column("accounts", "name_key")
