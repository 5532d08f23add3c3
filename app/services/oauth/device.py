"""DEVICE-RECORD STATE MACHINE (docs/oauth.md "Device authorization grant", RFC 8628;
this table is the rule).

State          Trigger                 Condition                  Next         Also
none           device_authorization    valid client, resource     pending      codes; 600 s
pending        device/approve true     full session, budget left  approved     client used; 204
pending        device/approve false                               declined     polls: access_denied
pending        poll                                               pending      authorization_pending
                                                                               or slow_down
approved       poll                    client matches             row deleted  tokens issued; later
                                                                               polls invalid_grant
pending or     600 seconds elapse                                 expired      polls: expired_token
  approved
approved       device/approve true     the session that approved  approved     204, costs nothing
               again
approved or    the deciding user's     (users.end_all_sessions_   row deleted  later polls
  declined     password changes, or    and_tokens)                             invalid_grant
               the user is removed

Polling ladder (authlib rfc8628): unknown/wrong client -> expired -> declined ->
approved (claim) -> slow_down -> pending. The last poll time is stored on every poll,
including refused ones (commit=True). Claiming deletes the row and requires exactly
one deleted row, so of two concurrent polls only one is issued tokens.

Rate of device authorization requests (open route): at most START_LIMIT per client
and caller address per START_WINDOW, LIVE_LIMIT live records per client, and
DOCUMENT_CLIENTS_PER_ADDRESS different metadata-document clients per caller address
per START_WINDOW (a device record keeps its client stored, and document clients cost
nothing to mint); beyond any, 429 temporarily_unavailable with Retry-After (see
_admit). The same check runs, read-only, before a document is fetched (check_rate).

Attempt budget: every failed lookup or decision adds one to the session's
`device_attempts`; from 10 on, every call of that session is 429 invalid_request.
The charge is a conditional UPDATE (`attempts < 10`), atomic on both stores, so
parallel failures cannot charge more than 10 (the ones past it answer 429).
"""

from __future__ import annotations

import ipaddress
import math
import re
from datetime import datetime, timedelta
from typing import cast

from flask import current_app
from sqlalchemy import CursorResult, delete, func, select, text, update
from sqlalchemy.exc import IntegrityError

from ...extensions import db
from ...models import DeviceRecord, DeviceStart, Session
from ...store import dialect
from .. import clock, crypto
from ..identity import sessions
from .clients import (
    DOCUMENT_PREFIX,
    check_resource,
    client_info,
    get_client,
    mark_used,
    require,
    stored_client,
)
from .errors import (
    AccessDenied,
    AuthorizationPending,
    ExpiredToken,
    InvalidGrant,
    InvalidRequest,
    ServerError,
    SlowDown,
    TemporarilyUnavailable,
)
from .tokens import DEVICE_LABEL, issue_pair

DEVICE_TTL = timedelta(seconds=600)
INTERVAL = 5
SLOW_DOWN_STEP = 5
ALLOCATION_TRIES = 3
ATTEMPT_BUDGET = 10
# Expired records linger this long so late polls still see expired_token; then the
# client's next device authorization request deletes them.
EXPIRED_LINGER = timedelta(seconds=600)
# The rate of POST /oauth/device_authorization (open): at most START_LIMIT accepted
# requests per client and caller address in any START_WINDOW, and at most
# LIVE_LIMIT live (unexpired) device records per client overall.
START_WINDOW = timedelta(minutes=10)
START_LIMIT = 10
LIVE_LIMIT = 100
# Client ID metadata documents cost nothing to mint, and a device record keeps its
# client (and the copy) stored: at most this many different document clients may be
# started from one address in any START_WINDOW (docs/oauth.md, the device grant).
DOCUMENT_CLIENTS_PER_ADDRESS = 10
_START_LOCK = 0x64657669  # PostgreSQL advisory lock class: device starts, keyed per client
NO_MATCH = "no pending device code matches that user code"
NOT_REDEEMABLE = "the device code is not redeemable"


