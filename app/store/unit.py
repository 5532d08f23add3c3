"""The unit of work: run_unit() (the one runner), commit(), finish().

run_unit() is the runner every entry point ends its units with: the HTTP boundary
(routes/boundary.py) around every view, mcp/jsonrpc.py around every tool call, and
cli/common.py run() around every command's service call. It commits the unit, re-runs it
when the database asks for a retry, and ends a rejected unit as the error says (a
rejection that is itself a state change is committed, any other rolled back: finish()).
Services only flush. Whether a unit writes is declared before its first statement with
intent.reading() / intent.writing() (see intent.py).
"""

from __future__ import annotations

import random
import sqlite3
import time
from contextvars import ContextVar

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


# Set when a write of this unit was committed on its own (postgresql.on_its_own): from
# then on the unit is not re-run (that would write it twice), whatever fails after.
_committed_on_its_own: ContextVar[bool] = ContextVar("committed_on_its_own", default=False)


def note_committed_on_its_own() -> None:
    _committed_on_its_own.set(True)


# Set on a DBAPIError a unit gave up on, so that an enclosing unit (an old-style view
# that calls run_unit inside the HTTP boundary's) does not re-run it all over again.
_GAVE_UP = "ledger_unit_gave_up"


def run_unit(fn, *args, **kwargs):
    """Run fn(*args, **kwargs) then commit, as one unit of work; return fn's result.

    When the database asks for a retry (see retryable) the unit is rolled back and
    run again from the start, up to RETRY_ATTEMPTS times with a short jittered
    pause. Only for units that do all their work through the session after this
    call begins: nothing of a failed attempt survives its rollback, so a re-run
    cannot apply anything twice (a unit that consumes something else, such as a
    stream of lines, uses run_unit_once). A ServiceError ends the unit as finish()
    says (committed when it is a state change, that commit retried like any other)
    and propagates; everything else propagates as from commit().

    Nesting is allowed (a view written the old way, calling commit() or run_unit
    itself, inside the HTTP boundary's unit): the inner call commits its own work and
    retries it; the outer commit then has nothing left to do.
    """
    return _run(RETRY_ATTEMPTS, fn, args, kwargs)


def run_unit_once(fn, *args, **kwargs):
    """run_unit without the re-run: for a unit that cannot be repeated from the start."""
    return _run(1, fn, args, kwargs)


def _run(attempts: int, fn, args, kwargs):
    for attempt in range(1, attempts + 1):
        _committed_on_its_own.set(False)
        try:
            try:
                result = fn(*args, **kwargs)
            except ServiceError as err:
                finish(err)
                raise
            commit()
            return result
        except DBAPIError as exc:
            db.session.rollback()
            if (
                attempt == attempts
                or getattr(exc, _GAVE_UP, False)
                or not retryable(exc)
                or _committed_on_its_own.get()
            ):
                # A refusal raised while the unit ran (not only at commit), such as a
                # balance leaving the 64-bit range, is the caller's 400 as at commit.
                mapped = from_db_error(exc)
                if mapped is None:
                    setattr(exc, _GAVE_UP, True)
                    raise
                raise mapped from exc
            time.sleep(random.uniform(0, 0.005 * attempt))
    raise AssertionError("unreachable")


def rollback() -> None:
    db.session.rollback()


def finish(error: BaseException | None) -> None:
    """End a unit of work after an error: keep it if the error is a state change."""
    if isinstance(error, ServiceError) and error.commit:
        commit()
    else:
        rollback()
