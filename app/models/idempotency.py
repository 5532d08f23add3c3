"""Idempotency keys: the first successful answer to a keyed write, kept for replays.

One row per (user, key): the fingerprint of the request it answered (SHA-256 of the
operation and the canonical JSON of the body), the answer's status and JSON body,
and when it was first used. Rows older than the replay window are deleted as new
keys arrive (services/ledger/idempotency.py). A user's keys go with the user.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from ..extensions import Model
from .ledger import BigId
from .types import UTCDateTime


class IdempotencyKey(Model):
    __tablename__ = "idempotency_keys"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False)
    key: Mapped[str] = mapped_column(String(255), nullable=False)
    fingerprint: Mapped[str] = mapped_column(String(64), nullable=False)
    # Null only inside the unit of work that claimed the key (never committed so).
    status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    answer_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)

    __table_args__ = (
        UniqueConstraint("user_id", "key"),
        Index("ix_idempotency_keys_created_at", "created_at"),
    )
