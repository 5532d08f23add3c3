"""Restore a backup (services.backup's format) into an empty database of either dialect.

Steps: read and check the header; refuse a target that holds data; migrate the
target to the schema revision the backup names; insert every table in the
file's (foreign-key) order in ONE database transaction, so the deferred balance
trigger on PostgreSQL sees each transaction together with its entries and a
failed restore leaves nothing behind; finally move PostgreSQL's id sequences
past the restored ids. The caller commits, then upgrades to the newest schema.

"Empty" means no table has rows except those the migrations seed themselves
(the settings row and the first-party OAuth clients), which the backup's rows
replace. A database with no tables at all is empty too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from alembic.script import ScriptDirectory
from sqlalchemy import MetaData, delete, func, insert, inspect, select, text

from ...extensions import db
from ...store import dialect
from ..errors import BadRequestError
from .backup import FORMAT, VERSION, decode, has_large_rows, is_derived

BATCH = 500
# Rows the migrations seed; they may be present in an otherwise empty target.
SEEDED = {
    "settings": "TRUE",
    "oauth_clients": "NOT dynamic AND first_used_at IS NULL",
}


def read_header(lines: Iterator[str]) -> dict:
    first = next(lines, "")
    try:
        header = json.loads(first)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise BadRequestError("this is not a ledger-service backup file")
    if header.get("version") != VERSION:
        raise BadRequestError(
            f"backup format version {header.get('version')} is not supported (expected {VERSION})"
        )
    revisions = header.get("schema_revision")
    revisions = [revisions] if isinstance(revisions, str) else revisions
    if not revisions or not all(isinstance(r, str) for r in revisions):
        raise BadRequestError("the backup does not name its schema revision")
    header["revisions"] = revisions
    return header


def check_revisions_known(revisions: list[str], migrations_dir: str) -> None:
    script = ScriptDirectory(migrations_dir)
    for rev in revisions:
        try:
            found = script.get_revision(rev)
        except Exception:  # noqa: BLE001 - alembic raises several kinds for unknown ids
            found = None
        if found is None:
            raise BadRequestError(
                f"the backup names schema revision {rev}, which this version of ledger-service "
                "does not know; restore it with the version that wrote it, or a newer one"
            )


def check_target_schema(current: set[str], revisions: list[str], migrations_dir: str) -> None:
    """The target may be unmigrated or behind the backup's revision, never ahead of it."""
    script = ScriptDirectory(migrations_dir)
    ancestry = {rev.revision for r in revisions for rev in script.iterate_revisions(r, "base")}
    ahead = sorted(current - ancestry)
    if ahead:
        raise BadRequestError(
            f"this database is at schema {', '.join(ahead)}, newer than the backup's "
            f"{', '.join(revisions)}: restore into a new, empty database"
        )


def check_empty() -> None:
    """Refuse a target that holds anything beyond the migrations' own seed rows."""
    engine = db.engine
    present = set(inspect(engine).get_table_names())
    with engine.connect() as conn:
        for table in db.metadata.sorted_tables:
            if table.name not in present or is_derived(table):
                continue
            query = select(func.count()).select_from(table)
            if table.name in SEEDED:
                query = query.where(text("NOT (" + SEEDED[table.name] + ")"))
            count = conn.execute(query).scalar_one()
            if count:
                raise BadRequestError(
                    f"the target database is not empty (table {table.name} has {count} rows); "
                    "restore needs a new, empty database"
                )


def _fix_sequences(tables: Iterable) -> None:
    for table in tables:
        for column in table.primary_key.columns:
            sequence = db.session.execute(
                text("SELECT pg_get_serial_sequence(:t, :c)"), {"t": table.name, "c": column.name}
            ).scalar()
            if sequence:
                top = f'SELECT MAX("{column.name}") FROM "{table.name}"'
                db.session.execute(
                    text(f"SELECT setval(:s, COALESCE(({top}), 0) + 1, false)"), {"s": sequence}
                )


def _header_of_table(item, number: int, target: MetaData, derived: set):
    try:
        name, columns, tags = item["table"], list(item["columns"]), list(item["types"])
    except (KeyError, TypeError):
        raise BadRequestError(f"backup line {number} is malformed") from None
    if name in derived:
        return None, columns, tags  # rebuilt by the store's triggers
    if name not in target.tables:
        raise BadRequestError(f"the backup has table {name}, which this schema does not have")
    table = target.tables[name]
    unknown = [c for c in columns if c not in table.columns]
    if unknown or len(tags) != len(columns):
        raise BadRequestError(
            f"the backup has column {name}.{(unknown or ['?'])[0]}, which this schema does not have"
        )
    return table, columns, tags


def load(lines: Iterator[str]) -> dict[str, int]:
    """Insert the rows after the header; returns rows per table. The caller commits."""
    target = MetaData()
    target.reflect(bind=db.session.connection())
    derived = {t.name for t in db.metadata.sorted_tables if is_derived(t)}
    large = {t.name for t in db.metadata.sorted_tables if has_large_rows(t)}
    for name in SEEDED:  # the seeds are replaced by the backup's own rows
        if name in target.tables:
            db.session.execute(delete(target.tables[name]))
    counts: dict[str, int] = {}
    table, columns, tags = None, None, None
    batch: list[dict] = []

    def flush():
        if batch:
            assert table is not None  # a batch is only gathered once a table began
            db.session.execute(insert(table), batch)
            batch.clear()

    for number, line in enumerate(lines, start=2):
        try:
            item = json.loads(line)
        except ValueError:
            raise BadRequestError(f"backup line {number} is not valid JSON") from None
        if isinstance(item, list):
            if columns is None or tags is None:  # set together, by a table's header
                raise BadRequestError(f"backup line {number}: a row before any table")
            if table is None:
                continue  # a derived table's row
            try:
                batch.append({c: decode(v, t) for c, v, t in zip(columns, item, tags, strict=True)})
            except (ValueError, TypeError):
                message = f"backup line {number}: a row that does not fit its table"
                raise BadRequestError(message) from None
            counts[table.name] += 1
            if len(batch) >= (1 if table.name in large else BATCH):
                flush()
            continue
        if not isinstance(item, dict):
            raise BadRequestError(f"backup line {number} is malformed")
        flush()
        if item.get("end"):
            expected = item.get("counts") or {}
            if any(expected.get(name) != n for name, n in counts.items()):
                raise BadRequestError("the backup's row counts do not match its contents")
            if dialect.is_postgresql():
                _fix_sequences(target.tables[name] for name in counts)
            return counts
        table, columns, tags = _header_of_table(item, number, target, derived)
        if table is not None:
            counts[table.name] = 0
    raise BadRequestError("the backup file is incomplete: it ends before its end marker")
