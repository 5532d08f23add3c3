"""The audit trail: one hash-chained row per change to the books (issue 19).

audit_events is append-only: the service only ever INSERTs (services/ledger/audit/writing.py).
`object` holds the changed object as canonical JSON text and `at` whole seconds, so
the event a reader is served re-hashes to exactly the stored `hash` (docs/ledger.md
"What an event says").

audit_head is one row (id 1): the newest event's seq and hash. Whoever appends to
the chain locks it (SELECT ... FOR UPDATE on PostgreSQL; SQLite has one writer at a
time) to give the next seq without gaps. It is re-created from audit_events when
missing (a restore, a test reset), and `ledger-service verify` checks it against the
newest event, so a removed newest event is noticed.

audit_pending (PostgreSQL's write path, migration 0011): a change writes its event
here, in its own database transaction, without seq or hash; right after the commit
the event is sealed into audit_events (given the next seq and its hash, in the order
the pending rows were written) and its pending row deleted. So concurrent changes
never wait for each other's commit on the chain's head. SQLite appends to
audit_events directly (one writer at a time); its pending table stays empty except
after restoring a backup taken while an event was pending (sealed by the restore).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ..extensions import Model
from .ledger import BigId
from .oauth import CLIENT_ID_LENGTH
from .types import UTCDateTime


class _EventColumns:
    """What an event records besides seq and hash: one set of columns for the chain's
    events and the ones still waiting to join it."""

    at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    action: Mapped[str] = mapped_column(String(40), nullable=False)
    user_email: Mapped[str | None] = mapped_column(String(254), nullable=True)
    via: Mapped[str] = mapped_column(String(16), nullable=False)
    # As long as any OAuth client id (a metadata document's URL: migration 0011).
    client_id: Mapped[str | None] = mapped_column(String(CLIENT_ID_LENGTH), nullable=True)
    client_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    object: Mapped[str] = mapped_column(Text, nullable=False)


class AuditEvent(_EventColumns, Model):
    __tablename__ = "audit_events"

    seq: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=False)
    hash: Mapped[str] = mapped_column(String(64), nullable=False)

    __table_args__ = (
        # GET /audit?from=&to= (on at's date) and ?action=, both newest first.
        Index("ix_audit_events_at_seq", "at", "seq"),
        Index("ix_audit_events_action_seq", "action", "seq"),
    )


class AuditHead(Model):
    __tablename__ = "audit_head"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    seq: Mapped[int] = mapped_column(BigId, nullable=False)
    hash: Mapped[str] = mapped_column(String(64), nullable=False)

    __table_args__ = (CheckConstraint("id = 1", name="single_row"),)


class AuditPending(_EventColumns, Model):
    """An event written by a change, not yet sealed into the chain (see the module)."""

    __tablename__ = "audit_pending"

    # Sealing order: the order the events were written in (a change that depends on
    # another starts after it committed, so it always comes later).
    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    # The event's canonical JSON is text_before_object + object + ',"seq":' + seq +
    # text_after_seq (services/ledger/audit/writing.py writes the two texts).
    text_before_object: Mapped[str] = mapped_column(Text, nullable=False)
    text_after_seq: Mapped[str] = mapped_column(Text, nullable=False)
