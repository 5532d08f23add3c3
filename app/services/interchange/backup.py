"""Portable backups: every table in one consistent snapshot, as JSON lines.

Format (version 1), one JSON document per line, UTF-8:

    {"format": "ledger-service-backup", "version": 1, "schema_revision": "0001", ...}
    {"table": "users", "columns": ["id", ...], "types": ["integer", ...]}
    [1, "alice@example.com", ...]            one array per row, in column order
    ...                                      further tables, in foreign-key order
    {"end": true, "counts": {"users": 1, ...}}

Values: integers, strings, booleans and null as JSON; dates as YYYY-MM-DD;
timestamps as naive UTC ISO 8601; bytes as standard base64. Secrets are in the
form the store keeps them (token and session digests, password hashes,
passkey public keys), never in the clear, because the store never has them.

Tables the schema marks derived (Table.info["derived"], kept by triggers) are
skipped: the store rebuilds them as the restored rows go in.

Consistency: one snapshot on a connection of its own (store.read_snapshot:
PostgreSQL one REPEATABLE READ, read-only transaction; SQLite one read transaction,
WAL mode letting writers carry on while the snapshot is read). Restoring: see services.restore.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, date, datetime

from alembic.runtime.migration import MigrationContext
from sqlalchemy import (
    Boolean,
    Date,
    DateTime,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    inspect,
    select,
)

from ... import store
from ...extensions import db
from .. import clock
from ..errors import BadRequestError
from ..ledger import audit

FORMAT = "ledger-service-backup"
VERSION = 1
BATCH = 1000


def is_derived(table) -> bool:
    return bool(table.info.get("derived"))


def has_large_rows(table) -> bool:
    """Rows that may be megabytes each (documents' bytes): read and written singly."""
    return bool(table.info.get("large_rows"))


def type_tag(column) -> str:
    kind = column.type
    kind = getattr(kind, "impl_instance", None) or kind
    if isinstance(kind, LargeBinary):
        return "bytes"
    if isinstance(kind, DateTime):
        return "datetime"
    if isinstance(kind, Date):
        return "date"
    if isinstance(kind, Boolean):
        return "boolean"
    if isinstance(kind, Integer):
        return "integer"
    return "text"


def encode(value, tag: str):
    if value is None:
        return None
    if tag == "bytes":
        return base64.b64encode(bytes(value)).decode("ascii")
    if tag == "datetime":
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.isoformat()
    if tag == "date":
        return value.isoformat()
    return value


def decode(value, tag: str):
    if value is None:
        return None
    if tag == "bytes":
        return base64.b64decode(value)
    if tag == "datetime":
        return datetime.fromisoformat(value)
    if tag == "date":
        return date.fromisoformat(value)
    return value


def _columns_present(conn) -> dict[str, set[str]]:
    """The database's own tables and their columns (by name), on the snapshot's connection."""
    inspector = inspect(conn)
    return {
        name: {column["name"] for column in inspector.get_columns(name)}
        for name in inspector.get_table_names()
    }


def _dump(document) -> str:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"


def generate(seal: bool = True) -> Iterator[str]:
    """The backup as lines of text, read from one snapshot of the store.

    The tables and columns are those the database has: at the newest revision, every
    table of the schema; at an older one (serve's backup before it migrates,
    services.interchange.upgrade_backup), the ones that revision has, which restore
    migrates an empty database to before it loads them. seal: PostgreSQL's waiting
    audit events into the chain first (not before a migration: they are backed up as
    they wait, and restore seals them).
    """
    if seal:
        audit.seal()  # PostgreSQL: the trail's waiting events into the chain first
    with store.read_snapshot() as conn:
        heads = sorted(MigrationContext.configure(conn).get_current_heads())
        if not heads:
            raise BadRequestError("the database has no schema yet; there is nothing to back up")
        yield _dump(
            {
                "format": FORMAT,
                "version": VERSION,
                "schema_revision": heads[0] if len(heads) == 1 else heads,
                "source_dialect": store.dialect.name(conn),
                "created_at": clock.iso(clock.now()),
            }
        )
        counts = {}
        present = _columns_present(conn)
        for table in db.metadata.sorted_tables:
            if is_derived(table) or table.name not in present:
                continue
            per = 1 if has_large_rows(table) else BATCH  # documents: one at a time
            if present[table.name] - {c.name for c in table.columns}:
                # A column a later migration drops (an older revision's books, as serve
                # backs them up before it migrates: documents.content_bytes before
                # 0019): the table as the database has it, so nothing is left behind.
                table = Table(table.name, MetaData(), autoload_with=conn)
            columns = [c for c in table.columns if c.name in present[table.name]]
            tags = [type_tag(c) for c in columns]
            yield _dump({"table": table.name, "columns": [c.name for c in columns], "types": tags})
            query = select(*columns).order_by(*table.primary_key.columns)
            result = conn.execute(query.execution_options(yield_per=per))
            n = 0
            for row in result:
                n += 1
                yield _dump([encode(v, t) for v, t in zip(row, tags, strict=True)])
            counts[table.name] = n
        yield _dump({"end": True, "counts": counts})
