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

from sqlalchemy import event
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


def init_engine_events(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        return
    # This engine's dialect instance (not the class), as store.sqlite does.
    engine.dialect.do_commit = _commit_then(engine.dialect.do_commit)  # type: ignore[method-assign]
    engine.dialect.do_rollback = _forget_then(  # type: ignore[method-assign]
        engine.dialect.do_rollback
    )
    event.listen(engine.pool, "checkin", _forget_on_checkin)
