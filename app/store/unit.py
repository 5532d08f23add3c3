"""The unit of work: commit(), run_unit(), finish(), begin_snapshot().

commit() is the single unit-of-work boundary that routes, MCP tools and CLI
commands use; services only flush. Whether a unit writes is declared before its
first statement with intent.reading() / intent.writing() (see intent.py).
"""

from __future__ import annotations

import random
import sqlite3
import time

from sqlalchemy.exc import DBAPIError

from ..extensions import db
from ..services.errors import ServiceError
from .refusals import from_db_error, sqlstate
from .sqlite import BalanceViolation


def commit() -> None:
    """Commit the unit of work; a store refusal becomes a ServiceError, the rest re-raises.

    A statement the unit asked for with after_commit() (PostgreSQL: the audit trail's
    seal) goes to the database with the COMMIT, in the same round trip (postgresql.py).
    """
    try:
        db.session.commit()
    except (DBAPIError, BalanceViolation) as exc:
        db.session.rollback()
        mapped = from_db_error(exc)
        if mapped is None:
            raise
        raise mapped from exc


# PostgreSQL asks for a retry with serialization_failure and deadlock_detected; SQLite
# with "database is locked" once busy_timeout has run out. The work was rolled back,
# so re-running the whole unit is safe.
RETRYABLE_SQLSTATES = frozenset({"40001", "40P01"})
RETRY_ATTEMPTS = 5


def retryable(exc: BaseException) -> bool:
    if sqlstate(exc) in RETRYABLE_SQLSTATES:
        return True
    orig = getattr(exc, "orig", None)
    return isinstance(orig, sqlite3.OperationalError) and "database is locked" in str(orig)


def run_unit(fn, *args, **kwargs):
    """Run fn(*args, **kwargs) then commit, as one unit of work; return fn's result.

    When the database asks for a retry (see retryable) the unit is rolled back and
    run again from the start, up to RETRY_ATTEMPTS times with a short jittered
    pause. Only for units that do all their work through the session after this
    call begins: nothing of a failed attempt survives its rollback, so a re-run
    cannot apply anything twice. Everything else propagates as from commit().
    """
    for attempt in range(1, RETRY_ATTEMPTS + 1):
        try:
            result = fn(*args, **kwargs)
            commit()
            return result
        except DBAPIError as exc:
            db.session.rollback()
            if attempt == RETRY_ATTEMPTS or not retryable(exc):
                # A refusal raised while the unit ran (not only at commit), such as a
                # balance leaving the 64-bit range, is the caller's 400 as at commit.
                mapped = from_db_error(exc)
                if mapped is None:
                    raise
                raise mapped from exc
            time.sleep(random.uniform(0, 0.005 * attempt))
    raise AssertionError("unreachable")


def begin_snapshot() -> None:
    """Start the unit of work on one consistent snapshot for several reads.

    PostgreSQL: REPEATABLE READ (READ COMMITTED would give each statement its own).
    SQLite: a read transaction already sees one snapshot in WAL mode.
    """
    if db.session.get_bind().dialect.name == "postgresql":
        db.session.connection(execution_options={"isolation_level": "REPEATABLE READ"})


def rollback() -> None:
    db.session.rollback()


def finish(error: BaseException | None) -> None:
    """End a unit of work after an error: keep it if the error is a state change."""
    if isinstance(error, ServiceError) and error.commit:
        commit()
    else:
        rollback()
