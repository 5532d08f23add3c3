"""The read/write intent of the unit of work about to begin.

Declared at every entry point before the unit's first statement: HTTP per route
(routes/support.py), MCP per tool (mcp/tools.py), CLI per command (cli/). On
SQLite a writer starts with BEGIN IMMEDIATE, taking the write lock up front (after
queueing on the WriterLock, waiting under busy_timeout) instead of failing with
SQLITE_BUSY when a read transaction later tries to upgrade; a reader starts with
a plain BEGIN and never touches the writer lock. PostgreSQL ignores the intent.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

write_intent: ContextVar[bool] = ContextVar("write_intent", default=False)


@contextmanager
def intent(write: bool):
    """Run the block (or, as a decorator, the function) with this intent, then restore it.

    The intent is read when the unit's transaction begins: enter before its first
    statement (a transaction already open keeps the mode it began with).
    """
    token = write_intent.set(write)
    try:
        yield
    finally:
        write_intent.reset(token)


def reading():
    """Intent for a unit that only reads (plain BEGIN, no writer lock on SQLite)."""
    return intent(False)


def writing():
    """Intent for a unit that writes (BEGIN IMMEDIATE on SQLite)."""
    return intent(True)


def declare(write: bool) -> None:
    """Set the intent for the rest of this context (a request: see routes/support.py)."""
    write_intent.set(write)


def writes() -> bool:
    return write_intent.get()


sole_write_declared: ContextVar[bool] = ContextVar("sole_write_declared", default=False)


@contextmanager
def sole_write():
    """The caller's promise for the block: its first write is the unit's only one, and
    nothing the unit runs after it belongs with it (no statement that must commit or
    roll back together with it). On PostgreSQL that write may then run as a
    transaction of its own (postgresql.on_its_own), when nothing of the unit has begun
    a transaction before it: its BEGIN and COMMIT round trips are saved. A unit that
    already opened a transaction (an Idempotency-Key claimed, a correction's original
    locked) writes in it as usual, whatever this says.
    """
    token = sole_write_declared.set(True)
    try:
        yield
    finally:
        sole_write_declared.reset(token)


def is_sole_write() -> bool:
    return sole_write_declared.get()
