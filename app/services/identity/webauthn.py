"""WEBAUTHN CEREMONIES over py_webauthn (docs/auth.md "Passkey ceremonies").

| Ceremony          | Condition                                              | Result          |
|-------------------|--------------------------------------------------------|-----------------|
| register finish   | half-session only while the account has no passkey     | full session    |
| auth finish       | verified, user verified, counter not flat/backwards    | full session    |
|                   | once it has been nonzero                               |                 |

RP ID = host of WEB_ORIGIN, expected origin = WEB_ORIGIN, RP name "Ledger"; user
verification is always required; a clientDataJSON with `crossOrigin: true` is refused.
Each begin stores one challenge per session in
`webauthn_challenges` (5 minutes); a finish consumes it whatever the outcome, so
a challenge can never be answered twice. A credential is looked up by its id among
the caller's passkeys, never by trying every key. Success rotates the session id
and resets its fixed expiry (sessions.elevate). Every refusal is a 400 (a 403 for
a half-session enrolling a second passkey).
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from datetime import timedelta
from typing import cast
from urllib.parse import urlsplit

import webauthn as py_webauthn
from flask import current_app
from sqlalchemy import CursorResult, delete, select, update
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url, parse_client_data_json
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AttestationConveyancePreference,
    AuthenticatorSelectionCriteria,
    AuthenticatorTransport,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from ...extensions import db
from ...models import Passkey, User, WebAuthnChallenge
from .. import clock
from ..errors import BadRequestError, ForbiddenError
from . import passkeys, sessions

RP_NAME = "Ledger"
CHALLENGE_TTL = timedelta(minutes=5)
NAME_MAX = 100
CREDENTIAL_ID_MAX = 1023  # bytes (WebAuthn Level 2 "credential ID")
_TRANSPORTS = {t.value for t in AuthenticatorTransport}


def rp_id() -> str:
    return urlsplit(current_app.config["WEB_ORIGIN"]).hostname


def expected_origin() -> str:
    return current_app.config["WEB_ORIGIN"]


@contextmanager
def _refusals():
    """py_webauthn's refusals (and malformed input it trips over) become our 400."""
    try:
        yield
    except WebAuthnException as exc:
        raise BadRequestError(f"the passkey response was refused: {exc}", commit=True) from exc
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise BadRequestError("the passkey response is malformed", commit=True) from exc


def _refuse_cross_origin(body: dict) -> None:
    """py_webauthn reads clientDataJSON's `crossOrigin` but never checks it: a ceremony
    run inside a frame of another origin (crossOrigin true) is refused here."""
    with _refusals():
        client_data = parse_client_data_json(base64url_to_bytes(body["response"]["clientDataJSON"]))
    if client_data.cross_origin:
        raise BadRequestError(
            "the passkey response was refused: the ceremony ran in a cross-origin frame",
            commit=True,
        )


def _store_challenge(session_id: str, purpose: str, challenge: bytes) -> None:
    db.session.execute(delete(WebAuthnChallenge).where(WebAuthnChallenge.session_id == session_id))
    db.session.add(
        WebAuthnChallenge(
            session_id=session_id,
            purpose=purpose,
            challenge=challenge,
            expires_at=clock.now() + CHALLENGE_TTL,
        )
    )
    db.session.flush()


def _take_challenge(session_id: str, purpose: str) -> bytes:
    """Consume the session's challenge (single use); refuse a missing, foreign or stale one."""
    row = db.session.execute(
        delete(WebAuthnChallenge)
        .where(WebAuthnChallenge.session_id == session_id)
        .returning(
            WebAuthnChallenge.purpose, WebAuthnChallenge.challenge, WebAuthnChallenge.expires_at
        )
    ).first()
    if row is None or row.purpose != purpose:
        raise BadRequestError("no passkey ceremony in progress; call begin first", commit=True)
    if row.expires_at <= clock.now():
        raise BadRequestError("the passkey challenge has expired; call begin again", commit=True)
    return row.challenge


def _descriptors(keys: list[Passkey]) -> list[PublicKeyCredentialDescriptor]:
    out = []
    for key in keys:
        transports = [AuthenticatorTransport(t) for t in json.loads(key.transports or "[]")]
        out.append(
            PublicKeyCredentialDescriptor(
                id=base64url_to_bytes(key.credential_id), transports=transports or None
            )
        )
    return out


def _refuse_second_enrolment(principal) -> None:
    # Once a passkey exists, enrolling another needs a full session (docs/auth.md
    # "Passkey ceremonies"): a password alone must never add a second factor.
    if not principal.mfa_complete and passkeys.count_for(principal.user_id) > 0:
        raise ForbiddenError(
            "this account already has a passkey; sign in with it before adding another"
        )


