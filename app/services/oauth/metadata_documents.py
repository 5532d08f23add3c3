"""Client ID metadata documents: a client whose id is the https URL of its own metadata.

docs/oauth.md "Client ID metadata documents" (after
draft-ietf-oauth-client-id-metadata-document). A `client_id` that is an https URL with a
path (not just "/"), at most 2,000 printable ASCII characters, with no user info, no
fragment, no whitespace and no dot segments, names a document. The document is usable
when, fetched as below, it is a JSON object whose `client_id` equals the URL exactly,
whose `redirect_uris`, `client_name` and `application_type` pass the registration rules
(clients.client_metadata), and which carries no client secret (every client here is
public).

The fetch (fetch(); no database work, so no transaction is held while it runs) is
document_fetch.download: https only, to a global address only (the SSRF guard), the
certificate verified, 5 seconds in all, at most 64 KiB of JSON, 200 only.

Caching (lifetime(); the copy lives in oauth_client_documents, shared by every
process): Cache-Control no-store, no-cache or max-age=0 means the copy is stale at
once (fetched again at its next use); max-age=N keeps it N seconds less any Age; else
Expires (less Date); else DEFAULT_LIFETIME (1 hour); never more than 24 hours.

A document that cannot be used is logged with the reason and makes the client unknown
(401 invalid_client where docs/oauth.md "Errors" says so); the answer never says why.

Limits (docs/oauth.md, "Client ID metadata documents"), so that no caller without a
credential can fill the disk or stall the API through fetches:
- Nothing is stored for a refused request: a usable document's client and copy are
  written in the request's own unit of work (keep()), which a refusal rolls back.
- A document listing more than 5 redirect URIs, or one longer than 2,000 characters,
  cannot be used (the registration rules, clients.check_redirect_uris).
- At most MAX_UNREFERENCED (100) document clients that no code, token or device record
  references are kept; past that the least recently used (last fetched or approved)
  is forgotten, and fetched again at its next use.
- A fetch holds one of FETCH_SLOTS (2) slots of the process; a request that finds both
  busy (or the same URL already being fetched) waits at most SLOT_WAIT_SECONDS and
  then answers as for an unusable document, so hosts that never answer cannot take
  every serving thread.
- A URL whose fetch failed answers as an unknown client, without a fetch, for
  FAILURE_MEMORY (60 seconds); the failure is kept in the database
  (oauth_document_failures), so every process honours it.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

from flask import current_app
from sqlalchemy import case, delete, exists, func, or_, select

from ...extensions import db
from ...json_provider import BodyNotJSON, parse_body
from ...models import (
    CLIENT_ID_LENGTH,
    AuthorizationCode,
    ClientDocument,
    DeviceRecord,
    DocumentFailure,
    OAuthClient,
    Token,
)
from ...store import dialect
from .. import clock
from .clients import DOCUMENT_PREFIX, client_metadata, printable_ascii, reserved_name
from .document_fetch import Unusable, download
from .errors import InvalidClient, OAuthError

log = logging.getLogger("app.oauth.metadata_documents")

MAX_URL_LENGTH = CLIENT_ID_LENGTH  # 2,000
DEFAULT_LIFETIME = timedelta(hours=1)
MAX_LIFETIME = timedelta(hours=24)
# Secret-based authentication cannot work for a document anyone can read (draft 4.1).
_SECRET_FIELDS = ("client_secret", "client_secret_expires_at")
_SECRET_METHODS = ("client_secret_post", "client_secret_basic", "client_secret_jwt")
FETCH_SLOTS = 2
SLOT_WAIT_SECONDS = 0.25
FAILURE_MEMORY = timedelta(seconds=60)
MAX_FAILURES = 1000
MAX_UNREFERENCED = 100
UNKNOWN = "unknown client_id"

# Per process: the serving threads a fetch may hold, and the URLs being fetched now.
_slots = threading.BoundedSemaphore(FETCH_SLOTS)
_in_flight: set[str] = set()
_in_flight_lock = threading.Lock()


class Busy(Exception):
    """No fetch was made: both slots are taken, or the URL is being fetched already.
    Answered as an unusable document, but not remembered as a failure."""


@dataclass(frozen=True)
class Fetched:
    metadata: dict  # {client_name, redirect_uris, application_type}, cleaned
    lifetime: timedelta


# --- which ids are documents ---------------------------------------------------------


def is_document_url(client_id) -> bool:
    """Whether this client id names a metadata document (shape only, no fetch)."""
    if not isinstance(client_id, str) or not client_id.startswith(DOCUMENT_PREFIX):
        return False
    if len(client_id) > MAX_URL_LENGTH or not printable_ascii(client_id):
        return False
    if " " in client_id or "#" in client_id or "\\" in client_id:
        return False
    try:
        parts = urlsplit(client_id)
        port = parts.port  # a malformed port raises ValueError
    except ValueError:
        return False
    if not parts.hostname or "@" in parts.netloc or port == 0:
        return False
    if parts.path in ("", "/"):
        return False
    # A dot segment, also percent-encoded (%2e, %2E: RFC 3986 6.2.2.2 decodes them).
    return not any(
        segment.lower().replace("%2e", ".") in (".", "..") for segment in parts.path.split("/")
    )


def needs_fetch(url: str) -> bool:
    """No stored copy of this document, or HTTP caching says it is stale.

    Without a fresh copy, a URL whose fetch failed less than FAILURE_MEMORY ago is an
    unknown client at once: 401 invalid_client, no fetch.
    """
    now = clock.now()
    row = db.session.get(ClientDocument, url)
    if row is not None and row.expires_at > now:
        return False
    failed = db.session.get(DocumentFailure, url)
    if failed is not None and failed.retry_at > now:
        raise InvalidClient(UNKNOWN)
    return True


# --- the fetch ---------------------------------------------------------------------


def fetch(url: str) -> Fetched | Unusable | Busy:
    """Fetch and check the document at `url`; never raises for the document's faults.

    Holds one of the process's FETCH_SLOTS while it runs; Busy when none comes free
    within SLOT_WAIT_SECONDS or another thread of the process is fetching this URL.
    """
    with _in_flight_lock:
        if url in _in_flight:
            return Busy("this document is being fetched by another request")
        _in_flight.add(url)
    try:
        if not _slots.acquire(timeout=SLOT_WAIT_SECONDS):
            log.warning("client metadata document %r not fetched: every fetch slot is busy", url)
            return Busy("every fetch slot is busy")
        try:
            return _fetch(url)
        finally:
            _slots.release()
    finally:
        with _in_flight_lock:
            _in_flight.discard(url)


def _fetch(url: str) -> Fetched | Unusable:
    try:
        headers, body = download(
            url, allow_private=bool(current_app.config.get("OAUTH_CIMD_ALLOW_PRIVATE"))
        )
        return Fetched(metadata=_check(url, body), lifetime=lifetime(headers, clock.now()))
    except Unusable as reason:
        log.warning("client metadata document %r cannot be used: %s", url, reason)
        return reason


# --- the document ------------------------------------------------------------------


def _check(url: str, body: bytes) -> dict:
    """The cleaned metadata of a usable document, else Unusable."""
    try:
        document = parse_body(body)
    except BodyNotJSON as exc:
        raise Unusable(f"the body is {exc.reason}") from exc
    if not isinstance(document, dict):
        raise Unusable("the body is not a JSON object")
    if document.get("client_id") != url:
        raise Unusable("its client_id is not the document's URL")
    if any(field in document for field in _SECRET_FIELDS):
        raise Unusable("it carries a client secret")
    if document.get("token_endpoint_auth_method") in _SECRET_METHODS:
        raise Unusable("it asks for a secret-based token_endpoint_auth_method")
    try:
        return client_metadata(document)
    except OAuthError as exc:
        raise Unusable(f"{exc.error}: {exc.description}") from exc


def lifetime(headers, now: datetime) -> timedelta:
    """How long a copy stays fresh, from the response's caching headers (capped at 24 h)."""
    directives: dict[str, str | None] = {}
    for line in headers.get_all("Cache-Control") or []:
        for item in line.split(","):
            name, sep, value = item.strip().partition("=")
            if name:
                directives[name.strip().lower()] = value.strip().strip('"') if sep else None
    if "no-store" in directives or "no-cache" in directives:
        return timedelta(0)
    if "max-age" in directives:
        value = directives["max-age"] or ""
        if not value.isdigit():
            return timedelta(0)  # RFC 9111 4.2.1: an invalid max-age means stale
        age = (headers.get("Age") or "").strip()
        seconds = int(value) - (int(age) if age.isdigit() else 0)
        return min(max(timedelta(seconds=seconds), timedelta(0)), MAX_LIFETIME)
    expires = headers.get("Expires")
    if expires is not None:
        try:
            until = parsedate_to_datetime(expires)
            sent = parsedate_to_datetime(headers["Date"]) if headers.get("Date") else now
            fresh = until - sent
        except (TypeError, ValueError, IndexError):
            return timedelta(0)  # RFC 9111 5.3: an invalid Expires means already expired
        return min(max(fresh, timedelta(0)), MAX_LIFETIME)
    return DEFAULT_LIFETIME


