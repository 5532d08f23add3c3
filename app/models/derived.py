"""Derived tables: figures computed from the entries, never written by the application.

account_day_balances holds, per account and day, the sum of amount_cents of the
entries of transactions that occurred on that day; account_month_balances the
same per month (keyed by the first day of the month). Triggers created by the
migration 0002_issue7_day_balances keep both in step with every insert, update
and delete of entries and transactions, inside the same database transaction.
Reports read them (services/ledger/reports.py) so that no report scans the ledger;
`ledger-service check` recomputes them from the entries (services/ledger/derived.py).

The `derived` marker in `info` is relied on by backup/restore: tables carrying it
are skipped on backup, and the triggers rebuild them when entries are restored.
A missing row means 0; a row may hold 0 after deletions.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import BigInteger, Date, ForeignKey, Index, Integer
from sqlalchemy.orm import Mapped, mapped_column

from ..extensions import Model


class AccountDayBalance(Model):
    __tablename__ = "account_day_balances"

    day: Mapped[date] = mapped_column(Date, primary_key=True)
    account_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    )
    cents: Mapped[int] = mapped_column(BigInteger, nullable=False)

    __table_args__ = (
        # One account's active days, newest first: the account register (migration 0009).
        Index("ix_account_day_balances_account_day", "account_id", "day"),
        {"info": {"derived": True}, "sqlite_with_rowid": False},
    )


class AccountMonthBalance(Model):
    __tablename__ = "account_month_balances"

    month: Mapped[date] = mapped_column(Date, primary_key=True)  # first day of the month
    account_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    )
    cents: Mapped[int] = mapped_column(BigInteger, nullable=False)

    __table_args__ = ({"info": {"derived": True}, "sqlite_with_rowid": False},)
