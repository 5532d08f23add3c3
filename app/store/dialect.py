"""The store's answers to dialect questions, and its INSERT ... ON CONFLICT builder.

Services ask here, never `dialect.name`: is_postgresql() / is_sqlite() for a choice
between two SQL texts (a row lock, an advisory lock, a date function), name() to pick
a statement built once per dialect (per_dialect), and insert() / upsert() for an
INSERT that skips or updates the row it collides with. Both stores spell ON CONFLICT
alike (on_conflict_do_nothing / on_conflict_do_update), so one builder serves both.
int_array(): the one text literal of a PostgreSQL integer array a statement casts.
as_date(): a DATE column's value as a driver gives it without SQLAlchemy's result
types (SQLite: its ISO text), as a date.
in_chunks(): values cut into IN lists of at most IN_LIST_MAX, one statement each
(SQLite's oldest builds take at most 999 parameters a statement).

A bind is anything with a `.dialect` (a Connection, an Engine); by default the
session's. Only two stores are served: whatever is not PostgreSQL is SQLite.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import date
from typing import Any, TypeVar

from sqlalchemy.dialects import postgresql as _postgresql
from sqlalchemy.dialects import sqlite as _sqlite

from ..extensions import db

POSTGRESQL = "postgresql"
SQLITE = "sqlite"
DIALECTS = (POSTGRESQL, SQLITE)
_INSERT = {POSTGRESQL: _postgresql.insert, SQLITE: _sqlite.insert}
IN_LIST_MAX = 900  # values per IN list: under SQLite's oldest parameter limit (999)

T = TypeVar("T")


def as_date(value) -> date:
    """A DATE column's value as the driver gives it (PostgreSQL: a date; SQLite: its
    stored ISO text), as a date."""
    return value if isinstance(value, date) else date.fromisoformat(value)


def name(bind=None) -> str:
    """ "postgresql" or "sqlite": the store behind bind (default: the session's)."""
    if bind is None:
        bind = db.session.get_bind()
    return POSTGRESQL if bind.dialect.name == POSTGRESQL else SQLITE


def is_postgresql(bind=None) -> bool:
    return name(bind) == POSTGRESQL


def is_sqlite(bind=None) -> bool:
    return name(bind) == SQLITE


def insert(table, dialect: str | None = None):
    """The dialect's INSERT for table (a model or Table), which has the ON CONFLICT
    clauses; dialect: one of DIALECTS (default: the session's store)."""
    return _INSERT[dialect if dialect is not None else name()](table)


def upsert(table, values: Mapping[str, Any], key=None, set_: Mapping[str, Any] | None = None):
    """INSERT values; where a row with the same key exists, UPDATE its set_ columns, or
    leave it as it is when set_ is None (ON CONFLICT DO NOTHING). key: the conflict
    target's column names (default: the primary key when updating; any conflict when
    skipping). The session's dialect."""
    statement = insert(table).values(**values)
    if set_ is None:
        return statement.on_conflict_do_nothing(index_elements=key)
    if key is None:
        key = [column.name for column in _table(table).primary_key.columns]
    return statement.on_conflict_do_update(index_elements=key, set_=dict(set_))


def int_array(values) -> str:
    """A PostgreSQL integer array as one text literal, `{1,-2,3}`, for a parameter the SQL
    casts (CAST(:ids AS bigint[])): psycopg's per-element array dumping costs more than
    the query for thousands of ints, and picks int2/int4/int8 by each value."""
    return "{" + ",".join(str(int(v)) for v in values) + "}"


def in_chunks(values: Sequence[T]) -> Iterator[Sequence[T]]:
    """values in order, in slices of at most IN_LIST_MAX: one IN list (one statement)
    each, so a lookup, update or delete of any number of ids stays under the limit."""
    for i in range(0, len(values), IN_LIST_MAX):
        yield values[i : i + IN_LIST_MAX]


def per_dialect(build: Callable[[Callable], Any]) -> dict[str, Any]:
    """A statement built once for each store, as {dialect name: statement}, for a hot
    path that picks its own with name(connection) (compiled once, then cached).
    build(insert) gets the dialect's insert (see insert()) and returns the statement."""
    return {dialect: build(_INSERT[dialect]) for dialect in DIALECTS}


def _table(table):
    return getattr(table, "__table__", table)