def normalise_user_code(value) -> str:
    """Keep letters and digits, upper-case them, and put the dash back (XXXX-XXXX)."""
    if not isinstance(value, str):
        return ""
    kept = re.sub(r"[^A-Za-z0-9]", "", value).upper()
    return f"{kept[:4]}-{kept[4:]}" if len(kept) == 8 else kept


# --- device authorization request -------------------------------------------------


def address_key(remote_addr) -> str:
    """The caller's address as the rate counts it: IPv4 as is, IPv6 by its /64 network.

    One IPv6 host usually holds a whole /64, so counting single IPv6 addresses would
    not limit anyone. An IPv4-mapped IPv6 address counts as its IPv4 address.
    """
    if not remote_addr:
        return "unknown"
    try:
        ip = ipaddress.ip_address(remote_addr)
    except ValueError:
        return str(remote_addr)[:64]
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))
    return str(ip)


def _seconds_until(moment: datetime, now: datetime) -> int:
    return max(1, math.ceil((moment - now).total_seconds()))


def _admit(client_id: str, address: str, now: datetime) -> None:
    """Count one device authorization request against the rate, or refuse it with 429.

    Check and count happen under one lock per client: PostgreSQL takes a transaction
    advisory lock keyed by the client id (a row lock on the client could deadlock with
    reaping, which deletes a client's device records before the client); SQLite's unit
    already holds the write lock (BEGIN IMMEDIATE). So parallel requests are admitted
    one after another and can never pass either limit. Expired records of the client
    (past the linger) and its starts older than the window are deleted first, and the
    deletion stands even when the request is refused (commit=True).
    """
    if dialect.is_postgresql():
        db.session.execute(
            text("SELECT pg_advisory_xact_lock(:kind, hashtext(:client))"),
            {"kind": _START_LOCK, "client": client_id},
        )
    db.session.execute(
        delete(DeviceRecord)
        .where(DeviceRecord.client_id == client_id, DeviceRecord.expires_at <= now - EXPIRED_LINGER)
        .execution_options(synchronize_session=False)
    )
    db.session.execute(
        delete(DeviceStart)
        .where(DeviceStart.client_id == client_id, DeviceStart.created_at <= now - START_WINDOW)
        .execution_options(synchronize_session=False)
    )
    refusal = _over_the_rate(client_id, address, now)
    if refusal is not None:
        raise refusal
    db.session.add(DeviceStart(client_id=client_id, address=address, created_at=now))


def check_rate(client_id, remote_addr) -> None:
    """The rate alone, read-only, before anything else is done for the request (a
    metadata document is fetched only for a request the rate admits): 429 as _admit."""
    if not isinstance(client_id, str) or not client_id or "\x00" in client_id:
        return  # no such client (clients.get_client says so): nothing to count
    refusal = _over_the_rate(client_id, address_key(remote_addr), clock.now())
    if refusal is not None:
        refusal.commit = False  # nothing to keep: this check wrote nothing
        raise refusal


def _over_the_rate(client_id: str, address: str, now: datetime) -> TemporarilyUnavailable | None:
    oldest, recent = db.session.execute(
        select(func.min(DeviceStart.created_at), func.count()).where(
            DeviceStart.client_id == client_id,
            DeviceStart.address == address,
            DeviceStart.created_at > now - START_WINDOW,
        )
    ).one()
    if recent >= START_LIMIT:
        wait = _seconds_until(oldest + START_WINDOW, now)
        return TemporarilyUnavailable(
            f"too many device authorization requests for this client from this address; "
            f"try again in {wait} seconds",
            retry_after=wait,
            commit=True,
        )
    if recent == 0 and client_id.startswith(DOCUMENT_PREFIX):
        others_oldest, others = db.session.execute(
            select(
                func.min(DeviceStart.created_at), func.count(func.distinct(DeviceStart.client_id))
            ).where(
                DeviceStart.client_id.startswith(DOCUMENT_PREFIX),
                DeviceStart.address == address,
                DeviceStart.created_at > now - START_WINDOW,
            )
        ).one()
        if others >= DOCUMENT_CLIENTS_PER_ADDRESS:
            wait = _seconds_until(others_oldest + START_WINDOW, now)
            return TemporarilyUnavailable(
                f"too many different metadata-document clients from this address; "
                f"try again in {wait} seconds",
                retry_after=wait,
                commit=True,
            )
    first_expiry, live = db.session.execute(
        select(func.min(DeviceRecord.expires_at), func.count()).where(
            DeviceRecord.client_id == client_id, DeviceRecord.expires_at > now
        )
    ).one()
    if live >= LIVE_LIMIT:
        wait = _seconds_until(first_expiry, now)
        return TemporarilyUnavailable(
            f"too many device authorizations are pending for this client; "
            f"try again in {wait} seconds",
            retry_after=wait,
            commit=True,
        )
    return None


