"""PostgreSQL plumbing: a unit's BEGIN sent with its first statement, and a statement
sent in the same round trip as a unit's COMMIT.

BEGIN with the first statement. psycopg opens a transaction by sending `BEGIN` on its
own and waiting for the answer before the unit's first statement: one round trip of a
POST's four. Instead, a pooled connection is handed out in the driver's autocommit mode
(psycopg then sends no BEGIN of its own) and the dialect's do_execute sends `BEGIN`
and the unit's first statement together in one pipeline (one network write, one
wait), when the connection is idle. From then on the connection is in a transaction
as usual: the following statements run in it, and `commit()` / `rollback()` end it
(psycopg sends COMMIT or ROLLBACK whenever a transaction is open, autocommit or not).
What SQLAlchemy asks for itself is left as it was: a unit run with an isolation level
(begin_snapshot's REPEATABLE READ: the driver leaves autocommit and begins as before)
or in AUTOCOMMIT (no BEGIN at all) does not take this path; a server-side cursor, a
statement without parameters and an executemany send their BEGIN first, on its own.

The audit trail (services/ledger/audit/writing.py) seals a unit's pending events right after
its commit. A separate round trip for that cost as much as the rest of the event, so
the unit asks for it with after_commit(connection, sql) and the dialect's do_commit
sends `COMMIT; <sql>` as one simple query: the server commits, then runs sql as a
transaction of its own. If the COMMIT fails (a deferred trigger's refusal), the
server skips the rest and the driver raises the commit's error, as a plain commit
would. The statement itself must not fail (audit_seal() turns its errors into a
server-log warning): once the COMMIT has succeeded an error could not be told apart
from a failed commit.

The request rides on the pooled connection's info (it outlives one checkout), so a
ROLLBACK and a connection going back to the pool drop it.

A statement on its own. A statement sent while no transaction is open, in autocommit,
is a transaction of its own: atomic, its deferred triggers (the balance check) run at
its end, and it is committed, WAL flush included, before the server answers. Where
that is all a unit needs, BEGIN and COMMIT are round trips for nothing (two of a
POST's three). on_its_own(connection) runs the next statement so, on a pooled
connection handed out as above, when nothing of the unit has begun a transaction yet;
otherwise (a transaction is open, another isolation level, a raw connection, SQLite)
the statement runs in the unit's transaction as usual. Who may ask (see its
docstring): the bearer token's lookup, a read that needs no transaction (under READ
COMMITTED every statement has its own snapshot anyway), and a write its caller
declared the unit's sole write (store.intent.sole_write). After it, the unit's commit
finds nothing open and sends no COMMIT (psycopg's commit() does nothing when idle); a
statement asked for with after_commit() is then sent alone.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

import psycopg
from psycopg.pq import TransactionStatus
from sqlalchemy import event, exc
from sqlalchemy.engine import Engine

from . import unit

_AFTER_COMMIT = "sql_after_commit"  # key in the pooled connection's info


def after_commit(connection, sql: str) -> None:
    """Run sql (no parameters, never failing) right after this unit's COMMIT, in the
    same round trip; connection: the session's SQLAlchemy Connection."""
    connection.connection.info[_AFTER_COMMIT] = sql


def _commit_then(step):
    def run(dbapi_connection):
        sql = dbapi_connection.info.pop(_AFTER_COMMIT, None)
        if sql is None:
            step(dbapi_connection)
            return
        conn = dbapi_connection.driver_connection
        if conn.info.transaction_status == _IDLE:  # the unit's write committed on its own
            conn.execute(sql)
            return
        # No parameters: psycopg sends it as one simple query (both statements, one
        # round trip); the transaction is then over (status idle), as after commit().
        conn.execute("COMMIT; " + sql)

    return run


def _forget_then(step):
    def run(dbapi_connection):
        _forget(dbapi_connection)
        step(dbapi_connection)

    return run


def _forget(connection) -> None:
    with contextlib.suppress(AttributeError, NotImplementedError):  # a raw or ad-hoc connection
        connection.info.pop(_AFTER_COMMIT, None)


