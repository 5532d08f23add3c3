"""Fixed statements: a hot path's SQL compiled once per dialect, then run as driver SQL.

`Connection.execute(text(...))` spends about 35 µs of Python a statement on SQLAlchemy's
compiled cache (the statement's cache key built and looked up each time) and on the
compiled statement's per-execution setup; `Connection.exec_driver_sql` with the same SQL
and positional parameters skips both (docs/performance.md, "Sixth pass"). It is still
SQLAlchemy's Connection on the session's connection, in the unit's transaction, with
its error wrapping (a driver error is a DBAPIError, which the unit of work maps and
retries as before). FixedStatement keeps the statement written as SQLAlchemy text with
named, typed parameters; what changes is only that it is compiled once per dialect.

For statements whose result needs no type processing (integers, text): the rows come
back as the driver gives them. The parameters still go through their types' bind
processors (a Date, a UTCDateTime), built once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class FixedStatement:
    """statement (a text() or Core construct with named bind parameters) compiled once
    per dialect; execute() runs it with Connection.exec_driver_sql, its parameters by
    position where the driver takes them so (sqlite3's qmark) and by name where it takes
    names (psycopg's pyformat)."""

    def __init__(self, statement):
        self.statement = statement
        self._compiled: dict[Any, tuple[str, tuple, bool]] = {}

    @property
    def text(self) -> str:
        """The statement's SQL as written (a text() statement's text)."""
        return self.statement.text

    def _for(self, dialect) -> tuple[str, tuple, bool]:
        found = self._compiled.get(dialect)
        if found is None:
            compiled = self.statement.compile(dialect=dialect)
            positional = compiled.positiontup is not None
            names = compiled.positiontup if positional else list(compiled.binds)
            slots = []
            for name in names:
                type_ = compiled.binds[name].type
                slots.append((name, type_.dialect_impl(dialect).bind_processor(dialect)))
            found = self._compiled[dialect] = (compiled.string, tuple(slots), positional)
        return found

    def execute(self, connection, params: Mapping[str, Any]):
        """The CursorResult of the statement run on connection with params (by name)."""
        sql, slots, positional = self._for(connection.dialect)
        if positional:
            return connection.exec_driver_sql(
                sql,
                tuple(
                    params[name] if process is None else process(params[name])
                    for name, process in slots
                ),
            )
        return connection.exec_driver_sql(
            sql,
            {
                name: params[name] if process is None else process(params[name])
                for name, process in slots
            },
        )
