"""The SQLite writer queue: a thread lock, then a file lock across processes."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import weakref

try:
    import fcntl
except ImportError:  # Windows: writers of one process still queue on the thread lock
    fcntl = None  # type: ignore[assignment]  # checked before every use

log = logging.getLogger(__name__)


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


def _flock_within(fd: int, timeout: float, owner: WriterLock | None = None) -> bool:
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
        # The thread holds `owner`, and owner.close_file() waits for no waiter, so the
        # descriptor stays open (and its number unshared) while this thread uses it.
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:
                return
            with state:
                if abandoned:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                else:
                    got.set()
        finally:
            if owner is not None:
                owner.waiter_done()

    if owner is not None:
        owner.waiter_started()
    threading.Thread(target=wait, name="sqlite-writer-flock", daemon=True).start()
    if got.wait(timeout):
        return True
    with state:
        if got.is_set():
            return True
        abandoned = True
    return False


def _close_quietly(fd: int, pid: int) -> None:
    if pid == os.getpid():  # a forked child never closes its parent's descriptor number
        with contextlib.suppress(OSError):
            os.close(fd)


class WriterLock:
    """One SQLite database's writer queue: a thread lock, then a file lock across processes."""

    def __init__(self, database_path: str | None):
        self._threads = threading.Lock()
        self.path = f"{database_path}-writer.lock" if database_path and fcntl else None
        self._fd: int | None = None
        self._fd_pid: int | None = None
        self._file_held = False
        self._closer: weakref.finalize | None = None
        self._waiters = 0  # helper threads still blocked in flock on the file
        self._waiters_lock = threading.Lock()

    def waiter_started(self) -> None:
        with self._waiters_lock:
            self._waiters += 1

    def waiter_done(self) -> None:
        with self._waiters_lock:
            self._waiters -= 1

    def _file(self, path: str) -> int:
        if self._fd is None or self._fd_pid != os.getpid():  # opened again after a fork
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            self._fd_pid = os.getpid()
            # Closed when the lock goes (its engine was collected) or at close_file():
            # a process that makes many apps (the test suite) must not run out of file
            # descriptors; past 1024 a waitress server's select() fails and it stops.
            self._closer = weakref.finalize(self, _close_quietly, self._fd, self._fd_pid)
        return self._fd

    def close_file(self) -> None:
        """Close the lock file while no writer holds it (it opens again at the next
        write): called when the engine is disposed."""
        if not self._threads.acquire(blocking=False):
            return  # a writer is at work: the file stays open for it
        try:
            with self._waiters_lock:
                waiting = self._waiters
            if (
                self._fd is not None
                and not self._file_held
                and not waiting
                and self._closer is not None
            ):
                self._closer()
                self._fd = None
        finally:
            self._threads.release()

    def acquire(self, timeout: float) -> bool:
        """True once this thread holds the lock; False if not within timeout seconds."""
        deadline = time.monotonic() + timeout
        if not self._threads.acquire(timeout=timeout):
            return False
        if self.path is None:
            return True
        try:
            self._file_held = _flock_within(
                self._file(self.path), max(0.0, deadline - time.monotonic()), self
            )
        except OSError:
            log.warning("SQLite writer file lock unavailable at %s", self.path, exc_info=True)
        # Without the file lock (not had in time, or none possible) this writer goes
        # on holding the thread lock alone; SQLite's busy handler orders it against
        # the others. The file lock only saves waiting time: correctness is SQLite's.
        return True

    def release(self) -> None:
        if self._file_held:
            self._file_held = False
            assert self._fd is not None  # the file lock is only ever held on an open file
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            except OSError:
                log.warning("could not release the SQLite writer file lock", exc_info=True)
        self._threads.release()

    def locked(self) -> bool:
        return self._threads.locked() or self._file_held
