"""Documents (receipts, invoices, vouchers) kept with the books, bytes and all.

A document's bytes live in the database (bytea on PostgreSQL, BLOB on SQLite), so a
backup, a restore and a move between stores carry them with the books, and `verify`
can recompute their SHA-256 against the audit trail (docs/ledger.md, "Receipts").

transaction_id is null when the document is detached: deleting a transaction sets it
to null (ON DELETE SET NULL) instead of deleting the evidence, so an edit (post the
replacement, delete the original) can move it onto the replacement.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, LargeBinary, String
from sqlalchemy.orm import Mapped, deferred, mapped_column

from ..extensions import Model
from .ledger import BigId
from .types import UTCDateTime

FILENAME_MAX = 200


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
    # Never loaded with the row: read on its own (one document at a time).
    content_bytes: Mapped[bytes] = deferred(mapped_column(LargeBinary, nullable=False))

    __table_args__ = (
        # A transaction's documents in id order, and document_count per listed row.
        Index("ix_documents_transaction_id", "transaction_id", "id"),
        Index("ix_documents_uploaded_by", "uploaded_by"),
        # Rows of up to MAX_DOCUMENT_BYTES: a backup reads and a restore writes them
        # one at a time (services/interchange/backup.py, restore.py).
        {"info": {"large_rows": True}},
    )
