"""PostgreSQL plumbing: a statement sent in the same round trip as a unit's COMMIT.

The audit trail (services/ledger/audit.py) seals a unit's pending events right after
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
"""

from __future__ import annotations

import contextlib
import time

from sqlalchemy import event, exc
from sqlalchemy.engine import Engine

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
        # No parameters: psycopg sends it as one simple query (both statements, one
        # round trip); the transaction is then over (status idle), as after commit().
        dbapi_connection.driver_connection.execute("COMMIT; " + sql)

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

    return checkout


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
