"""Store plumbing: SQLite pragmas, SQLite's pre-commit balance check, and commit().

commit() is the single unit-of-work boundary that routes, MCP tools and CLI
commands use. Services only flush.
"""

from __future__ import annotations

import logging
import os
import random
import sqlite3
import threading
import time
import weakref
from contextvars import ContextVar

from sqlalchemy import event, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from .extensions import db
from .services.errors import ServiceError, from_db_error, sqlstate

try:
    import fcntl
except ImportError:  # Windows: writers of one process still queue on the thread lock
    fcntl = None

log = logging.getLogger(__name__)


class BalanceViolation(Exception):
    """SQLite's equivalent of the PostgreSQL balance trigger's P0001."""


# Transactions touched in this database transaction are noted in
# ledger_balance_pending by SQLite triggers (see the first migration); before
# COMMIT they are re-checked here. A whole transaction deleted is skipped by the join.
# The sum is taken in Python, not with SQL SUM(): SQLite's SUM() raises "integer
# overflow" when a partial sum leaves the 64-bit range even if the total is zero
# (entries 2**62, 2**62, -2**63), which would turn a valid posting into a 500.
# CROSS JOIN makes SQLite start from the (small) pending table whatever its
# statistics say: after ANALYZE of a big ledger, sqlite_stat1 knows transactions
# but not the pending table (empty when analysed), and the planner then scanned
# all of transactions on every commit (39 of the 47 ms a POST took at 1M).
_SQLITE_PENDING_ENTRIES = text(
    """
    SELECT p.transaction_id, e.amount_cents
    FROM ledger_balance_pending AS p
    CROSS JOIN transactions AS t ON t.id = p.transaction_id
    LEFT JOIN entries AS e ON e.transaction_id = t.id
    """
)


def _first_unbalanced(rows) -> int | None:
    """The first transaction id whose entries number fewer than 2 or do not sum to 0."""
    counts: dict[int, int] = {}
    totals: dict[int, int] = {}
    for tx_id, amount in rows:
        counts.setdefault(tx_id, 0)
        totals.setdefault(tx_id, 0)
        if amount is not None:
            counts[tx_id] += 1
            totals[tx_id] += amount
    for tx_id in counts:
        if counts[tx_id] < 2 or totals[tx_id] != 0:
            return tx_id
    return None


def _sqlite_connect_pragmas(dbapi_conn, _record):
    cur = dbapi_conn.cursor()
    # busy_timeout first: switching to WAL needs the database lock, which another
    # process may hold for a while (a migration at start); with the driver's 5 s
    # default a busy machine saw "database is locked" at start-up.
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def _sqlite_begin_immediate_off(dbapi_conn, _record):
    # pysqlite's implicit transaction handling breaks SAVEPOINT and makes BEGIN
    # lazy in surprising ways; take control and emit BEGIN ourselves.
    dbapi_conn.isolation_level = None


# SQLite has one writer at a time. A writer that finds the lock taken waits in
# SQLite's busy handler, which sleeps in steps of up to 100 ms: with several clients
# most of the time went in those sleeps (four clients posted fewer transactions per
# second than one). Writers therefore queue first on a WriterLock, which hands over
# the moment the holder commits or rolls back: the threads of one process on a
# threading.Lock, and (where the OS has flock, with the database in a file) the
# processes sharing the file on an exclusive flock of `<database>-writer.lock` next
# to it, so several `serve` workers or processes behind one proxy hand over as
# promptly. SQLite's own lock and busy_timeout still order everything else (the
# CLI, a foreign client).
_WRITER_HELD = "ledger_sqlite_writer_lock"
WRITER_WAIT_SECONDS = 30  # as busy_timeout; then BEGIN IMMEDIATE waits on its own


def _flock_within(fd: int, timeout: float) -> bool:
    """An exclusive flock of fd, waiting at most timeout seconds: True if had.

    Uncontended, one non-blocking try. Otherwise the wait is a blocking flock, which
    the kernel ends the moment the holder unlocks (polling with sleeps left the lock
    idle between tries: two processes posted no more than one), made in a helper
    thread so that it can be given up after timeout; a wait given up releases the
    lock as soon as it gets it.
    """
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        pass
    state = threading.Lock()
    got = threading.Event()
    abandoned = False

    def wait() -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            return
        with state:
            if abandoned:
                fcntl.flock(fd, fcntl.LOCK_UN)
            else:
                got.set()

    threading.Thread(target=wait, name="sqlite-writer-flock", daemon=True).start()
    if got.wait(timeout):
        return True
    with state:
        if got.is_set():
            return True
        abandoned = True
    return False