# --- the stored copy ---------------------------------------------------------------


def keep(url: str, outcome: Fetched) -> None:
    """Write a usable document's client and fresh copy into the request's unit of work.

    The caller commits it only when the request succeeds (a refusal rolls it back, so a
    refused request stores nothing). A name or redirect URIs that differ from the
    stored ones make the client new again (first_use: the consent page warns again).
    A name reserved for a first-party client makes the document unusable. Past
    MAX_UNREFERENCED unreferenced document clients, the least recently used go.
    """
    metadata = outcome.metadata
    if reserved_name(metadata["client_name"]):
        log.warning(
            "client metadata document %r cannot be used: client_name %r is reserved",
            url,
            metadata["client_name"],
        )
        forget(url)
        raise InvalidClient(UNKNOWN, commit=True)
    now = clock.now()
    client = {
        "name": metadata["client_name"],
        "redirect_uris": json.dumps(metadata["redirect_uris"]),
        "application_type": metadata["application_type"],
    }
    statement = dialect.insert(OAuthClient).values(
        id=url, dynamic=True, created_at=now, last_used_at=now, **client
    )
    changed = or_(
        OAuthClient.name != statement.excluded.name,
        OAuthClient.redirect_uris != statement.excluded.redirect_uris,
    )
    db.session.execute(
        statement.on_conflict_do_update(
            index_elements=["id"],
            set_={
                **client,
                "last_used_at": now,
                "first_used_at": case((changed, None), else_=OAuthClient.first_used_at),
            },
        )
    )
    copy = {
        "document": json.dumps(metadata),
        "fetched_at": now,
        "expires_at": now + outcome.lifetime,
    }
    db.session.execute(dialect.upsert(ClientDocument, {"url": url, **copy}, set_=copy))
    db.session.execute(
        delete(DocumentFailure)
        .where(DocumentFailure.url == url)
        .execution_options(synchronize_session=False)
    )
    _forget_least_recently_used(keep=url)


