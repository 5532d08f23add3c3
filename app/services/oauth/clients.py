"""OAuth clients: lookup, redirect matching, `resource`, and dynamic registration.

DYNAMIC CLIENT STATE MACHINE (docs/oauth.md "Clients"; this table is the rule):

State               Trigger                              Condition        Next
registered, unused  first approved grant or device code                   used
registered, unused  any registration attempt             older than 24 h  deleted, with its
                                                                          device codes; skipped
                                                                          if a code or token row
                                                                          references it

All clients are public (no secret). "Used" is `first_used_at` being set; `first_use`
in client info is true while it is not.

A client id that is an https URL with a path names a client ID metadata document
(metadata_documents.py). Such a client has a row here too, written from the document
(dynamic, name and redirect URIs as the document says, cleaned by the same rules as a
registration), so codes, tokens and device records reference it as any other; it is
known only while a usable copy of its document is stored. It is reaped like a
registered client and does not count towards the 20 registered ones; besides, at
most 100 of them that nothing references are kept (metadata_documents.py).

Reserved names: a client name that reads like a first-party client's (the name or id
of any client that is not dynamic, e.g. svc-cli "Ledger command line"; compared
ignoring case and runs of spaces) is refused at registration (400
invalid_client_metadata) and makes a metadata document unusable.

Reaping and a request that writes a code or device record for the client cannot
cross: that request holds the client row (get_client(lock=True), FOR KEY SHARE on
PostgreSQL; SQLite runs one writer at a time) and reaping skips locked rows, and a
client with a live device record is not reaped.
"""

from __future__ import annotations

import json
import secrets
import unicodedata
from datetime import timedelta
from urllib.parse import urlsplit

from flask import current_app
from sqlalchemy import delete, exists, func, select, text, update

from ...extensions import db
from ...models import (
    APPLICATION_TYPES,
    AuthorizationCode,
    ClientDocument,
    DeviceRecord,
    OAuthClient,
    Token,
)
from ...store import dialect
from .. import clock
from .errors import (
    InvalidClient,
    InvalidClientMetadata,
    InvalidRedirectUri,
    InvalidRequest,
    TemporarilyUnavailable,
)

MAX_DYNAMIC_CLIENTS = 20
MAX_REDIRECT_URIS = 5
MAX_NAME_LENGTH = 60
MAX_REDIRECT_URI_LENGTH = 2000
REGISTERED_PREFIX = "dyn_"  # docs/oauth.md "Clients": registered ids start with dyn_
DOCUMENT_PREFIX = "https://"
UNUSED_CLIENT_TTL = timedelta(hours=24)
PLACEHOLDER_NAME = "Unnamed client"
LOOPBACK_HOSTS = ("127.0.0.1", "[::1]")
# Unicode format characters a shown client name must never carry (bidi overrides, isolates, marks,
# line and paragraph separators); every other Cc/Cf character is stripped as well.
_STRIPPED = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))} | {
    "\u200e",
    "\u200f",
    "\u2028",
    "\u2029",
}
_REGISTRATION_LOCK = 0x6C656467  # PostgreSQL advisory lock key for the 20-client cap


def compat() -> bool:
    return bool(current_app.config.get("OAUTH_CLIENT_COMPAT"))


def printable_ascii(value: str) -> bool:
    return all(0x20 <= ord(ch) <= 0x7E for ch in value)


# --- lookup -----------------------------------------------------------------


def get_client(client_id, *, lock: bool = False) -> OAuthClient:
    """The client a request names, or 401 invalid_client.

    A metadata-document client is known only while a usable copy of its document is
    stored (the route fetched it first when the copy was missing or stale). `lock`:
    the unit is about to write a row referencing the client, so hold it (PostgreSQL
    FOR KEY SHARE) against reaping and forgetting, which skip locked clients; a
    client deleted meanwhile is unknown, never a failed foreign key.
    """
    client = None
    # No stored id holds a NUL, and PostgreSQL refuses to compare text with one.
    if isinstance(client_id, str) and "\x00" not in client_id:
        query = select(OAuthClient).where(OAuthClient.id == client_id)
        if lock:
            query = query.with_for_update(key_share=True)
        client = db.session.execute(query).scalar_one_or_none()
    if client is None:
        raise InvalidClient("unknown client_id")
    if client.id.startswith(DOCUMENT_PREFIX) and db.session.get(ClientDocument, client.id) is None:
        raise InvalidClient("unknown client_id")
    return client


def stored_client(client_id: str) -> OAuthClient:
    """The client row a code or device record references (it exists: foreign key)."""
    client = db.session.get(OAuthClient, client_id)
    if client is None:
        raise InvalidClient("unknown client_id")
    return client


def redirect_uris(client: OAuthClient) -> list[str]:
    return json.loads(client.redirect_uris)


