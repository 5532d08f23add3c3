"""DEVICE-RECORD STATE MACHINE (SPEC "States and transitions -> Device record", RFC 8628).

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

Attempt budget: every failed lookup or decision adds one to the session's
`device_attempts`; from 10 on, every call of that session is 429 invalid_request.
"""

from __future__ import annotations

import re
from datetime import timedelta

from flask import current_app
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from ...extensions import db
from ...models import DeviceRecord, Session
from .. import clock, crypto
from .clients import check_resource, client_info, get_client, mark_used, require
from .errors import (
    AccessDenied,
    AuthorizationPending,
    ExpiredToken,
    InvalidGrant,
    InvalidRequest,
    ServerError,
    SlowDown,
)
from .tokens import issue_pair

DEVICE_TTL = timedelta(seconds=600)
INTERVAL = 5
SLOW_DOWN_STEP = 5
ALLOCATION_TRIES = 3
ATTEMPT_BUDGET = 10
PURGE_AFTER = timedelta(days=1)  # expired records linger so late polls see expired_token
NO_MATCH = "no pending device code matches that user code"
NOT_REDEEMABLE = "the device code is not redeemable"


def normalise_user_code(value) -> str:
    """Keep letters and digits, upper-case them, and put the dash back (XXXX-XXXX)."""
    if not isinstance(value, str):
        return ""
    kept = re.sub(r"[^A-Za-z0-9]", "", value).upper()
    return f"{kept[:4]}-{kept[4:]}" if len(kept) == 8 else kept


# --- device authorization request -------------------------------------------------


def start(form) -> dict:
    """POST /oauth/device_authorization: a pending record with fresh codes."""
    require(form, "client_id", "resource")
    client = get_client(form["client_id"])
    resource = check_resource(form.get("resource"), required=True)
    now = clock.now()
    db.session.execute(delete(DeviceRecord).where(DeviceRecord.expires_at < now - PURGE_AFTER))
    device_code = crypto.new_secret()
    for _ in range(ALLOCATION_TRIES):
        user_code = crypto.new_user_code()
        try:
            with db.session.begin_nested():
                db.session.add(
                    DeviceRecord(
                        id=crypto.digest(device_code), user_code=user_code, client_id=client.id,
                        resource=resource, status="pending", interval=INTERVAL,
                        created_at=now, expires_at=now + DEVICE_TTL,
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


def _check_budget(session_id: str) -> None:
    spent = db.session.execute(
        select(Session.device_attempts).where(Session.id == session_id)
    ).scalar_one_or_none()
    if spent is None or spent >= ATTEMPT_BUDGET:
        raise InvalidRequest(
            "too many failed device code attempts; sign in again to get a new budget",
            status=429,
        )


def _spend_attempt(session_id: str) -> InvalidGrant:
    db.session.execute(
        update(Session)
        .where(Session.id == session_id)
        .values(device_attempts=Session.device_attempts + 1)
        .execution_options(synchronize_session=False)
    )
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
    return {"client": client_info(get_client(row.client_id)), "expires_in": remaining}


def decide(user_code, approve, *, session_id: str, user_id: int) -> None:
    """POST /oauth/device/approve: approve or decline a pending code."""
    _check_budget(session_id)
    if not isinstance(user_code, str) or not isinstance(approve, bool):
        raise InvalidRequest("user_code (string) and approve (boolean) are required")
    row = _live_record(user_code)
    if row is None:
        raise _spend_attempt(session_id)
    if (row.status == "approved" and approve and row.decided_by_session is not None
            and crypto.same(row.decided_by_session, session_id)):
        return  # the same session approving again: answered, free
    changed = db.session.execute(
        update(DeviceRecord)
        .where(DeviceRecord.id == row.id, DeviceRecord.status == "pending")
        .values(
            status="approved" if approve else "declined",
            user_id=user_id if approve else None,
            decided_by_session=session_id,
        )
        .execution_options(synchronize_session=False)
    ).rowcount
    if changed != 1:
        raise _spend_attempt(session_id)
    if approve:
        mark_used(row.client_id)


def forget_user(user_id: int) -> None:
    """Delete every record the user approved or one of their sessions decided.

    Called before the user's sessions end (password change, reset, removal), so an
    approval given under the old password can never be claimed for tokens.
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
        claimed = db.session.execute(
            delete(DeviceRecord)
            .where(DeviceRecord.id == row.id, DeviceRecord.status == "approved")
            .execution_options(synchronize_session=False)
        ).rowcount
        if claimed != 1:  # another poll claimed it first
            raise InvalidGrant(NOT_REDEEMABLE)
        return issue_pair(row.user_id, row.client_id)
    # The interval is advice, not a limiter: slow_down only compares with the previous
    # poll, and the stored interval stays 5 s (a client that adds 5 s stays clear of it).
    too_fast = previous is not None and now - previous < timedelta(seconds=interval)
    db.session.execute(
        update(DeviceRecord).where(DeviceRecord.id == row.id).values(last_poll_at=now)
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