def forget(url: str) -> None:
    """The fetch failed: no copy (the client is unknown), and no new fetch for
    FAILURE_MEMORY. Expired failures go, and at most MAX_FAILURES are kept."""
    now = clock.now()
    db.session.execute(
        delete(ClientDocument)
        .where(ClientDocument.url == url)
        .execution_options(synchronize_session=False)
    )
    db.session.execute(
        delete(DocumentFailure)
        .where(DocumentFailure.retry_at <= now)
        .execution_options(synchronize_session=False)
    )
    retry_at = now + FAILURE_MEMORY
    failure = {"url": url, "retry_at": retry_at}
    db.session.execute(dialect.upsert(DocumentFailure, failure, set_={"retry_at": retry_at}))
    oldest = (
        select(DocumentFailure.url)
        .order_by(DocumentFailure.retry_at.desc(), DocumentFailure.url)
        .offset(MAX_FAILURES)
    )
    db.session.execute(
        delete(DocumentFailure)
        .where(DocumentFailure.url.in_(oldest.scalar_subquery()))
        .execution_options(synchronize_session=False)
    )


def unreferenced_clients():
    """Document clients no authorization code, token or device record references."""
    return select(OAuthClient.id).where(
        OAuthClient.id.startswith(DOCUMENT_PREFIX),
        ~exists().where(AuthorizationCode.client_id == OAuthClient.id),
        ~exists().where(Token.client_id == OAuthClient.id),
        ~exists().where(DeviceRecord.client_id == OAuthClient.id),
    )


def _forget_least_recently_used(*, keep: str) -> None:
    """Keep at most MAX_UNREFERENCED unreferenced document clients (this one included):
    delete the least recently used (last fetched or approved) beyond that, with their
    copies and rate rows (ON DELETE CASCADE). On PostgreSQL a client another unit has
    locked (clients.get_client(lock=True): a code or device record is being written
    for it) is skipped, never deleted under it."""
    recency = func.coalesce(OAuthClient.last_used_at, OAuthClient.created_at)
    surplus = (
        unreferenced_clients()
        .where(OAuthClient.id != keep)
        .order_by(recency.desc(), OAuthClient.id)
        .offset(MAX_UNREFERENCED - 1)
        .with_for_update(of=OAuthClient, skip_locked=True)
    )
    ids = list(db.session.execute(surplus).scalars())
    if ids:
        log.info("forgetting %d unused client metadata document client(s)", len(ids))
        db.session.execute(
            delete(OAuthClient)
            .where(OAuthClient.id.in_(ids))
            .execution_options(synchronize_session=False)
        )
