"""Documents (receipts, invoices, vouchers) kept with the books, bytes and all.

A document's bytes live in the database (bytea on PostgreSQL, BLOB on SQLite), so a
backup, a restore and a move between stores carry them with the books, and `verify`
can recompute their SHA-256 against the audit trail (docs/ledger.md, "Receipts").

The bytes are rows of document_chunks, (document_id, seq, chunk_bytes) of at most
CHUNK_BYTES each, written once per chunk and read a slice at a time (app/store/
documents.py): storing a document writes each byte once (until migration 0019 it was
one column appended to a megabyte at a time, which PostgreSQL rewrote whole on each
append: 55 MiB of table and more WAL for a 10 MiB file).

transaction_id is null when the document is detached: deleting a transaction sets it
to null (ON DELETE SET NULL) instead of deleting the evidence, so an edit (post the
replacement, delete the original) can move it onto the replacement.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from ..extensions import Model
from .ledger import BigId
from .types import UTCDateTime

FILENAME_MAX = 200
CHUNK_BYTES = 1024 * 1024  # the largest chunk row (app/store/documents.py writes them)


class Document(Model):
    __tablename__ = "documents"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    transaction_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("transactions.id", ondelete="SET NULL"), nullable=True
    )
    filename: Mapped[str] = mapped_column(String(FILENAME_MAX), nullable=False)
    content_type: Mapped[str] = mapped_column(String(64), nullable=False)
    size: Mapped[int] = mapped_column(BigInteger, nullable=False)
    sha256: Mapped[str] = mapped_column(String(64), nullable=False)
    uploaded_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    uploaded_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )

    __table_args__ = (
        # A transaction's documents in id order, and document_count per listed row.
        Index("ix_documents_transaction_id", "transaction_id", "id"),
        Index("ix_documents_uploaded_by", "uploaded_by"),
        # Before migration 0019 a row held the bytes (content_bytes): a backup of such
        # books reads and a restore writes them one at a time
        # (services/interchange/backup.py, restore.py).
        {"info": {"large_rows": True}},
    )


class DocumentChunk(Model):
    """One slice of a document's bytes: seq 0, 1, ... in order, each CHUNK_BYTES but
    the last; deleted with its document."""

    __tablename__ = "document_chunks"

    document_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    chunk_bytes: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)

    # Rows of up to CHUNK_BYTES: read and written one at a time by backup and restore.
    __table_args__ = ({"info": {"large_rows": True}},)
