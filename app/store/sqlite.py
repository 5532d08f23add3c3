"""SQLite plumbing: connection pragmas, the pre-commit balance check, the writer lock.

Wired once per engine by init_engine_events (PostgreSQL: nothing to wire) and once
per session class by init_session_events. A writer (intent.writing) begins with
BEGIN IMMEDIATE after queueing on the engine's WriterLock; the lock is handed on
right after the database's COMMIT or ROLLBACK (the dialect's do_commit and
do_rollback, wrapped here) and, as a safety net, by pool events.
"""

from __future__ import annotations

import hashlib
import os
import weakref
from collections.abc import Callable

from sqlalchemy import event, text
from sqlalchemy.engine import Engine

from ..extensions import db
from .fixed import FixedStatement
from .intent import write_intent
from .writer_lock import WriterLock

_WRITER_HELD = "ledger_sqlite_writer_lock"
WRITER_WAIT_SECONDS = 30  # as busy_timeout; then BEGIN IMMEDIATE waits on its own


class BalanceViolation(Exception):
    """SQLite's equivalent of the PostgreSQL balance trigger's P0001."""


# Transactions touched in this database transaction are noted in
# ledger_balance_pending by SQLite triggers (see the first migration); before
# COMMIT they are re-checked here, in ONE statement that empties the table and
# returns, for each noted transaction, its entries' amounts as text ("5,-5"; "" for
# a transaction without entries; NULL for one deleted as a whole, which is
# skipped). A refusal rolls the unit back, the DELETE with it. Per noted row the
# subquery reads the header by its key and its entries through
# ix_entries_transaction_listing, so the cost follows the pending rows, never the
# size of the ledger, whatever ANALYZE recorded (tests/store/test_sqlite_statistics.py).
# The sum is taken in Python, not with SQL SUM(): SQLite's SUM() raises "integer
# overflow" when a partial sum leaves the 64-bit range even if the total is zero
# (entries 2**62, 2**62, -2**63), which would turn a valid posting into a 500.
_SQLITE_TAKE_PENDING = text(
    """
    DELETE FROM ledger_balance_pending
    RETURNING transaction_id,
              (SELECT CASE WHEN count(t.id) = 0 THEN NULL
                           ELSE coalesce(group_concat(e.amount_cents), '') END
               FROM transactions AS t
               LEFT JOIN entries AS e ON e.transaction_id = t.id
               WHERE t.id = ledger_balance_pending.transaction_id)
    """
)

_TAKE_PENDING = FixedStatement(_SQLITE_TAKE_PENDING)


def _first_unbalanced(rows) -> int | None:
    """The first transaction id whose entries number fewer than 2 or do not sum to 0,
    from (transaction_id, amounts as "a,b,..." text or None when it is gone) rows."""
    for tx_id, amounts in rows:
        if amounts is None:
            continue  # deleted as a whole: nothing left to balance
        cents = [int(a) for a in amounts.split(",")] if amounts else []
        if len(cents) < 2 or sum(cents) != 0:
            return tx_id
    return None


def ledger_lower(value):
    """SQLite's lower() folds ASCII only: the listing's q filter folds every letter."""
    return value.lower() if isinstance(value, str) else value


def _sqlite_connect_pragmas(dbapi_conn, _record):
    dbapi_conn.create_function("ledger_lower", 1, ledger_lower, deterministic=True)
    cur = dbapi_conn.cursor()
    # busy_timeout first: switching to WAL needs the database lock, which another
    # process may hold for a while (a migration at start); with the driver's 5 s
    # default a busy machine saw "database is locked" at start-up.
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def _sha256_hex(value):
    return None if value is None else hashlib.sha256(value.encode("utf-8")).hexdigest()


def _sqlite_functions(dbapi_conn, _record):
    # sha256_hex(text): the lowercase hex SHA-256 of the text's UTF-8 bytes, as
    # PostgreSQL's encode(sha256(convert_to(text, 'UTF8')), 'hex'): the audit trail
    # appends an event, hash included, in one statement (services/ledger/audit/writing.py).
    dbapi_conn.create_function("sha256_hex", 1, _sha256_hex, deterministic=True)


def _sqlite_begin_immediate_off(dbapi_conn, _record):
    # pysqlite's implicit transaction handling breaks SAVEPOINT and makes BEGIN
    # lazy in surprising ways; take control and emit BEGIN ourselves.
    dbapi_conn.isolation_level = None


# sqlite3's total_changes (rows written by this connection, triggers included) as
# the transaction began: a transaction that changed no row skips the balance check.
_CHANGES_AT_BEGIN = "ledger_sqlite_changes_at_begin"


