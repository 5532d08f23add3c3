"""Client ID metadata documents: client ids up to 2,000 characters, application_type

A client ID metadata document's client id is its URL (up to 2,000 characters), so
oauth_clients.id and every column naming a client (authorization_codes, tokens,
device_records, device_starts) widen from 64 to 2,000 characters.
oauth_client_documents keeps the last usable copy of each fetched document with its
HTTP-caching expiry (services/oauth/metadata_documents.py). oauth_clients.application_type
records RFC 7591's `application_type` (`native`, the default, or `web`).

PostgreSQL widens the columns in place (varchar to a longer varchar rewrites nothing).
SQLite cannot alter a column, and with foreign keys enforced a referenced table
cannot be dropped and rebuilt (the implicit DELETE would cascade or be refused), so
the new oauth_clients is built beside the old one, each referencing table is rebuilt
(batch mode) pointing at it, the old table (now referenced by nobody) is dropped, and
the new one takes its name: SQLite rewrites the references on that rename.

Downgrade deletes the clients whose id no longer fits (metadata-document clients)
together with their codes, tokens and device records.

Revision ID: 0006_cimd_client_ids
Revises: 0005_device_starts
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_cimd_client_ids"
down_revision = "0005_device_starts"
branch_labels = None
depends_on = None

WIDE = 2000
NARROW = 64
# (table, foreign key name, ON DELETE) of every column naming a client.
REFERENCING = (
    ("authorization_codes", "fk_authorization_codes_client_id_oauth_clients", "RESTRICT"),
    ("device_records", "fk_device_records_client_id_oauth_clients", "CASCADE"),
    ("device_starts", "fk_device_starts_client_id_oauth_clients", "CASCADE"),
    ("tokens", "fk_tokens_client_id_oauth_clients", "RESTRICT"),
)
CLIENT_COLUMNS = "id, name, dynamic, redirect_uris, created_at, first_used_at, last_used_at"


def _clients_table(name: str, width: int, with_application_type: bool) -> None:
    columns = [
        sa.Column("id", sa.String(length=width), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("dynamic", sa.Boolean(), nullable=False),
        sa.Column("redirect_uris", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("first_used_at", sa.DateTime(), nullable=True),
        sa.Column("last_used_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_oauth_clients"),
    ]
    if with_application_type:
        columns += [
            sa.Column(
                "application_type", sa.String(length=16), server_default="native", nullable=False
            ),
            sa.CheckConstraint(
                "application_type IN ('native', 'web')", name="ck_oauth_clients_application_type"
            ),
        ]
    op.create_table(name, *columns)


def _rebuild_sqlite(width: int, with_application_type: bool) -> None:
    """SQLite: rebuild oauth_clients and its referencing tables at the new width."""
    _clients_table("oauth_clients_new", width, with_application_type)
    op.execute(
        f"INSERT INTO oauth_clients_new ({CLIENT_COLUMNS}) "
        f"SELECT {CLIENT_COLUMNS} FROM oauth_clients"
    )
    for table, fk_name, on_delete in REFERENCING:
        with op.batch_alter_table(table, recreate="always") as batch:
            batch.drop_constraint(fk_name, type_="foreignkey")
            batch.alter_column("client_id", type_=sa.String(length=width), existing_nullable=False)
            batch.create_foreign_key(
                fk_name, "oauth_clients_new", ["client_id"], ["id"], ondelete=on_delete
            )
    op.drop_table("oauth_clients")  # referenced by nobody now
    op.rename_table("oauth_clients_new", "oauth_clients")  # references follow the rename


def _alter_postgresql(width: int) -> None:
    op.alter_column("oauth_clients", "id", type_=sa.String(length=width), existing_nullable=False)
    for table, _, _ in REFERENCING:
        op.alter_column(table, "client_id", type_=sa.String(length=width), existing_nullable=False)


def upgrade():
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite(WIDE, with_application_type=True)
    else:
        _alter_postgresql(WIDE)
        op.add_column(
            "oauth_clients",
            sa.Column(
                "application_type", sa.String(length=16), server_default="native", nullable=False
            ),
        )
        op.create_check_constraint(
            "ck_oauth_clients_application_type",
            "oauth_clients",
            "application_type IN ('native', 'web')",
        )
    op.create_table(
        "oauth_client_documents",
        sa.Column("url", sa.String(length=WIDE), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("fetched_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["url"],
            ["oauth_clients.id"],
            name="fk_oauth_client_documents_url_oauth_clients",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("url", name="pk_oauth_client_documents"),
    )


def downgrade():
    op.drop_table("oauth_client_documents")
    too_long = f"(SELECT id FROM oauth_clients WHERE length(id) > {NARROW})"
    for table, _, _ in REFERENCING:
        op.execute(f"DELETE FROM {table} WHERE client_id IN {too_long}")
    op.execute(f"DELETE FROM oauth_clients WHERE length(id) > {NARROW}")
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite(NARROW, with_application_type=False)
    else:
        op.drop_constraint("ck_oauth_clients_application_type", "oauth_clients", type_="check")
        op.drop_column("oauth_clients", "application_type")
        _alter_postgresql(NARROW)
