"""schedules and their occurrences that are no longer open (docs/schedules.md)

`schedules`: an amount expected between two accounts on the dates of an RFC 5545
recurrence rule. `schedule_occurrences`: one row per occurrence met, posted, skipped or
reopened; its primary key (schedule_id, occurs_on) makes a second posting of the same
occurrence fail, whichever process tries it.

Revision ID: 0024_schedules
Revises: 0023_books_currency
"""

import sqlalchemy as sa
from alembic import op

revision = "0024_schedules"
down_revision = "0023_books_currency"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade():
    op.create_table(
        "schedules",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("name_key", sa.String(200), nullable=False, unique=True),
        sa.Column(
            "account_id",
            sa.Integer(),
            sa.ForeignKey("accounts.id", ondelete="RESTRICT"),
            nullable=False,
        ),
        sa.Column(
            "counter_account_id",
            sa.Integer(),
            sa.ForeignKey("accounts.id", ondelete="RESTRICT"),
            nullable=False,
        ),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
        sa.Column("rrule", sa.String(500), nullable=False),
        sa.Column("starts_on", sa.Date(), nullable=False),
        sa.Column("weekend", sa.String(6), nullable=False),
        sa.Column("match_text", sa.String(200), nullable=True),
        sa.Column("tolerance_cents", sa.BigInteger(), nullable=False),
        sa.Column("window_days", sa.Integer(), nullable=False),
        sa.Column("mode", sa.String(6), nullable=False),
        sa.Column("post_from", sa.Date(), nullable=True),
        sa.Column("active", sa.Boolean(), nullable=False, server_default=sa.true()),
        sa.Column(
            "created_by",
            sa.Integer(),
            sa.ForeignKey("users.id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.CheckConstraint("weekend IN ('none', 'before', 'after')", name="schedule_weekend"),
        sa.CheckConstraint("mode IN ('expect', 'post')", name="schedule_mode"),
    )
    op.create_index("ix_schedules_account_id", "schedules", ["account_id"])
    op.create_index("ix_schedules_counter_account_id", "schedules", ["counter_account_id"])
    op.create_index("ix_schedules_created_by", "schedules", ["created_by"])
    op.create_table(
        "schedule_occurrences",
        sa.Column(
            "schedule_id",
            sa.Integer(),
            sa.ForeignKey("schedules.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("occurs_on", sa.Date(), primary_key=True),
        sa.Column("status", sa.String(7), nullable=False),
        sa.Column(
            "transaction_id",
            BigId,
            sa.ForeignKey("transactions.id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.CheckConstraint(
            "status IN ('met', 'posted', 'skipped', 'open')", name="occurrence_status"
        ),
    )
    op.create_index(
        "ix_schedule_occurrences_transaction", "schedule_occurrences", ["transaction_id"]
    )


def downgrade():
    op.drop_table("schedule_occurrences")
    op.drop_table("schedules")