def client_info(client: OAuthClient) -> dict:
    """What the consent page shows; the name always comes from the stored client."""
    return {
        "id": client.id,
        "name": client.name,
        "dynamic": client.dynamic,
        "first_use": client.first_used_at is None,
        "redirect_uris": redirect_uris(client),
    }


def mark_used(client_id: str) -> None:
    """A grant was approved: stamp last use, and first use the first time."""
    now = clock.now()
    db.session.execute(
        update(OAuthClient)
        .where(OAuthClient.id == client_id)
        .values(first_used_at=func.coalesce(OAuthClient.first_used_at, now), last_used_at=now)
        .execution_options(synchronize_session=False)
    )


# --- resource and redirect rules ----------------------------------------------


def canonical_resource(value: str) -> str:
    """Scheme and host lowercased, one trailing slash removed.

    `resource` must equal API_ORIGIN in this form (docs/oauth.md "Tokens").
    """
    try:
        parts = urlsplit(value)
    except ValueError:  # e.g. an unclosed IPv6 bracket: matches nothing
        return ""
    path = parts.path[:-1] if parts.path.endswith("/") else parts.path
    rebuilt = f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}"
    if parts.query:
        rebuilt += "?" + parts.query
    if parts.fragment or value.endswith("#"):
        rebuilt += "#" + parts.fragment
    return rebuilt


def require(params, *names: str, commit: bool = False) -> None:
    """Each named parameter is present and non-empty, else 400 invalid_request."""
    for name in names:
        if not params.get(name):
            raise InvalidRequest(f"{name} is required", commit=commit)


def check_resource(value, *, required: bool) -> str:
    """The `resource` parameter must name this API; compat mode defaults a missing one."""
    origin = current_app.config["API_ORIGIN"]
    if value is None or value == "":
        if required and not compat():
            raise InvalidRequest("resource is required and must be this API's address")
        return origin
    if not isinstance(value, str) or canonical_resource(value) != origin:
        raise InvalidRequest(f"resource must be this API ({origin})")
    return origin


def _split_authority(netloc: str) -> tuple[str, str | None] | None:
    """(host, port) of a netloc without user info, or None if it is malformed."""
    if netloc.startswith("["):
        host, sep, rest = netloc.partition("]")
        host += sep
        if not sep:
            return None
    else:
        host, _, rest = netloc.partition(":")
        rest = ":" + rest if _ else ""
    if rest == "":
        return host, None
    if not rest.startswith(":") or not rest[1:].isdigit():
        return None
    return host, rest[1:]


def _loopback_hosts() -> tuple[str, ...]:
    return LOOPBACK_HOSTS + (("localhost",) if compat() else ())


def _loopback_parts(uri: str):
    """(host, rest-after-authority) for an http:// loopback URI, else None."""
    if not uri.startswith("http://"):
        return None
    authority, slash, rest = uri[len("http://") :].partition("/")
    for mark in "?#":
        if mark in authority:  # "http://127.0.0.1?x" - no path
            authority, _, tail = authority.partition(mark)
            rest, slash = mark + tail, ""
    if "@" in authority:
        return None
    split = _split_authority(authority)
    if split is None or split[0] not in _loopback_hosts():
        return None
    return split[0], slash + rest


def redirect_matches(registered: str, presented: str) -> bool:
    """Exact match, except registered http loopback URIs match on any port (RFC 8252 7.3)."""
    if registered == presented:
        return True
    reg, pres = _loopback_parts(registered), _loopback_parts(presented)
    return reg is not None and pres is not None and reg == pres


def check_redirect(client: OAuthClient, presented) -> str:
    if not isinstance(presented, str) or not any(
        redirect_matches(uri, presented) for uri in redirect_uris(client)
    ):
        raise InvalidRequest("redirect_uri is not registered for this client")
    return presented


def allowed_redirect(uri) -> bool:
    """Registration rule: http loopback IP or https without user info; no fragment/space;
    at most 2,000 characters."""
    if not isinstance(uri, str) or not uri or not printable_ascii(uri):
        return False
    if len(uri) > MAX_REDIRECT_URI_LENGTH:
        return False
    if " " in uri or "#" in uri:
        return False
    if uri.startswith("http://"):
        return _loopback_parts(uri) is not None
    if uri.startswith("https://"):
        try:
            netloc = urlsplit(uri).netloc
        except ValueError:
            return False
        split = None if "@" in netloc else _split_authority(netloc)
        return split is not None and bool(split[0].strip("[]"))
    return False


def clean_name(value) -> str:
    if value is None:
        return PLACEHOLDER_NAME
    if not isinstance(value, str):
        raise InvalidRequest("client_name must be a string", commit=True)
    kept = "".join(
        ch for ch in value if ch not in _STRIPPED and unicodedata.category(ch) not in ("Cc", "Cf")
    )
    kept = kept.strip()[:MAX_NAME_LENGTH].strip()
    return kept or PLACEHOLDER_NAME