def register_begin(principal) -> str:
    """Creation options (JSON text) for navigator.credentials.create()."""
    passkeys.lock_user(principal.user_id)
    _refuse_second_enrolment(principal)
    user = db.session.get(User, principal.user_id)
    assert user is not None  # the signed-in principal's own row
    options = py_webauthn.generate_registration_options(
        rp_id=rp_id(),
        rp_name=RP_NAME,
        user_name=user.email,
        user_id=user.webauthn_handle,
        attestation=AttestationConveyancePreference.NONE,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.PREFERRED,
            user_verification=UserVerificationRequirement.REQUIRED,
        ),
        exclude_credentials=_descriptors(passkeys.for_user(user.id)),
    )
    _store_challenge(principal.session_id, "register", options.challenge)
    return py_webauthn.options_to_json(options)


def _passkey_name(value, user_id: int) -> str:
    if value is None:
        return f"Passkey {passkeys.count_for(user_id) + 1}"
    if not isinstance(value, str):
        raise BadRequestError("name must be a string")
    name = "".join(ch for ch in value if ch.isprintable()).strip()[:NAME_MAX]
    return name or f"Passkey {passkeys.count_for(user_id) + 1}"


def _transports(body: dict) -> str:
    response = body.get("response")
    listed = response.get("transports") if isinstance(response, dict) else None
    if not isinstance(listed, list):
        return "[]"
    return json.dumps(sorted({t for t in listed if isinstance(t, str) and t in _TRANSPORTS}))


def register_finish(principal, body: dict) -> str:
    """Verify the attestation, enrol the passkey, elevate; returns the new cookie value."""
    passkeys.lock_user(principal.user_id)
    _refuse_second_enrolment(principal)
    name = _passkey_name(body.get("name"), principal.user_id)
    challenge = _take_challenge(principal.session_id, "register")
    credential = {key: value for key, value in body.items() if key != "name"}
    _refuse_cross_origin(credential)
    with _refusals():
        verified = py_webauthn.verify_registration_response(
            credential=credential,
            expected_challenge=challenge,
            expected_rp_id=rp_id(),
            expected_origin=expected_origin(),
            require_user_verification=True,
        )
    if len(verified.credential_id) > CREDENTIAL_ID_MAX:
        raise BadRequestError("the credential id is longer than WebAuthn allows", commit=True)
    credential_id = bytes_to_base64url(verified.credential_id)
    taken = db.session.execute(
        select(Passkey.id).where(Passkey.credential_id == credential_id)
    ).first()
    if taken is not None:
        raise BadRequestError("this passkey is already enrolled", commit=True)
    db.session.add(
        Passkey(
            user_id=principal.user_id,
            credential_id=credential_id,
            public_key=verified.credential_public_key,
            sign_count=verified.sign_count,
            name=name,
            transports=_transports(body),
            created_at=clock.now(),
        )
    )
    db.session.flush()
    return _elevate(principal)


def auth_begin(principal) -> str:
    """Request options (JSON text) for navigator.credentials.get()."""
    keys = passkeys.for_user(principal.user_id)
    if not keys:
        raise BadRequestError("this account has no passkey yet; register one first")
    options = py_webauthn.generate_authentication_options(
        rp_id=rp_id(),
        allow_credentials=_descriptors(keys),
        user_verification=UserVerificationRequirement.REQUIRED,
    )
    _store_challenge(principal.session_id, "authenticate", options.challenge)
    return py_webauthn.options_to_json(options)


def auth_finish(principal, body: dict) -> str:
    """Verify the assertion against the caller's passkey, elevate; returns the new cookie."""
    challenge = _take_challenge(principal.session_id, "authenticate")
    credential_id = body.get("id")
    key = None
    if isinstance(credential_id, str):
        key = db.session.execute(
            select(Passkey).where(
                Passkey.credential_id == credential_id, Passkey.user_id == principal.user_id
            )
        ).scalar_one_or_none()
    if key is None:
        raise BadRequestError("unknown passkey: it is not enrolled for this account", commit=True)
    _refuse_cross_origin(body)
    with _refusals():
        verified = py_webauthn.verify_authentication_response(
            credential=body,
            expected_challenge=challenge,
            expected_rp_id=rp_id(),
            expected_origin=expected_origin(),
            credential_public_key=key.public_key,
            credential_current_sign_count=key.sign_count,
            require_user_verification=True,
        )
    # Compare-and-set: of two concurrent uses presenting the same counter, one loses.
    moved = cast(
        CursorResult,
        db.session.execute(
            update(Passkey)
            .where(Passkey.id == key.id, Passkey.sign_count == key.sign_count)
            .values(sign_count=verified.new_sign_count, last_used_at=clock.now())
            .execution_options(synchronize_session=False)
        ),
    ).rowcount
    if moved != 1:
        raise BadRequestError("the passkey was used concurrently; try again", commit=True)
    return _elevate(principal)


def _elevate(principal) -> str:
    cookie = sessions.elevate(principal.session_id)
    sessions.touch_user(principal.user_id)
    return cookie
