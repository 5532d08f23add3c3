"""One consistent read snapshot, for a reader that reads several times.

PostgreSQL: a REPEATABLE READ transaction (READ COMMITTED would give each statement
its own snapshot), read-only when the reader says so. SQLite: nothing to set, a read
transaction already sees one snapshot in WAL mode (writers carry on meanwhile).

begin_snapshot() pins the session's unit (export, the audit pack, check, verify);
read_snapshot() is a connection of its own for a block (backup, which reads every
table, also when the schema is older than the models).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection

from ..extensions import db
from . import dialect
from .intent import write_intent


def snapshot_options(read_only: bool) -> dict:
    """PostgreSQL's execution options for a snapshot (what SQLite needs is its intent)."""
    options: dict = {"isolation_level": "REPEATABLE READ"}
    if read_only:
        options["postgresql_readonly"] = True
    return options


def begin_snapshot(*, read_only: bool = False) -> None:
    """Start the session's unit of work on one consistent snapshot for several reads.

    Call it before the unit's first statement; a unit already begun keeps what it has
    (so a reader that calls it again, as the audit pack's exports do, changes nothing).
    read_only: PostgreSQL refuses any write in the unit.
    """
    if dialect.is_postgresql() and not db.session().in_transaction():
        db.session.connection(execution_options=snapshot_options(read_only))


@contextmanager
def read_snapshot(engine=None) -> Iterator[Connection]:
    """A read-only connection of its own on one snapshot, for the block (the engine's,
    default the app's): read intent, so plain BEGIN on SQLite and no writer lock."""
    engine = engine if engine is not None else db.engine
    intent = write_intent.set(False)
    try:
        with engine.connect() as conn:
            if dialect.is_postgresql(conn):
                conn.execution_options(**snapshot_options(read_only=True))
            with conn.begin():
                yield conn
    finally:
        write_intent.reset(intent)
