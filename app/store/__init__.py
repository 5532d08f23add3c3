"""The store: the unit of work every entry point uses, and what services ask of the database.

intent.py       reading() / writing(): the unit's declared intent (HTTP per route, MCP
                per tool, CLI per command); read intent never opens a SQLite write
                transaction nor takes the writer lock; sole_write(): the caller's
                promise that a write is the unit's only one
unit.py         run_unit() (the one runner: commit, retry, end a rejected unit),
                run_unit_once(), commit(), finish(), rollback()
snapshot.py     the one consistent read snapshot: begin_snapshot() for the session's
                unit, read_snapshot() for a connection of its own (backup)
dialect.py      the dialect questions (is_postgresql(), is_sqlite(), name()), the
                INSERT ... ON CONFLICT builder (insert(), upsert(), per_dialect()),
                int_array() (a PostgreSQL integer array's one text literal) and
                in_chunks() (IN lists of at most IN_LIST_MAX values, every service's)
fixed.py        FixedStatement: a hot path's statement compiled once per dialect and
                run as driver SQL on the unit's connection (no per-call cache lookup)
refusals.py     the commit-time error mapping: store refusals -> services.errors
sqlite.py       connection pragmas, the pre-commit balance check, BEGIN IMMEDIATE,
                the writer lock handed on after COMMIT (dialect commit and pool events)
postgresql.py   a unit's BEGIN sent with its first statement (one round trip);
                after_commit(): a statement sent in the same round trip as COMMIT
                (the audit trail's seal); on_its_own(): a statement that is a
                transaction of its own (the token lookup; a declared sole write)
writer_lock.py  WriterLock: a thread lock, then a file lock across processes
documents.py    documents' bytes as chunk rows: write() each byte once, read() in
                slices; counts(); lock_quota() (services/ledger/documents.py asks)

May call: services.errors (to name a refusal), extensions, models. Called by
routes, mcp, cli; services ask it dialect questions (store.dialect, never
`dialect.name`), take snapshots (store.snapshot), for the audit seal after_commit, and
on_its_own for a statement that needs no transaction of the unit's.
"""

from . import dialect, postgresql, sqlite
from .fixed import FixedStatement
from .intent import (
    declare,
    intent,
    is_sole_write,
    reading,
    sole_write,
    write_intent,
    writes,
    writing,
)
from .postgresql import after_commit, on_its_own
from .refusals import from_db_error, sqlstate
from .snapshot import begin_snapshot, read_snapshot
from .sqlite import (
    WRITER_WAIT_SECONDS,
    BalanceViolation,
    init_session_events,
    writer_lock,
)
from .unit import (
    RETRY_ATTEMPTS,
    RETRYABLE_SQLSTATES,
    commit,
    finish,
    retryable,
    rollback,
    run_unit,
    run_unit_once,
)
from .writer_lock import WriterLock


def init_engine_events(engine) -> None:
    """Each dialect's plumbing on a new engine (the other dialect's does nothing)."""
    sqlite.init_engine_events(engine)
    postgresql.init_engine_events(engine)


__all__ = [
    "RETRY_ATTEMPTS",
    "RETRYABLE_SQLSTATES",
    "WRITER_WAIT_SECONDS",
    "BalanceViolation",
    "FixedStatement",
    "WriterLock",
    "after_commit",
    "begin_snapshot",
    "commit",
    "declare",
    "finish",
    "dialect",
    "from_db_error",
    "init_engine_events",
    "init_session_events",
    "intent",
    "is_sole_write",
    "on_its_own",
    "read_snapshot",
    "reading",
    "retryable",
    "rollback",
    "run_unit",
    "run_unit_once",
    "sole_write",
    "sqlstate",
    "write_intent",
    "writer_lock",
    "writes",
    "writing",
]
