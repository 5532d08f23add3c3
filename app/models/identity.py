"""People and their credentials: users, cookie sessions, passkeys, challenges, throttles.

Secrets are never stored raw: a session id is kept as its SHA-256 hex digest,
passwords as argon2 hashes.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from ..extensions import Model
from .types import UTCDateTime


class User(Model):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(254), nullable=False, unique=True)
    password_hash: Mapped[str] = mapped_column(String(255), nullable=False)
    # Opaque WebAuthn user handle (random bytes, never the email).
    webauthn_handle: Mapped[bytes] = mapped_column(LargeBinary(64), nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    last_seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)


class Session(Model):
    """A cookie session. `id` is the SHA-256 hex digest of the cookie value."""

    __tablename__ = "sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False)
    mfa_complete: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    # Fixed at creation and again at elevation; use never extends it.
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    # Failed device-code lookups/decisions (10 per session, no reset: docs/oauth.md
    # "Device authorization grant").
    device_attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)

    __table_args__ = (Index("ix_sessions_user_id", "user_id"),)


class WebAuthnChallenge(Model):
    """The one outstanding ceremony challenge of a session (single use, 5 minutes)."""

    __tablename__ = "webauthn_challenges"

    session_id: Mapped[str] = mapped_column(
        ForeignKey("sessions.id", ondelete="CASCADE", onupdate="CASCADE"), primary_key=True
    )
    purpose: Mapped[str] = mapped_column(String(16), nullable=False)  # register|authenticate
    challenge: Mapped[bytes] = mapped_column(LargeBinary(128), nullable=False)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)


class Passkey(Model):
    __tablename__ = "passkeys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False)
    # base64url (no padding) of the credential id, as browsers send it.
    credential_id: Mapped[str] = mapped_column(String(1400), nullable=False, unique=True)
    public_key: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)
    sign_count: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    name: Mapped[str] = mapped_column(String(100), nullable=False)
    transports: Mapped[str | None] = mapped_column(Text, nullable=True)  # JSON list
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    __table_args__ = (Index("ix_passkeys_user_id", "user_id"),)


class LoginThrottle(Model):
    """Failed-password bookkeeping per normalised email, whether or not the user exists."""

    __tablename__ = "login_throttles"

    email: Mapped[str] = mapped_column(String(254), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