def start(form, *, address: str | None) -> dict:
    """POST /oauth/device_authorization: a pending record with fresh codes, under the rate."""
    require(form, "client_id", "resource")
    client = get_client(form["client_id"], lock=True)  # reaping cannot delete it under us
    resource = check_resource(form.get("resource"), required=True)
    now = clock.now()
    _admit(client.id, address_key(address), now)
    device_code = crypto.new_secret()
    for _ in range(ALLOCATION_TRIES):
        user_code = crypto.new_user_code()
        try:
            with db.session.begin_nested():
                db.session.add(
                    DeviceRecord(
                        id=crypto.digest(device_code),
                        user_code=user_code,
                        client_id=client.id,
                        resource=resource,
                        status="pending",
                        interval=INTERVAL,
                        created_at=now,
                        expires_at=now + DEVICE_TTL,
                    )
                )
            break
        except IntegrityError:  # the user code is taken; draw another
            continue
    else:
        raise ServerError("could not allocate a unique user code; try again")
    web = current_app.config["WEB_ORIGIN"]
    return {
        "device_code": device_code,
        "user_code": user_code,
        "verification_uri": f"{web}/device",
        "verification_uri_complete": f"{web}/device?user_code={user_code}",
        "expires_in": int(DEVICE_TTL.total_seconds()),
        "interval": INTERVAL,
    }


# --- the human side: lookup and decision, under the attempt budget ----------------


def _budget_spent() -> InvalidRequest:
    return InvalidRequest(
        "too many failed device code attempts; sign in again to get a new budget",
        status=429,
    )


def _check_budget(session_id: str) -> None:
    spent = db.session.execute(
        select(Session.device_attempts).where(Session.id == session_id)
    ).scalar_one_or_none()
    if spent is None or spent >= ATTEMPT_BUDGET:
        raise _budget_spent()


def _spend_attempt(session_id: str) -> InvalidRequest | InvalidGrant:
    """Charge one failed attempt: 400 invalid_grant if the budget had one left, else 429.

    The charge is one conditional UPDATE (attempts < 10), so concurrent failures of a
    session can never charge more than 10 however they interleave: on PostgreSQL the
    UPDATE waits for a concurrent charge's row lock and re-checks the condition on the
    committed count; on SQLite the unit already holds the write lock (BEGIN IMMEDIATE).
    A failure that finds the budget spent meanwhile answers 429 and charges nothing.
    """
    charged = db.session.execute(
        update(Session)
        .where(Session.id == session_id, Session.device_attempts < ATTEMPT_BUDGET)
        .values(device_attempts=Session.device_attempts + 1)
        .returning(Session.device_attempts)
        .execution_options(synchronize_session=False)
    ).scalar_one_or_none()
    if charged is None:
        return _budget_spent()
    return InvalidGrant(NO_MATCH, commit=True)


def _live_record(user_code) -> DeviceRecord | None:
    code = normalise_user_code(user_code)
    row = db.session.execute(
        select(DeviceRecord).where(DeviceRecord.user_code == code)
    ).scalar_one_or_none()
    if row is None or row.expires_at <= clock.now():
        return None
    return row


def info(user_code, *, session_id: str) -> dict:
    """GET /oauth/device_info: which client a pending user code belongs to."""
    _check_budget(session_id)
    row = _live_record(user_code)
    if row is None or row.status != "pending":
        raise _spend_attempt(session_id)
    remaining = int((row.expires_at - clock.now()).total_seconds())
    return {"client": client_info(stored_client(row.client_id)), "expires_in": remaining}