def _sqlite_begin_with(lock):
    def begin(conn):
        conn.info[_CHANGES_AT_BEGIN] = conn.connection.dbapi_connection.total_changes
        if not write_intent.get():
            conn.exec_driver_sql("BEGIN")
            return
        if conn.info.get(_WRITER_HELD) is lock:  # still held from this connection's last unit
            conn.exec_driver_sql("BEGIN IMMEDIATE")
            return
        held = lock.acquire(WRITER_WAIT_SECONDS)
        try:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        except BaseException:
            if held:
                lock.release()
            raise
        if held:
            conn.info[_WRITER_HELD] = lock

    return begin


_writer_locks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def writer_lock(engine: Engine):
    """The SQLite writer lock (WriterLock) of engine (None on PostgreSQL)."""
    return _writer_locks.get(engine)


def _release_writer(info) -> None:
    lock = info.pop(_WRITER_HELD, None)
    if lock is not None:
        lock.release()


def _released_after(step):
    """The dialect's do_commit / do_rollback, then the writer lock handed on.

    After the database's COMMIT, not before: SQLAlchemy's `commit` event fires
    before it, and a writer let in then could find SQLite still committing and sleep
    in the busy handler. Also runs for the pool's rollback-on-return.
    """

    def run(dbapi_connection):
        try:
            step(dbapi_connection)
        finally:
            try:
                info = dbapi_connection.info
            except (AttributeError, NotImplementedError):  # a raw or ad-hoc connection
                info = None
            if info is not None:
                _release_writer(info)

    return run


def _release_for(record) -> None:
    # Safety net: a connection going back to the pool or away never keeps the lock.
    if record is not None:
        _release_writer(record.info)


# One listener per pool event, each with that event's exact (SQLAlchemy 2.x) signature.
def _on_checkin(dbapi_connection, connection_record):
    _release_for(connection_record)


def _on_reset(dbapi_connection, connection_record, reset_state):
    _release_for(connection_record)


def _on_invalidate(dbapi_connection, connection_record, exception):
    _release_for(connection_record)


def _on_close(dbapi_connection, connection_record):
    _release_for(connection_record)


def _on_detach(dbapi_connection, connection_record):
    _release_for(connection_record)


_POOL_RELEASES: dict[str, Callable[..., None]] = {
    "checkin": _on_checkin,
    "reset": _on_reset,
    "invalidate": _on_invalidate,
    "close": _on_close,
    "detach": _on_detach,
}


def _check_sqlite_balance(session):
    bind = session.get_bind()
    if bind.dialect.name != "sqlite":
        return
    session.flush()
    connection = session.connection()
    at_begin = connection.info.get(_CHANGES_AT_BEGIN)
    if at_begin is not None and connection.connection.dbapi_connection.total_changes == at_begin:
        return  # this transaction changed no row: nothing of it can be pending
    # On the session's connection as driver SQL compiled once (fixed.py): the ORM's
    # execution path cost more than the query (docs/performance.md, "The write path,
    # issue 30"), and Core's per-call cache lookup a third of what is left ("Sixth pass").
    bad = _first_unbalanced(_TAKE_PENDING.execute(connection, {}))
    if bad is not None:
        raise BalanceViolation(f"transaction {bad} does not balance")


# The books, session digests and password hashes live in the SQLite file: it is
# created owner-only (0600) before SQLite first opens it, whatever the umask. SQLite
# gives the -wal, -shm and -journal files it creates the database file's permissions,
# and the writer lock file is opened 0600, so every file of the database is private.
# An existing file keeps its mode.
def _create_private(path: str) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    except OSError:  # no such directory, read-only...: SQLite reports it when it opens
        return
    os.close(fd)


def _private_file_before_connect(path: str):
    def do_connect(dialect, conn_rec, cargs, cparams):
        _create_private(path)  # then the default connect goes ahead

    return do_connect


def init_engine_events(engine: Engine) -> None:
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_begin_immediate_off)
        event.listen(engine, "connect", _sqlite_connect_pragmas)
        event.listen(engine, "connect", _sqlite_functions)
        database = engine.url.database or ""
        path = os.path.abspath(database) if database and database != ":memory:" else None
        if path and not database.startswith("file:"):  # a URI filename: SQLite's own rules
            event.listen(engine, "do_connect", _private_file_before_connect(path))
        lock = _writer_locks[engine] = WriterLock(path)
        event.listen(engine, "begin", _sqlite_begin_with(lock))
        event.listen(engine, "engine_disposed", lambda _engine: lock.close_file())
        # Wrapping this engine's dialect instance (not the class): the lock is handed on
        # right after the database's own COMMIT / ROLLBACK.
        engine.dialect.do_commit = _released_after(  # type: ignore[method-assign]
            engine.dialect.do_commit
        )
        engine.dialect.do_rollback = _released_after(  # type: ignore[method-assign]
            engine.dialect.do_rollback
        )
        for name, listener in _POOL_RELEASES.items():
            event.listen(engine.pool, name, listener)


def init_session_events() -> None:
    # Registered once on the scoped session's class so every session gets it.
    if not event.contains(db.session, "before_commit", _check_sqlite_balance):
        event.listen(db.session, "before_commit", _check_sqlite_balance)
