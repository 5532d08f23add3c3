"""Schedules: an amount expected between two accounts on the dates of a recurrence rule
(services/ledger/schedules.py; docs/schedules.md).

A Schedule's name is unique after normalisation, as account names are (name_key). Its
occurrences are computed from `rrule` and `starts_on`; only those that are no longer
open (met, posted, skipped) are stored, one ScheduleOccurrence row each, plus the
reopened ones (status `open`), which the service never posts again. The primary key
(schedule_id, occurs_on) is what makes "posted exactly once" hold across processes and
crashes: a second posting of the same occurrence fails on the key.
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
    true,
)
from sqlalchemy.orm import Mapped, mapped_column

from ..extensions import Model
from .ledger import BigId
from .types import UTCDateTime

WEEKENDS = ("none", "before", "after")
MODES = ("expect", "post")
OCCURRENCE_STATUSES = ("met", "posted", "skipped", "open")


class Schedule(Model):
    __tablename__ = "schedules"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    name_key: Mapped[str] = mapped_column(String(200), nullable=False, unique=True)
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="RESTRICT"), nullable=False
    )
    counter_account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="RESTRICT"), nullable=False
    )
    amount_cents: Mapped[int] = mapped_column(BigInteger, nullable=False)
    rrule: Mapped[str] = mapped_column(String(500), nullable=False)
    starts_on: Mapped[date] = mapped_column(Date, nullable=False)
    weekend: Mapped[str] = mapped_column(String(6), nullable=False)
    match_text: Mapped[str | None] = mapped_column(String(200), nullable=True)
    tolerance_cents: Mapped[int] = mapped_column(BigInteger, nullable=False)
    window_days: Mapped[int] = mapped_column(Integer, nullable=False)
    mode: Mapped[str] = mapped_column(String(6), nullable=False)
    post_from: Mapped[date | None] = mapped_column(Date, nullable=True)
    active: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=true())
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)

    __table_args__ = (
        CheckConstraint("weekend IN ('none', 'before', 'after')", name="schedule_weekend"),
        CheckConstraint("mode IN ('expect', 'post')", name="schedule_mode"),
        Index("ix_schedules_account_id", "account_id"),
        Index("ix_schedules_counter_account_id", "counter_account_id"),
        Index("ix_schedules_created_by", "created_by"),
    )


class ScheduleOccurrence(Model):
    __tablename__ = "schedule_occurrences"

    schedule_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("schedules.id", ondelete="CASCADE"), primary_key=True
    )
    occurs_on: Mapped[date] = mapped_column(Date, primary_key=True)
    status: Mapped[str] = mapped_column(String(7), nullable=False)
    transaction_id: Mapped[int | None] = mapped_column(
        BigId, ForeignKey("transactions.id", ondelete="SET NULL"), nullable=True
    )

    __table_args__ = (
        CheckConstraint("status IN ('met', 'posted', 'skipped', 'open')", name="occurrence_status"),
        Index("ix_schedule_occurrences_transaction", "transaction_id"),
    )