def _forget_on_checkin(_dbapi_connection, record) -> None:
    if record is not None:
        record.info.pop(_AFTER_COMMIT, None)


# A pooled connection is pinged before use only when it sat idle in the pool longer
# than this (or was never used): the pessimistic check SQLAlchemy's pool_pre_ping makes
# on every checkout, without its round trip on every request of a busy service. A
# database restart takes longer than this, so after one every pooled connection is
# idle past it and is pinged and replaced, and the first request works (as with
# pool_pre_ping; tests/system/test_crash.py).
PING_AFTER_IDLE_SECONDS = 0.1
_CHECKED_IN_AT = "ledger_checked_in_at"  # key in the pooled connection record's info


def _note_checkin(_dbapi_connection, record) -> None:
    if record is not None:
        record.info[_CHECKED_IN_AT] = time.monotonic()


def _ping_when_idle(engine: Engine):
    def checkout(dbapi_connection, record, _proxy) -> None:
        checked_in = record.info.pop(_CHECKED_IN_AT, None)
        if checked_in is not None and time.monotonic() - checked_in < PING_AFTER_IDLE_SECONDS:
            _autocommit_until_first_statement(dbapi_connection)
            return
        try:
            alive = engine.dialect.do_ping(dbapi_connection)
        except engine.dialect.loaded_dbapi.Error as err:
            if engine.dialect.is_disconnect(err, dbapi_connection, None):
                alive = False
            else:
                raise
        if not alive:
            # The pool discards this connection and checks out a fresh one.
            raise exc.DisconnectionError("the pooled connection is gone")
        _autocommit_until_first_statement(dbapi_connection)

    return checkout


# Set on a driver connection this module put in autocommit mode (so the unit's BEGIN
# goes with its first statement); cleared when SQLAlchemy sets an isolation level.
_BEGIN_WITH_FIRST = "_ledger_begin_with_first"
_IDLE = TransactionStatus.IDLE


def _autocommit_until_first_statement(dbapi_connection) -> None:
    """Hand the connection out in the driver's autocommit mode, its BEGIN left to
    _begin_with_first (only at the default isolation level, when no transaction is open)."""
    conn = getattr(dbapi_connection, "driver_connection", dbapi_connection)
    if (
        isinstance(conn, psycopg.Connection)
        and not conn.autocommit
        and conn.isolation_level in (None, psycopg.IsolationLevel.READ_COMMITTED)
        and conn.info.transaction_status == _IDLE
    ):
        conn.autocommit = True
        setattr(
            conn,
            _BEGIN_WITH_FIRST,
            b"BEGIN" if conn.isolation_level is None else b"BEGIN ISOLATION LEVEL READ COMMITTED",
        )


# Set on a driver connection for its next statement only (on_its_own), and once that
# statement has run on its own without an error (so it is committed).
_ON_ITS_OWN = "_ledger_on_its_own"
_RAN_ON_ITS_OWN = "_ledger_ran_on_its_own"


@contextlib.contextmanager
def on_its_own(connection, when: bool = True, writes: bool | Callable[[], bool] = False):
    """Run the block's statement (one) as a transaction of its own, when `when` and the
    unit has no transaction open on this PostgreSQL connection yet (see the module
    docstring); otherwise in the unit's transaction as usual. connection: the
    session's SQLAlchemy Connection. Yields whether it runs on its own.

    Only for a read that needs no transaction, or for a write that the caller declared
    the unit's sole write: once it has run, it is committed whatever the unit does
    next. A write (`writes`) that ran so is noted (unit.committed_on_its_own): the unit
    is then never re-run, which would write it twice. For a statement that may write
    nothing, `writes` is a function asked once the block is done: whether it wrote
    (a statement that wrote nothing leaves the unit free to be re-run).
    """
    conn = getattr(connection.connection, "driver_connection", None)
    alone = (
        when
        and isinstance(conn, psycopg.Connection)
        and getattr(conn, _BEGIN_WITH_FIRST, None) is not None
        and conn.autocommit
        and conn.info.transaction_status == _IDLE
    )
    if not alone:
        yield False
        return
    setattr(conn, _ON_ITS_OWN, True)
    try:
        yield True
    finally:
        with contextlib.suppress(AttributeError):
            delattr(conn, _ON_ITS_OWN)
        if getattr(conn, _RAN_ON_ITS_OWN, False):
            delattr(conn, _RAN_ON_ITS_OWN)
            # committed, even if the block raised after it
            if writes() if callable(writes) else writes:
                unit.note_committed_on_its_own()


