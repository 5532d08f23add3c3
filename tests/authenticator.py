"""A software WebAuthn authenticator for ceremony tests.

Real ES256 keys (P-256, `cryptography`) and real signatures; `none` attestation;
output in exactly the shape of a browser's `PublicKeyCredential.toJSON()`. The
CBOR it needs (maps, byte and text strings, small integers) is encoded here by
hand, independently of the cbor2 library the server uses to decode it, so an
encoding mistake on one side cannot hide a mistake on the other.

Knobs for the refusals: `user_verified=False`, `origin=`, `cross_origin=True` (the
ceremony ran in a frame of another origin), `rp_id=`, `counter=`,
`challenge=` (answer another one), `unknown_credential=True` (a key the server
never saw), `id_length=` (registration); `credential_id=` picks which of its
credentials answers an assertion.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

FLAG_UP = 0x01  # user present
FLAG_UV = 0x04  # user verified
FLAG_AT = 0x40  # attested credential data included
COSE_ES256 = -7
AAGUID = bytes(16)  # an all-zero AAGUID, as `none` attestation usually gives


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def from_b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# --- minimal CBOR (RFC 8949), definite lengths only ----------------------------


def _head(major: int, value: int) -> bytes:
    if value < 24:
        return bytes([major << 5 | value])
    for info, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
        if value < 1 << (8 * struct.calcsize(fmt)):
            return bytes([major << 5 | info]) + struct.pack(fmt, value)
    raise ValueError("integer too large for CBOR")


def cbor(value) -> bytes:
    if isinstance(value, bool):
        return b"\xf5" if value else b"\xf4"
    if isinstance(value, int):
        return _head(0, value) if value >= 0 else _head(1, -1 - value)
    if isinstance(value, bytes):
        return _head(2, len(value)) + value
    if isinstance(value, str):
        raw = value.encode("utf-8")
        return _head(3, len(raw)) + raw
    if isinstance(value, list):
        return _head(4, len(value)) + b"".join(cbor(v) for v in value)
    if isinstance(value, dict):
        return _head(5, len(value)) + b"".join(cbor(k) + cbor(v) for k, v in value.items())
    raise TypeError(f"cannot CBOR-encode {type(value).__name__}")


# --- the authenticator ---------------------------------------------------------


class Credential:
    def __init__(self, credential_id: bytes, user_handle: bytes):
        self.id = credential_id
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.user_handle = user_handle
        self.counter = 0

    def cose_public_key(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        return cbor(
            {
                1: 2,  # kty: EC2
                3: COSE_ES256,  # alg
                -1: 1,  # crv: P-256
                -2: numbers.x.to_bytes(32, "big"),
                -3: numbers.y.to_bytes(32, "big"),
            }
        )

    def spki(self) -> bytes:
        return self.key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )


class SoftAuthenticator:
    """One platform authenticator holding any number of credentials."""

    def __init__(self, rp_id: str = "localhost", origin: str = "http://localhost:38080"):
        self.rp_id = rp_id
        self.origin = origin
        self.credentials: dict[str, Credential] = {}

    # navigator.credentials.create()
    def create(
        self,
        options: dict,
        *,
        user_verified: bool = True,
        origin: str | None = None,
        rp_id: str | None = None,
        challenge: str | None = None,
        counter: int = 0,
        id_length: int = 32,
        cross_origin: bool = False,
    ) -> dict:
        rp = rp_id or options["rp"]["id"]
        credential = Credential(os.urandom(id_length), from_b64url(options["user"]["id"]))
        credential.counter = counter
        client_data = self._client_data(
            "webauthn.create", challenge or options["challenge"], origin, cross_origin
        )
        attested = (
            AAGUID
            + struct.pack(">H", len(credential.id))
            + credential.id
            + credential.cose_public_key()
        )
        auth_data = self._auth_data(rp, user_verified, counter, FLAG_AT) + attested
        attestation = cbor({"fmt": "none", "attStmt": {}, "authData": auth_data})
        self.credentials[b64url(credential.id)] = credential
        return self._to_json(
            credential,
            {
                "clientDataJSON": b64url(client_data),
                "attestationObject": b64url(attestation),
                "authenticatorData": b64url(auth_data),
                "transports": ["hybrid", "internal"],
                "publicKeyAlgorithm": COSE_ES256,
                "publicKey": b64url(credential.spki()),
            },
        )

    # navigator.credentials.get()
    def get(
        self,
        options: dict,
        *,
        user_verified: bool = True,
        origin: str | None = None,
        rp_id: str | None = None,
        challenge: str | None = None,
        counter: int | None = None,
        credential_id: str | None = None,
        unknown_credential: bool = False,
        cross_origin: bool = False,
    ) -> dict:
        if unknown_credential:
            credential = Credential(os.urandom(32), b"stranger")
        else:
            credential = self._pick(options, credential_id)
        # A real authenticator increments its counter on every assertion.
        credential.counter = credential.counter + 1 if counter is None else counter
        client_data = self._client_data(
            "webauthn.get", challenge or options["challenge"], origin, cross_origin
        )
        auth_data = self._auth_data(
            rp_id or options.get("rpId", self.rp_id), user_verified, credential.counter, 0
        )
        signed = auth_data + hashlib.sha256(client_data).digest()
        signature = credential.key.sign(signed, ec.ECDSA(hashes.SHA256()))
        return self._to_json(
            credential,
            {
                "clientDataJSON": b64url(client_data),
                "authenticatorData": b64url(auth_data),
                "signature": b64url(signature),
                "userHandle": b64url(credential.user_handle),
            },
        )

    @staticmethod
    def _to_json(credential: Credential, response: dict) -> dict:
        """The outer shape of PublicKeyCredential.toJSON()."""
        return {
            "id": b64url(credential.id),
            "rawId": b64url(credential.id),
            "type": "public-key",
            "response": response,
            "clientExtensionResults": {},
            "authenticatorAttachment": "platform",
        }

    def _pick(self, options: dict, credential_id: str | None) -> Credential:
        if credential_id is not None:
            return self.credentials[credential_id]
        allowed = [c["id"] for c in options.get("allowCredentials", [])]
        for cid in allowed or list(self.credentials):
            if cid in self.credentials:
                return self.credentials[cid]
        raise LookupError("no credential of this authenticator is allowed")

    def _client_data(
        self, kind: str, challenge: str, origin: str | None, cross_origin: bool = False
    ) -> bytes:
        data = {
            "type": kind,
            "challenge": challenge,
            "origin": origin or self.origin,
            "crossOrigin": cross_origin,
        }
        if cross_origin:  # a browser then also names the top-level page's origin
            data["topOrigin"] = "https://framing.example"
        return json.dumps(
            data,
            separators=(",", ":"),
        ).encode("utf-8")

    @staticmethod
    def _auth_data(rp_id: str, user_verified: bool, counter: int, extra_flags: int) -> bytes:
        flags = FLAG_UP | (FLAG_UV if user_verified else 0) | extra_flags
        rp_hash = hashlib.sha256(rp_id.encode("utf-8")).digest()
        return rp_hash + bytes([flags]) + struct.pack(">I", counter)
