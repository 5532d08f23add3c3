"""Bank statements held for review, their lines, and the person's filing rules.

A Statement is one bank statement as uploaded (docs/statements.md): the file's bytes
with their SHA-256 (so `verify` can recompute them against the trail), what the
reader found (period, currency, balances), and the account it belongs to. Its
StatementLines keep each line's reading and its status (duplicate, match, new as
decided at upload; posted, matched, ignored after the person acts) with the
transaction it names. Deleting a statement deletes its lines (ON DELETE CASCADE);
the transactions they posted or matched stay, and their entries keep the bank's
reference (entries.bank_ref, migration 0020), so a second upload of the same file
finds them as duplicates.

A Rule files lines: its conditions (canonical JSON) and the counter account.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    true,
)
from sqlalchemy.orm import Mapped, deferred, mapped_column

from ..extensions import Model
from .ledger import BigId
from .types import UTCDateTime

LINE_STATUSES = ("duplicate", "match", "new", "posted", "matched", "ignored")


class Statement(Model):
    __tablename__ = "statements"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="RESTRICT"), nullable=False
    )
    format: Mapped[str] = mapped_column(String(16), nullable=False)
    bank_account: Mapped[str | None] = mapped_column(String(200), nullable=True)
    currency: Mapped[str | None] = mapped_column(String(16), nullable=True)
    period_from: Mapped[date | None] = mapped_column(Date, nullable=True)
    period_to: Mapped[date | None] = mapped_column(Date, nullable=True)
    opening_balance_cents: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    closing_balance_cents: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    closing_balance_on: Mapped[date | None] = mapped_column(Date, nullable=True)
    size: Mapped[int] = mapped_column(BigInteger, nullable=False)
    sha256: Mapped[str] = mapped_column(String(64), nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    # Never loaded with the row: read on its own (GET /statements/{id}/file, verify).
    content_bytes: Mapped[bytes] = deferred(mapped_column(LargeBinary, nullable=False))

    __table_args__ = (
        Index("ix_statements_account_id", "account_id", "id"),
        Index("ix_statements_created_by", "created_by"),
        # Rows of up to MAX_STATEMENT_BYTES: a backup reads and a restore writes them
        # one at a time (services/interchange/backup.py, restore.py).
        {"info": {"large_rows": True}},
    )


class StatementLine(Model):
    __tablename__ = "statement_lines"

    statement_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("statements.id", ondelete="CASCADE"), primary_key=True
    )
    line_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    booked_on: Mapped[date] = mapped_column(Date, nullable=False)
    amount_cents: Mapped[int] = mapped_column(BigInteger, nullable=False)
    payee: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The payee as suggestions compare it (case-folded, inner spaces collapsed).
    payee_key: Mapped[str | None] = mapped_column(Text, nullable=True)
    memo: Mapped[str | None] = mapped_column(Text, nullable=True)
    bank_ref: Mapped[str | None] = mapped_column(Text, nullable=True)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    transaction_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("transactions.id", ondelete="SET NULL"), nullable=True
    )

    __table_args__ = (
        CheckConstraint(
            "status IN ('duplicate', 'match', 'new', 'posted', 'matched', 'ignored')",
            name="line_status",
        ),
        # History suggestions: the lines posted from an account's statements, by payee.
        # A hash index on PostgreSQL: a btree entry is at most 2,704 bytes, less than a
        # payee of 2,000 characters may take (migration 0022).
        Index("ix_statement_lines_payee", "payee_key", postgresql_using="hash"),
        Index("ix_statement_lines_transaction", "transaction_id"),
    )


class Rule(Model):
    __tablename__ = "rules"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    name_key: Mapped[str] = mapped_column(String(200), nullable=False, unique=True)
    priority: Mapped[int] = mapped_column(BigInteger, nullable=False)
    account_id: Mapped[int | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="RESTRICT"), nullable=True
    )
    conditions: Mapped[str] = mapped_column(Text, nullable=False)
    counter_account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="RESTRICT"), nullable=False
    )
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    active: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=true())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)

    __table_args__ = (
        Index("ix_rules_priority", "priority", "id"),
        Index("ix_rules_account_id", "account_id"),
        Index("ix_rules_counter_account_id", "counter_account_id"),
    )