def _ran_alone(conn, step, cursor, statement, rest) -> bool:
    """Run the statement on its own (autocommit: a transaction of its own) if
    on_its_own asked for it; whether it did. Asked once, and only by the two runners
    below once they found the connection in autocommit with nothing open."""
    if not getattr(conn, _ON_ITS_OWN, False):
        return False
    delattr(conn, _ON_ITS_OWN)
    step(cursor, statement, *rest)
    setattr(conn, _RAN_ON_ITS_OWN, True)  # no error: committed
    return True


def _begin_with_first(step):
    """dialect.do_execute: BEGIN and the unit's first statement in one round trip (see
    the module docstring)."""

    def run(cursor, statement, *rest):
        conn = cursor.connection
        begin = getattr(conn, _BEGIN_WITH_FIRST, None)
        if begin is None or not conn.autocommit or conn.info.transaction_status != _IDLE:
            return step(cursor, statement, *rest)
        if _ran_alone(conn, step, cursor, statement, rest):
            return None
        if (
            not (rest and rest[0])
            or isinstance(cursor, psycopg.ServerCursor)
            or conn.info.pipeline_status
        ):
            # A statement without parameters (psycopg sends it as a simple query, which
            # may hold several commands: a pipeline refuses that), a server-side cursor,
            # a pipeline already open: BEGIN on its own first, as psycopg would.
            conn.execute(begin)
            return step(cursor, statement, *rest)
        with conn.pipeline():
            conn.execute(begin)
            step(cursor, statement, *rest)
        return None

    return run


def _begin_first(step):
    """dialect.do_executemany and do_execute_no_params: BEGIN first, on its own, as
    psycopg would (executemany runs its own pipeline; a statement without parameters
    goes as a simple query, which may hold several commands: a pipeline refuses that)."""

    def run(cursor, statement, *rest):
        conn = cursor.connection
        begin = getattr(conn, _BEGIN_WITH_FIRST, None)
        idle = conn.autocommit and conn.info.transaction_status == _IDLE
        if begin is None or not idle:
            return step(cursor, statement, *rest)
        if _ran_alone(conn, step, cursor, statement, rest):
            return None
        conn.execute(begin)
        return step(cursor, statement, *rest)

    return run


def _isolation_then_forget(step):
    """dialect.set_isolation_level: SQLAlchemy's own level (or AUTOCOMMIT) holds from now."""

    def run(dbapi_connection, level):
        conn = getattr(dbapi_connection, "driver_connection", dbapi_connection)
        with contextlib.suppress(AttributeError):
            delattr(conn, _BEGIN_WITH_FIRST)
        step(dbapi_connection, level)

    return run


def init_engine_events(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        return
    event.listen(engine.pool, "checkin", _note_checkin)
    event.listen(engine.pool, "checkout", _ping_when_idle(engine))
    # This engine's dialect instance (not the class), as store.sqlite does.
    engine.dialect.do_commit = _commit_then(engine.dialect.do_commit)  # type: ignore[method-assign]
    engine.dialect.do_rollback = _forget_then(  # type: ignore[method-assign]
        engine.dialect.do_rollback
    )
    event.listen(engine.pool, "checkin", _forget_on_checkin)
    dialect = engine.dialect
    dialect.do_execute = _begin_with_first(dialect.do_execute)  # type: ignore[method-assign]
    dialect.do_execute_no_params = _begin_first(  # type: ignore[method-assign]
        dialect.do_execute_no_params
    )
    dialect.do_executemany = _begin_first(dialect.do_executemany)  # type: ignore[method-assign]
    dialect.set_isolation_level = _isolation_then_forget(  # type: ignore[method-assign]
        dialect.set_isolation_level
    )
