"""The books: accounts, transactions, entries and the settings row.

Design overview
---------------
A Transaction is a dated, described header. Its Entries carry signed integer
cents against Accounts: a debit is positive, a credit negative. The entries of
one transaction always number at least two and sum to exactly zero.

That invariant is enforced three times, deliberately:
1. services.transactions validates every posting before it is written;
2. the store re-checks at commit: on PostgreSQL a DEFERRABLE INITIALLY DEFERRED
   constraint trigger raising SQLSTATE P0001; on SQLite triggers that note the
   touched transactions plus a check run by app.store just before COMMIT;
3. reports rely on it (all-time balances sum to zero; assets = liabilities + equity).

Deleting a transaction cascades to its entries (ON DELETE CASCADE). Removing a
user keeps their transactions with created_by set to NULL (ON DELETE SET NULL).
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
    String,
    Text,
    false,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from ..extensions import Model
from .types import UTCDateTime

ACCOUNT_KINDS = ("asset", "liability", "equity", "income", "expense")
BOOK_STYLES = ("club", "personal")

# BigInteger on PostgreSQL, INTEGER on SQLite (so it stays the rowid alias).
BigId = BigInteger().with_variant(Integer(), "sqlite")


class Account(Model):
    __tablename__ = "accounts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), nullable=False, unique=True)
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    # The name trimmed, case-folded, inner spaces collapsed (services.ledger.accounts.
    # name_key): unique, so two names that differ only so are refused by the database
    # even when two requests race (migration 0009).
    name_key: Mapped[str] = mapped_column(String(200), nullable=False, server_default="")
    archived: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=false())

    __table_args__ = (
        CheckConstraint(
            "kind IN ('asset', 'liability', 'equity', 'income', 'expense')", name="kind"
        ),
        Index("ix_accounts_kind_name", "kind", "name"),
        Index("uq_accounts_name_key", "name_key", unique=True),
    )


class Transaction(Model):
    __tablename__ = "transactions"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    occurred_on: Mapped[date] = mapped_column(Date, nullable=False)
    description: Mapped[str] = mapped_column(Text, nullable=False)
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)

    __table_args__ = (
        # Serves the listing order (occurred_on DESC, id DESC) and date windows.
        Index("ix_transactions_occurred_on_id", "occurred_on", "id"),
        Index("ix_transactions_created_by", "created_by"),
    )


class Entry(Model):
    __tablename__ = "entries"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    transaction_id: Mapped[int] = mapped_column(
        ForeignKey("transactions.id", ondelete="CASCADE"), nullable=False
    )
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="RESTRICT"), nullable=False
    )
    amount_cents: Mapped[int] = mapped_column(BigInteger, nullable=False)
    # Reconciliation marks (migration 0009): a reconciled entry is always cleared.
    cleared: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=false())
    reconciled: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=false())
    # The bank's reference of the statement line this entry was posted or matched from
    # (migration 0020; services/banking/statements.py), null for any other entry.
    bank_ref: Mapped[str | None] = mapped_column(Text, nullable=True)

    __table_args__ = (
        CheckConstraint("cleared OR NOT reconciled", name="reconciled_is_cleared"),
        # A transaction's entries in id order, with what a listing shows of them: an
        # index-only read (migration 0004).
        Index(
            "ix_entries_transaction_listing", "transaction_id", "id", "account_id", "amount_cents"
        ),
        # Covers the per-account sum without touching the table.
        Index("ix_entries_account_id_amount", "account_id", "transaction_id", "amount_cents"),
        # The cleared balance of an account reads only its cleared entries.
        Index(
            "ix_entries_cleared",
            "account_id",
            "amount_cents",
            postgresql_where=text("cleared"),
            sqlite_where=text("cleared"),
        ),
        # One bank line booked once (migration 0021): an account's entries hold a bank
        # reference with one amount at most once. Also a statement line's duplicate look-up.
        Index(
            "uq_entries_bank_ref",
            "account_id",
            "bank_ref",
            "amount_cents",
            unique=True,
            postgresql_where=text("bank_ref IS NOT NULL"),
            sqlite_where=text("bank_ref IS NOT NULL"),
        ),
    )


class Reconciliation(Model):
    """One bank statement an account was reconciled against (the history of statements)."""

    __tablename__ = "reconciliations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="RESTRICT"), nullable=False
    )
    statement_date: Mapped[date] = mapped_column(Date, nullable=False)
    closing_balance_cents: Mapped[int] = mapped_column(BigInteger, nullable=False)
    entry_count: Mapped[int] = mapped_column(Integer, nullable=False)
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)

    __table_args__ = (
        Index("ix_reconciliations_account_date", "account_id", "statement_date"),
        Index("ix_reconciliations_created_by", "created_by"),
    )


class Settings(Model):
    __tablename__ = "settings"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    book_style: Mapped[str] = mapped_column(String(16), nullable=False)
    # The lock date (services/ledger/lock.py): nothing dated on or before it changes.
    locked_through: Mapped[date | None] = mapped_column(Date, nullable=True)
    # The books' currency (services/ledger/settings.py, migration 0023): null until set.
    currency: Mapped[str | None] = mapped_column(String(3), nullable=True)

    __table_args__ = (
        CheckConstraint("id = 1", name="single_row"),
        CheckConstraint("book_style IN ('club', 'personal')", name="book_style"),
    )