def decide(user_code, approve, *, session_id: str, user_id: int) -> None:
    """POST /oauth/device/approve: approve or decline a pending code.

    The decision first holds its session row (sessions.hold): 401 if a password change
    ended the session since the request's session check, and a password change that
    comes later waits for this decision to commit and then deletes the record.
    """
    sessions.hold(session_id)
    _check_budget(session_id)
    if not isinstance(user_code, str) or not isinstance(approve, bool):
        raise InvalidRequest("user_code (string) and approve (boolean) are required")
    row = _live_record(user_code)
    if row is None:
        raise _spend_attempt(session_id)
    if (
        row.status == "approved"
        and approve
        and row.decided_by_session is not None
        and crypto.same(row.decided_by_session, session_id)
    ):
        return  # the same session approving again: answered, free
    changed = cast(
        CursorResult,
        db.session.execute(
            update(DeviceRecord)
            .where(DeviceRecord.id == row.id, DeviceRecord.status == "pending")
            .values(
                status="approved" if approve else "declined",
                user_id=user_id if approve else None,
                decided_by_session=session_id,
            )
            .execution_options(synchronize_session=False)
        ),
    ).rowcount
    if changed != 1:
        raise _spend_attempt(session_id)
    if approve:
        mark_used(row.client_id)


def forget_user(user_id: int) -> None:
    """Delete every record the user approved or one of their sessions decided.

    Called before the user's sessions end (password change, reset, removal), so an
    approval given under the old password can never be claimed for tokens; the
    sessions are locked by then (users.end_all_sessions_and_tokens), so a decision in
    flight has committed and is seen here, and no later one can be made.
    """
    theirs = select(Session.id).where(Session.user_id == user_id)
    db.session.execute(
        delete(DeviceRecord)
        .where((DeviceRecord.user_id == user_id) | DeviceRecord.decided_by_session.in_(theirs))
        .execution_options(synchronize_session=False)
    )


# --- the machine side: polling the token endpoint -----------------------------------


def poll(form) -> dict:
    """grant_type=device_code: the polling ladder; a claim deletes exactly one row."""
    require(form, "device_code", "client_id")
    check_resource(form.get("resource"), required=False)
    now = clock.now()
    row = db.session.execute(
        select(DeviceRecord).where(DeviceRecord.id == crypto.digest(form["device_code"]))
    ).scalar_one_or_none()
    if row is None or not crypto.same(row.client_id, form["client_id"]):
        raise InvalidGrant(NOT_REDEEMABLE)
    previous, interval = row.last_poll_at, row.interval
    if row.status == "approved" and row.expires_at > now:
        claimed = cast(
            CursorResult,
            db.session.execute(
                delete(DeviceRecord)
                .where(DeviceRecord.id == row.id, DeviceRecord.status == "approved")
                .execution_options(synchronize_session=False)
            ),
        ).rowcount
        if claimed != 1:  # another poll claimed it first
            raise InvalidGrant(NOT_REDEEMABLE)
        assert row.user_id is not None  # set by the approval
        return issue_pair(row.user_id, row.client_id, label=DEVICE_LABEL)
    # The interval is advice, not a limiter: slow_down only compares with the previous
    # poll, and the stored interval stays 5 s (a client that adds 5 s stays clear of it).
    too_fast = previous is not None and now - previous < timedelta(seconds=interval)
    db.session.execute(
        update(DeviceRecord)
        .where(DeviceRecord.id == row.id)
        .values(last_poll_at=now)
        .execution_options(synchronize_session=False)
    )
    if row.expires_at <= now:
        raise ExpiredToken("the device code has expired", commit=True)
    if row.status == "declined":
        raise AccessDenied("the request was declined", commit=True)
    if too_fast:
        raise SlowDown(
            f"polling too fast; add {SLOW_DOWN_STEP} seconds to the polling interval", commit=True
        )
    raise AuthorizationPending("the request is still waiting for approval", commit=True)
