"""The commit-time error mapping: a store refusal in the caller's words, or None.

The store's refusals (constraint and trigger failures, SQLite's pre-commit balance
check) become the ServiceErrors of services/errors.py here, one way: the service
error tree imports nothing of the store.
"""

from __future__ import annotations

import logging

from sqlalchemy import exc as sa_exc

from ..services.errors import (
    BALANCE_MESSAGE,
    CONFLICT_MESSAGE,
    RANGE_MESSAGE,
    BadRequestError,
    ServiceError,
)
from .sqlite import BalanceViolation

log = logging.getLogger(__name__)

# SQLite reports constraint failures only as text; these are its stable prefixes.
_SQLITE_INTEGRITY_MESSAGES = (
    "UNIQUE constraint failed",
    "FOREIGN KEY constraint failed",
    "NOT NULL constraint failed",
    "CHECK constraint failed",
)

# SQLite: the range triggers on the derived balance tables (migration 0003), and SUM()
# itself when a running total overflows while balances are being updated.
_SQLITE_RANGE_MESSAGES = ("balance out of 64-bit range", "integer overflow")


def sqlstate(exc: BaseException) -> str | None:
    orig = getattr(exc, "orig", None)
    return getattr(orig, "sqlstate", None)


def from_db_error(exc: BaseException) -> ServiceError | None:
    """Translate a store-level refusal into our own words, or None if it is a fault.

    SQLSTATE class 23 (integrity) and P0001 (the balance trigger) are the caller's
    fault and become 400. The driver text is logged, never returned.
    """
    if isinstance(exc, BalanceViolation):
        return BadRequestError(BALANCE_MESSAGE)
    state = sqlstate(exc)
    if state == "P0001":
        log.info("balance trigger refused a commit: %s", exc)
        return BadRequestError(BALANCE_MESSAGE)
    if state == "22003":  # numeric_value_out_of_range: a bigint balance would overflow
        log.info("balance out of range: %s", exc)
        return BadRequestError(RANGE_MESSAGE)
    if isinstance(exc, sa_exc.DBAPIError) and str(getattr(exc, "orig", "")).startswith(
        _SQLITE_RANGE_MESSAGES
    ):
        log.info("balance out of range: %s", exc)
        return BadRequestError(RANGE_MESSAGE)
    if state and state.startswith("23"):
        log.info("integrity error: %s", exc)
        return BadRequestError(CONFLICT_MESSAGE)
    if isinstance(exc, sa_exc.IntegrityError):
        text = str(getattr(exc, "orig", exc))
        if text.startswith(_SQLITE_INTEGRITY_MESSAGES):
            log.info("integrity error: %s", exc)
            return BadRequestError(CONFLICT_MESSAGE)
    return None
