"""budgets: a named twelve-month plan and its lines (issue 26)

budgets: id, name (unique after normalisation, as account names: name_key),
starts_on (the first day of the first month), approved_at and approved_by_email
(null while the budget is a draft; an approved budget is frozen).

budget_lines: one row per (budget, income or expense account), the twelve monthly
figures in cents in m01..m12, sign-adjusted as reports show them
(services/ledger/budgets.py). Deleting a budget deletes its lines; an account with
budget lines cannot be removed (accounts are archived, never deleted).

Revision ID: 0014_budgets
Revises: 0011_audit_sealing
"""

import sqlalchemy as sa
from alembic import op

revision = "0014_budgets"
down_revision = "0012_cimd_limits"
branch_labels = None
depends_on = None

MONTHS = [f"m{i:02d}" for i in range(1, 13)]


def upgrade():
    op.create_table(
        "budgets",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("name_key", sa.String(length=200), nullable=False),
        sa.Column("starts_on", sa.Date(), nullable=False),
        sa.Column("approved_at", sa.DateTime(), nullable=True),
        sa.Column("approved_by_email", sa.String(length=254), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_budgets")),
    )
    op.create_index("uq_budgets_name_key", "budgets", ["name_key"], unique=True)
    op.create_index("ix_budgets_starts_on_id", "budgets", ["starts_on", "id"])
    op.create_table(
        "budget_lines",
        sa.Column("budget_id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        *[sa.Column(name, sa.BigInteger(), nullable=False) for name in MONTHS],
        sa.ForeignKeyConstraint(
            ["budget_id"],
            ["budgets.id"],
            name=op.f("fk_budget_lines_budget_id_budgets"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_budget_lines_account_id_accounts"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("budget_id", "account_id", name=op.f("pk_budget_lines")),
    )
    op.create_index("ix_budget_lines_account_id", "budget_lines", ["account_id"])


def downgrade():
    op.drop_index("ix_budget_lines_account_id", table_name="budget_lines")
    op.drop_table("budget_lines")
    op.drop_index("ix_budgets_starts_on_id", table_name="budgets")
    op.drop_index("uq_budgets_name_key", table_name="budgets")
    op.drop_table("budgets")
