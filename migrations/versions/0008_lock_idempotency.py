"""lock date and idempotency keys (issue 19)

settings.locked_through: the books' lock date (null: unlocked). Nothing dated on or
before it can be posted, deleted, cleared or reconciled (services/ledger/lock.py).

idempotency_keys: the first successful answer to a POST /transactions, POST /accounts
or record_transaction call that carried a key, per user, kept at least 24 hours so a
retry gets the same answer and changes nothing (services/ledger/idempotency.py).

Revision ID: 0008_lock_idempotency
Revises: 0005_device_starts
"""

import sqlalchemy as sa
from alembic import op

revision = "0008_lock_idempotency"
down_revision = "0007_audit_trail"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade():
    op.add_column("settings", sa.Column("locked_through", sa.Date(), nullable=True))
    op.create_table(
        "idempotency_keys",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("status", sa.Integer(), nullable=True),
        sa.Column("answer_json", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_idempotency_keys_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_idempotency_keys")),
        sa.UniqueConstraint("user_id", "key", name=op.f("uq_idempotency_keys_user_id")),
    )
    op.create_index("ix_idempotency_keys_created_at", "idempotency_keys", ["created_at"])


def downgrade():
    op.drop_index("ix_idempotency_keys_created_at", table_name="idempotency_keys")
    op.drop_table("idempotency_keys")
    # Plain DROP COLUMN on both stores (SQLite >= 3.35): a batch copy of the settings
    # table could lose its CHECK constraints.
    op.execute("ALTER TABLE settings DROP COLUMN locked_through")
