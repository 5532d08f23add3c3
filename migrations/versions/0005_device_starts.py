"""device_starts: the rate of device authorization requests per client and address

`POST /oauth/device_authorization` is open; each accepted request is noted here
(client, caller address, time) so that at most 10 per client and address are
accepted in any 10 minutes, across processes (services/oauth/device.py). Rows
older than the window are deleted by the client's next request and go with their
client (ON DELETE CASCADE).

Revision ID: 0005_device_starts
Revises: 0004_entries_listing_index
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_device_starts"
down_revision = "0004_entries_listing_index"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "device_starts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("client_id", sa.String(length=64), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["client_id"],
            ["oauth_clients.id"],
            name=op.f("fk_device_starts_client_id_oauth_clients"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_device_starts")),
    )
    op.create_index(
        "ix_device_starts_client_address", "device_starts", ["client_id", "address", "created_at"]
    )


def downgrade():
    op.drop_index("ix_device_starts_client_address", table_name="device_starts")
    op.drop_table("device_starts")
