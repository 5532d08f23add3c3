"""Secrets: tokens with a visible prefix, their digests, and constant-time comparison."""

import hashlib
import hmac
import secrets

TOKEN_PREFIX = "svc_"
USER_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTVWXYZ23456789"


def new_token() -> str:
    """A bearer token: prefix + 256 bits of randomness (43 base64url characters)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def new_secret() -> str:
    """256 random bits without prefix (session ids, codes)."""
    return secrets.token_urlsafe(32)


def digest(value: str) -> str:
    """SHA-256 hex digest: the only form in which secrets are stored."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


def new_user_code() -> str:
    chars = "".join(secrets.choice(USER_CODE_ALPHABET) for _ in range(8))
    return f"{chars[:4]}-{chars[4:]}"
