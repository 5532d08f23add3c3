"""Domain errors raised by services and mapped once per interface.

HTTP: app.errors turns a ServiceError into `{error}` with its status.
MCP: the JSON-RPC layer turns a 400-class ServiceError into -32602, others into -32603.

A rejection that is itself a state change (a login failure counted, a code killed,
a device attempt spent, a slow_down poll time stored) sets `commit = True`: the
boundary then commits the session before answering instead of rolling it back.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


class ServiceError(Exception):
    status = 400
    commit = False

    def __init__(self, message: str, *, commit: bool | None = None):
        super().__init__(message)
        self.message = message
        if commit is not None:
            self.commit = commit


class BadRequest(ServiceError):
    status = 400


class Unauthenticated(ServiceError):
    status = 401


class Forbidden(ServiceError):
    status = 403


class NotFound(ServiceError):
    status = 404


class Conflict(ServiceError):
    status = 409


class UnsupportedMediaType(ServiceError):
    status = 415


class Unprocessable(ServiceError):
    status = 422


class TooManyAttempts(ServiceError):
    status = 429

    def __init__(self, message: str, *, retry_after: int, commit: bool | None = None):
        super().__init__(message, commit=commit)
        self.retry_after = retry_after


# SQLite reports constraint failures only as text; these are its stable prefixes.
_SQLITE_INTEGRITY_MESSAGES = (
    "UNIQUE constraint failed",
    "FOREIGN KEY constraint failed",
    "NOT NULL constraint failed",
    "CHECK constraint failed",
)

# The one sentence every interface answers for a fault (HTTP 500, OAuth server_error,
# MCP -32603); the details go to the server log only.
GENERIC_FAULT = "something went wrong on the server; the details are in the server log"

BALANCE_MESSAGE = "the transaction does not balance: its entries must number at least 2 and sum to 0"
RANGE_MESSAGE = (
    "the amounts are too large: an account's balance would leave the signed 64-bit range"
)
# SQLite: the range triggers on the derived balance tables (migration 0003), and SUM()
# itself when a running total overflows while balances are being updated.
_SQLITE_RANGE_MESSAGES = ("balance out of 64-bit range", "integer overflow")
CONFLICT_MESSAGE = "the change conflicts with data already stored (for example an unknown account)"


def sqlstate(exc: BaseException) -> str | None:
    orig = getattr(exc, "orig", None)
    return getattr(orig, "sqlstate", None)


def from_db_error(exc: BaseException) -> ServiceError | None:
    """Translate a store-level refusal into our own words, or None if it is a fault.

    SQLSTATE class 23 (integrity) and P0001 (the balance trigger) are the caller's
    fault and become 400. The driver text is logged, never returned.
    """
    from sqlalchemy import exc as sa_exc

    from ..db import BalanceViolation

    if isinstance(exc, BalanceViolation):
        return BadRequest(BALANCE_MESSAGE)
    state = sqlstate(exc)
    if state == "P0001":
        log.info("balance trigger refused a commit: %s", exc)
        return BadRequest(BALANCE_MESSAGE)
    if state == "22003":  # numeric_value_out_of_range: a bigint balance would overflow
        log.info("balance out of range: %s", exc)
        return BadRequest(RANGE_MESSAGE)
    if isinstance(exc, sa_exc.DBAPIError) and str(getattr(exc, "orig", "")).startswith(
        _SQLITE_RANGE_MESSAGES
    ):
        log.info("balance out of range: %s", exc)
        return BadRequest(RANGE_MESSAGE)
    if state and state.startswith("23"):
        log.info("integrity error: %s", exc)
        return BadRequest(CONFLICT_MESSAGE)
    if isinstance(exc, sa_exc.IntegrityError):
        text = str(getattr(exc, "orig", exc))
        if text.startswith(_SQLITE_INTEGRITY_MESSAGES):
            log.info("integrity error: %s", exc)
            return BadRequest(CONFLICT_MESSAGE)
    return None
