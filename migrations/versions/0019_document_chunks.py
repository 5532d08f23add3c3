"""document chunks: a document's bytes as rows written once, not one column appended to

Until now a document's bytes were one column, documents.content_bytes, filled a
megabyte at a time; on PostgreSQL each `content_bytes || chunk` wrote the whole value
again (a 10 MiB upload grew the database by about 57 MiB and wrote about 74 MiB of
WAL). Now they are rows of `document_chunks` (document_id, seq, chunk_bytes), at most
1 MiB each, each written once (app/store/documents.py).

Upgrade: the table, every stored document's bytes cut into it (in the database, one
statement on each store), then content_bytes dropped (plain DROP COLUMN on both
stores, SQLite >= 3.35: a batch copy of documents would be a second table of every
byte). Downgrade: content_bytes back, each document's chunks joined into it one
document at a time, then the table dropped.

Revision ID: 0019_document_chunks
Revises: 0018_posting_triggers
"""

import sqlalchemy as sa
from alembic import op

revision = "0019_document_chunks"
down_revision = "0018_posting_triggers"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
CHUNK = 1024 * 1024

_CUT = {
    "postgresql": (
        "INSERT INTO document_chunks (document_id, seq, chunk_bytes)"
        " SELECT d.id, n, substring(d.content_bytes FROM n * {chunk} + 1 FOR {chunk})"
        " FROM documents d CROSS JOIN LATERAL"
        " generate_series(0, (length(d.content_bytes) - 1) / {chunk}) AS n"
    ),
    "sqlite": (
        "INSERT INTO document_chunks (document_id, seq, chunk_bytes)"
        " WITH RECURSIVE pieces(document_id, seq) AS ("
        " SELECT id, 0 FROM documents WHERE length(content_bytes) > 0"
        " UNION ALL SELECT p.document_id, p.seq + 1 FROM pieces p"
        " JOIN documents d ON d.id = p.document_id"
        " WHERE (p.seq + 1) * {chunk} < length(d.content_bytes))"
        " SELECT p.document_id, p.seq, substr(d.content_bytes, p.seq * {chunk} + 1, {chunk})"
        " FROM pieces p JOIN documents d ON d.id = p.document_id"
    ),
}


def upgrade():
    op.create_table(
        "document_chunks",
        sa.Column(
            "document_id",
            BigId,
            sa.ForeignKey("documents.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("chunk_bytes", sa.LargeBinary(), nullable=False),
    )
    dialect = op.get_bind().dialect.name
    op.execute(_CUT["postgresql" if dialect == "postgresql" else "sqlite"].format(chunk=CHUNK))
    op.execute("ALTER TABLE documents DROP COLUMN content_bytes")


def downgrade():
    bind = op.get_bind()
    op.add_column(
        "documents",
        sa.Column("content_bytes", sa.LargeBinary(), nullable=False, server_default=sa.text("''")),
    )
    documents = sa.table("documents", sa.column("id"), sa.column("content_bytes"))
    ids = [row[0] for row in bind.execute(sa.text("SELECT id FROM documents ORDER BY id"))]
    for doc_id in ids:  # one document's bytes in memory at a time
        pieces = bind.execute(
            sa.text("SELECT chunk_bytes FROM document_chunks WHERE document_id = :d ORDER BY seq"),
            {"d": doc_id},
        )
        joined = b"".join(bytes(piece) for (piece,) in pieces)
        bind.execute(
            documents.update().where(documents.c.id == doc_id).values(content_bytes=joined)
        )
    if bind.dialect.name == "postgresql":
        op.alter_column("documents", "content_bytes", server_default=None)
    op.drop_table("document_chunks")