def _name_key(name: str) -> str:
    return " ".join(name.split()).casefold()


def reserved_name(name: str) -> bool:
    """Whether `name` reads like a first-party client's name or id (not dynamic)."""
    first_party = db.session.execute(
        select(OAuthClient.id, OAuthClient.name).where(OAuthClient.dynamic.is_(False))
    ).all()
    taken = {_name_key(value) for row in first_party for value in row}
    return _name_key(name) in taken


# --- registration --------------------------------------------------------------


def reap_unused() -> int:
    """Delete dynamic clients unused for over 24 h that no code, token or live device
    record references (their expired device records go with them). A client another
    unit holds (get_client(lock=True)) is skipped: it is being used right now."""
    now = clock.now()
    cutoff = now - UNUSED_CLIENT_TTL
    referenced = exists().where(AuthorizationCode.client_id == OAuthClient.id)
    has_token = exists().where(Token.client_id == OAuthClient.id)
    pending = exists().where(
        DeviceRecord.client_id == OAuthClient.id, DeviceRecord.expires_at > now
    )
    doomed = (
        select(OAuthClient.id)
        .where(
            OAuthClient.dynamic.is_(True),
            OAuthClient.first_used_at.is_(None),
            OAuthClient.created_at < cutoff,
            ~referenced,
            ~has_token,
            ~pending,
        )
        .with_for_update(of=OAuthClient, skip_locked=True)
    )
    ids = list(db.session.execute(doomed).scalars())
    if not ids:
        return 0
    db.session.execute(delete(DeviceRecord).where(DeviceRecord.client_id.in_(ids)))
    db.session.execute(
        delete(OAuthClient)
        .where(OAuthClient.id.in_(ids))
        .execution_options(synchronize_session=False)
    )
    return len(ids)


def check_redirect_uris(uris) -> list[str]:
    """The registration rules for `redirect_uris` (also applied to metadata documents)."""
    if not isinstance(uris, list) or not uris:
        raise InvalidRedirectUri("redirect_uris must be a non-empty array", commit=True)
    if len(uris) > MAX_REDIRECT_URIS:
        raise InvalidRedirectUri(
            f"at most {MAX_REDIRECT_URIS} redirect_uris may be registered", commit=True
        )
    for uri in uris:
        if not allowed_redirect(uri):
            raise InvalidRedirectUri(
                "redirect URIs must be http://127.0.0.1 or http://[::1] (any port), or https "
                "without user info; no fragment, no whitespace, no custom scheme, at most "
                f"{MAX_REDIRECT_URI_LENGTH} characters"
                + (", or http://localhost" if compat() else ""),
                commit=True,
            )
    return uris


def check_application_type(value) -> str:
    """RFC 7591 `application_type`: native (the default; also for null) or web."""
    if value is None:
        return "native"
    if not isinstance(value, str) or value not in APPLICATION_TYPES:
        raise InvalidClientMetadata("application_type must be native or web", commit=True)
    return value


def client_metadata(body: dict) -> dict:
    """Self-asserted client metadata, checked and cleaned by the registration rules:
    {client_name, redirect_uris, application_type}. Registration and metadata
    documents both use it."""
    uris = check_redirect_uris(body.get("redirect_uris"))
    return {
        "client_name": clean_name(body.get("client_name")),
        "redirect_uris": uris,
        "application_type": check_application_type(body.get("application_type")),
    }


def register(body: dict) -> dict:
    """RFC 7591 registration of a public client; reaps first, then caps at 20."""
    if dialect.is_postgresql():
        # Serialise registrations so two at 19 clients cannot both pass the cap.
        db.session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _REGISTRATION_LOCK})
    reap_unused()  # every attempt reaps, so refusals below still commit it
    metadata = client_metadata(body)
    name, uris = metadata["client_name"], metadata["redirect_uris"]
    if reserved_name(name):
        raise InvalidClientMetadata(
            f"client_name {name!r} is reserved for a first-party client", commit=True
        )
    count = db.session.execute(
        select(func.count())
        .select_from(OAuthClient)
        .where(OAuthClient.dynamic.is_(True), OAuthClient.id.startswith(REGISTERED_PREFIX))
    ).scalar_one()
    if count >= MAX_DYNAMIC_CLIENTS:
        raise TemporarilyUnavailable("too many registered clients; try again later", commit=True)
    now = clock.now()
    client = OAuthClient(
        id=REGISTERED_PREFIX + secrets.token_hex(16),
        name=name,
        dynamic=True,
        redirect_uris=json.dumps(uris),
        application_type=metadata["application_type"],
        created_at=now,
    )
    db.session.add(client)
    db.session.flush()
    return {
        "client_id": client.id,
        "client_id_issued_at": int(now.timestamp()),
        "client_name": name,
        "redirect_uris": uris,
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "application_type": client.application_type,
    }
