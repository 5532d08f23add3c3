"""cimd limits: a failed client ID metadata document fetch is remembered for 60 seconds

oauth_document_failures holds each document URL whose last fetch failed, with the
moment it may be fetched again (services/oauth/metadata_documents.py): until then the
URL answers as an unknown client without a fetch, in every process alike. No foreign
key (the URL names no stored client); the rows are short-lived and capped.

Revision ID: 0012_cimd_limits
Revises: 0011_audit_sealing
"""

import sqlalchemy as sa
from alembic import op

revision = "0012_cimd_limits"
down_revision = "0011_audit_sealing"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "oauth_document_failures",
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("retry_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("url", name="pk_oauth_document_failures"),
    )
    op.create_index("ix_oauth_document_failures_retry_at", "oauth_document_failures", ["retry_at"])


def downgrade():
    op.drop_index("ix_oauth_document_failures_retry_at", table_name="oauth_document_failures")
    op.drop_table("oauth_document_failures")