class WriterLock:
    """One SQLite database's writer queue: a thread lock, then a file lock across processes."""

    def __init__(self, database_path: str | None):
        self._threads = threading.Lock()
        self.path = f"{database_path}-writer.lock" if database_path and fcntl else None
        self._fd: int | None = None
        self._fd_pid: int | None = None
        self._file_held = False

    def _file(self) -> int:
        if self._fd is None or self._fd_pid != os.getpid():  # opened again after a fork
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            self._fd_pid = os.getpid()
        return self._fd

    def acquire(self, timeout: float) -> bool:
        """True once this thread holds the lock; False if not within timeout seconds."""
        deadline = time.monotonic() + timeout
        if not self._threads.acquire(timeout=timeout):
            return False
        if self.path is None:
            return True
        try:
            self._file_held = _flock_within(self._file(), max(0.0, deadline - time.monotonic()))
        except OSError:
            log.warning("SQLite writer file lock unavailable at %s", self.path, exc_info=True)
        # Without the file lock (not had in time, or none possible) this writer goes
        # on holding the thread lock alone; SQLite's busy handler orders it against
        # the others. The file lock only saves waiting time: correctness is SQLite's.
        return True

    def release(self) -> None:
        if self._file_held:
            self._file_held = False
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            except OSError:
                log.warning("could not release the SQLite writer file lock", exc_info=True)
        self._threads.release()

    def locked(self) -> bool:
        return self._threads.locked() or self._file_held


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


_POOL_RELEASES = {
    "checkin": _on_checkin,
    "reset": _on_reset,
    "invalidate": _on_invalidate,
    "close": _on_close,
    "detach": _on_detach,
}


_ANY_PENDING = text("SELECT 1 FROM ledger_balance_pending LIMIT 1")


def _check_sqlite_balance(session):
    bind = session.get_bind()
    if bind.dialect.name != "sqlite":
        return
    session.flush()
    connection = session.connection()
    at_begin = connection.info.get(_CHANGES_AT_BEGIN)
    if at_begin is not None and connection.connection.dbapi_connection.total_changes == at_begin:
        return  # this transaction changed no row: nothing of it can be pending
    seen = False

    def streamed(result):  # rows as they come: an import may leave many pending
        nonlocal seen
        for row in result:
            seen = True
            yield row

    bad = _first_unbalanced(streamed(session.execute(_SQLITE_PENDING_ENTRIES)))
    if bad is not None:
        raise BalanceViolation(f"transaction {bad} does not balance")
    if not seen and session.execute(_ANY_PENDING).first() is None:
        return  # nothing pending (rows changed elsewhere than the ledger)
    session.execute(text("DELETE FROM ledger_balance_pending"))


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
        database = engine.url.database
        path = os.path.abspath(database) if database and database != ":memory:" else None
        if path and not database.startswith("file:"):  # a URI filename: SQLite's own rules
            event.listen(engine, "do_connect", _private_file_before_connect(path))
        lock = _writer_locks[engine] = WriterLock(path)
        event.listen(engine, "begin", _sqlite_begin_with(lock))
        engine.dialect.do_commit = _released_after(engine.dialect.do_commit)
        engine.dialect.do_rollback = _released_after(engine.dialect.do_rollback)
        for name, listener in _POOL_RELEASES.items():
            event.listen(engine.pool, name, listener)


def init_session_events() -> None:
    # Registered once on the scoped session's class so every session gets it.
    if not event.contains(db.session, "before_commit", _check_sqlite_balance):
        event.listen(db.session, "before_commit", _check_sqlite_balance)


def commit() -> None:
    """Commit the unit of work; a store refusal becomes a ServiceError, the rest re-raises."""
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


# Whether the unit of work will write. On SQLite a writer starts with BEGIN IMMEDIATE,
# taking the write lock up front (waiting under busy_timeout) instead of failing with
# SQLITE_BUSY when a read transaction later tries to upgrade.
write_intent: ContextVar[bool] = ContextVar("write_intent", default=False)
