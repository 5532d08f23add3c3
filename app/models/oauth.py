"""OAuth state: clients, bearer tokens (access and refresh), authorization codes, device records.

Client ids are up to 2,000 characters (CLIENT_ID_LENGTH): a client ID metadata document's id
is its URL. Every column naming a client has that width.

Every token and code is stored only as the SHA-256 hex digest of what was handed out.
Tokens form families: a refresh token records its parent; the access token issued
with a refresh token records that refresh token as its parent; `family_id` is the
digest of the family's root (the first refresh token of an authorization grant).
An administratively minted token is kind 'access' with no parent.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from ..extensions import Model
from .types import UTCDateTime

CLIENT_ID_LENGTH = 2000
APPLICATION_TYPES = ("native", "web")


class OAuthClient(Model):
    __tablename__ = "oauth_clients"

    # "dyn_..." when registered, the document's URL for a metadata-document client.
    id: Mapped[str] = mapped_column(String(CLIENT_ID_LENGTH), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    dynamic: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    redirect_uris: Mapped[str] = mapped_column(Text, nullable=False)  # JSON array
    application_type: Mapped[str] = mapped_column(
        String(16), nullable=False, default="native", server_default="native"
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    first_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    __table_args__ = (
        CheckConstraint("application_type IN ('native', 'web')", name="application_type"),
    )


class ClientDocument(Model):
    """The last usable copy of a client ID metadata document (services/oauth/metadata_documents.py).

    One row per document URL, beside the client's row in oauth_clients (same id, which
    gives codes, tokens and device records their foreign key). `document` is the cleaned
    metadata as JSON; `expires_at` is when HTTP caching says to fetch it again (equal to
    `fetched_at` for no-store). A fetch that fails deletes the row: while no row exists
    the client is unknown. Goes with its client (ON DELETE CASCADE).
    """

    __tablename__ = "oauth_client_documents"

    url: Mapped[str] = mapped_column(
        ForeignKey("oauth_clients.id", ondelete="CASCADE"), primary_key=True
    )
    document: Mapped[str] = mapped_column(Text, nullable=False)
    fetched_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)


class DocumentFailure(Model):
    """A client ID metadata document URL whose last fetch failed, until `retry_at`.

    While `retry_at` lies ahead the URL answers as an unknown client without a fetch
    (services/oauth/metadata_documents.py); kept in the database so every process
    behaves as one. No foreign key: the URL names no stored client. Rows past their
    `retry_at` are deleted when the next failure is written, and at most MAX_FAILURES
    are kept (the oldest go first).
    """

    __tablename__ = "oauth_document_failures"

    url: Mapped[str] = mapped_column(String(CLIENT_ID_LENGTH), primary_key=True)
    retry_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)

    __table_args__ = (Index("ix_oauth_document_failures_retry_at", "retry_at"),)


class Token(Model):
    __tablename__ = "tokens"

    # SHA-256 hex digest of the token; also the Connection id in GET /auth/tokens.
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False)
    client_id: Mapped[str] = mapped_column(
        ForeignKey("oauth_clients.id", ondelete="RESTRICT"), nullable=False
    )
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    label: Mapped[str] = mapped_column(String(200), nullable=False, default="")
    audience: Mapped[str] = mapped_column(String(400), nullable=False)
    parent_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    family_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    retired_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    __table_args__ = (
        CheckConstraint("kind IN ('access', 'refresh')", name="kind"),
        Index("ix_tokens_user_id", "user_id"),
        Index("ix_tokens_parent_id", "parent_id"),
        Index("ix_tokens_family_id", "family_id"),
        Index("ix_tokens_client_id", "client_id"),
    )


class AuthorizationCode(Model):
    __tablename__ = "authorization_codes"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # digest of the code
    client_id: Mapped[str] = mapped_column(
        ForeignKey("oauth_clients.id", ondelete="RESTRICT"), nullable=False
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), nullable=False)
    redirect_uri: Mapped[str] = mapped_column(Text, nullable=False)
    code_challenge: Mapped[str] = mapped_column(String(200), nullable=False)
    resource: Mapped[str] = mapped_column(String(400), nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)

    __table_args__ = (Index("ix_authorization_codes_client_id", "client_id"),)


class DeviceRecord(Model):
    __tablename__ = "device_records"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # digest of device_code
    user_code: Mapped[str] = mapped_column(String(9), nullable=False, unique=True)
    client_id: Mapped[str] = mapped_column(
        ForeignKey("oauth_clients.id", ondelete="CASCADE"), nullable=False
    )
    resource: Mapped[str] = mapped_column(String(400), nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="pending")
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), nullable=True
    )
    # Digest of the session that approved it (re-approval by that session is free).
    decided_by_session: Mapped[str | None] = mapped_column(String(64), nullable=True)
    interval: Mapped[int] = mapped_column(Integer, nullable=False, default=5)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    last_poll_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    __table_args__ = (
        CheckConstraint("status IN ('pending', 'approved', 'declined')", name="status"),
        Index("ix_device_records_client_id", "client_id"),
    )


class DeviceStart(Model):
    """One accepted device authorization request, kept for the rate window (10 minutes).

    `address` is the caller's address as the app sees it (after TRUSTED_PROXIES), an
    IPv6 address reduced to its /64 network. Rows older than the window are deleted
    by the next request of the same client, and with their client.
    """

    __tablename__ = "device_starts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    client_id: Mapped[str] = mapped_column(
        ForeignKey("oauth_clients.id", ondelete="CASCADE"), nullable=False
    )
    address: Mapped[str] = mapped_column(String(64), nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)

    __table_args__ = (
        Index("ix_device_starts_client_address", "client_id", "address", "created_at"),
    )
