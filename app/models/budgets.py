"""Budgets: a named plan for twelve consecutive months (services/ledger/budgets.py;
compared with actuals in services/ledger/budget_actuals.py).

A Budget starts on the first day of a month and covers twelve months; it is a draft
while approved_at is null, and frozen once approved (a revision is a new budget
based on it). Its name is unique after normalisation, as account names are
(name_key). Each BudgetLine holds one income or expense account's twelve monthly
figures in cents, sign-adjusted as reports show them, in columns m01..m12 (m01 is
the month starting on starts_on): one row per account, read in one index lookup
when an income statement is compared with the budget.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, Date, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from ..extensions import Model
from .types import UTCDateTime

MONTH_COLUMNS = tuple(f"m{i:02d}" for i in range(1, 13))


class Budget(Model):
    __tablename__ = "budgets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    name_key: Mapped[str] = mapped_column(String(200), nullable=False)
    starts_on: Mapped[date] = mapped_column(Date, nullable=False)
    approved_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    approved_by_email: Mapped[str | None] = mapped_column(String(254), nullable=True)

    __table_args__ = (
        Index("uq_budgets_name_key", "name_key", unique=True),
        Index("ix_budgets_starts_on_id", "starts_on", "id"),
    )


class BudgetLine(Model):
    __tablename__ = "budget_lines"

    budget_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("budgets.id", ondelete="CASCADE"), primary_key=True
    )
    account_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("accounts.id", ondelete="RESTRICT"), primary_key=True
    )
    m01: Mapped[int] = mapped_column(BigInteger, nullable=False)
    m02: Mapped[int] = mapped_column(BigInteger, nullable=False)
    m03: Mapped[int] = mapped_column(BigInteger, nullable=False)
    m04: Mapped[int] = mapped_column(BigInteger, nullable=False)
    m05: Mapped[int] = mapped_column(BigInteger, nullable=False)
    m06: Mapped[int] = mapped_column(BigInteger, nullable=False)
    m07: Mapped[int] = mapped_column(BigInteger, nullable=False)
    m08: Mapped[int] = mapped_column(BigInteger, nullable=False)
    m09: Mapped[int] = mapped_column(BigInteger, nullable=False)
    m10: Mapped[int] = mapped_column(BigInteger, nullable=False)
    m11: Mapped[int] = mapped_column(BigInteger, nullable=False)
    m12: Mapped[int] = mapped_column(BigInteger, nullable=False)

    __table_args__ = (Index("ix_budget_lines_account_id", "account_id"),)
