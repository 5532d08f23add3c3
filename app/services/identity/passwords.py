"""Password hashing: argon2 through passlib (the libpass fork), with rehash on verify."""

from __future__ import annotations

from functools import cache

from flask import current_app, has_app_context
from passlib.context import CryptContext


@cache
def _context(fast: bool) -> CryptContext:
    if fast:  # tests only: the same algorithm with a tiny cost
        return CryptContext(
            schemes=["argon2"], argon2__memory_cost=1024, argon2__rounds=1, argon2__parallelism=1
        )
    # passlib's argon2 defaults follow RFC 9106's second recommended profile
    # (argon2id, 64 MiB, t=3, p=4).
    return CryptContext(schemes=["argon2"], argon2__type="ID")


def context() -> CryptContext:
    fast = has_app_context() and bool(current_app.config.get("PASSWORD_HASH_FAST"))
    return _context(fast)


def hash_password(password: str) -> str:
    return context().hash(password)


def verify(password: str, password_hash: str) -> tuple[bool, str | None]:
    """(matches, new_hash_or_None): a new hash is returned when parameters changed."""
    return context().verify_and_update(password, password_hash)


def dummy_hash() -> str:
    """A fixed hash to verify against when the email is unknown (equal timing)."""
    return _dummy(bool(has_app_context() and current_app.config.get("PASSWORD_HASH_FAST")))


@cache
def _dummy(fast: bool) -> str:
    return _context(fast).hash("not a real password, only here to spend the same time")
