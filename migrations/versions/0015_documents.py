"""documents: receipts and other evidence stored with the books

One table, `documents`: the bytes (bytea / BLOB) with their type, size, SHA-256,
filename, upload time and uploader, and the transaction they are attached to
(null when detached: deleting a transaction sets it to null, ON DELETE SET NULL,
so the evidence survives an edit). See app/models/documents.py.

Revision ID: 0015_documents
Revises: 0011_audit_sealing
"""

import sqlalchemy as sa
from alembic import op

revision = "0015_documents"
down_revision = "0014_budgets"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade():
    op.create_table(
        "documents",
        sa.Column("id", BigId, primary_key=True),
        sa.Column(
            "transaction_id",
            BigId,
            sa.ForeignKey("transactions.id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.Column("filename", sa.String(200), nullable=False),
        sa.Column("content_type", sa.String(64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("uploaded_at", sa.DateTime(), nullable=False),
        sa.Column(
            "uploaded_by",
            sa.Integer(),
            sa.ForeignKey("users.id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.Column("content_bytes", sa.LargeBinary(), nullable=False),
    )
    op.create_index("ix_documents_transaction_id", "documents", ["transaction_id", "id"])
    op.create_index("ix_documents_uploaded_by", "documents", ["uploaded_by"])


def downgrade():
    op.drop_index("ix_documents_uploaded_by", table_name="documents")
    op.drop_index("ix_documents_transaction_id", table_name="documents")
    op.drop_table("documents")
