"""The backup `serve` writes before it migrates books (docs/export-import-backup.md,
"The backup before an upgrade").

When the schema has migrations pending and the database holds books (an account or a
transaction), serve first writes a backup in the ordinary format (services.backup,
at the schema's current revision, which `ledger-service restore` accepts) to the
instance folder's `backups/`, named `before-upgrade-<UTC time>-<revision>.jsonl.gz`,
owner-only, and keeps the newest KEEP of those (files of any other name there are
left alone). Nothing is written when nothing is pending or the database has no books
(a new instance). The migrations then run in one transaction (migrations/env.py), so
one that fails leaves the books as they were; the caller names this backup.
"""

from __future__ import annotations

import gzip
import os
import re
import tempfile
from pathlib import Path

from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from ...extensions import db
from .. import clock
from . import backup

KEEP = 5
PREFIX = "before-upgrade-"
_NAME = re.compile(rf"^{PREFIX}\d{{8}}T\d{{6}}(\d{{6}})?Z-[\w.-]+\.jsonl\.gz$")
BOOK_TABLES = ("accounts", "transactions")


def pending(migrations_dir: str) -> tuple[str, str] | None:
    """(current revision, newest revision) when migrations are pending on a database
    that has a schema; None when it is at the newest or has no schema at all."""
    newest = ScriptDirectory(migrations_dir).get_current_head() or ""
    with db.engine.connect() as conn:
        heads = MigrationContext.configure(conn).get_current_heads()
    if not heads or newest in heads:
        return None
    return ",".join(sorted(heads)), newest


def holds_books() -> bool:
    """Whether any account or transaction is stored."""
    with db.engine.connect() as conn:
        present = set(inspect(conn).get_table_names())
        for table in BOOK_TABLES:
            if table in present and conn.execute(text(f"SELECT 1 FROM {table} LIMIT 1")).first():
                return True
    return False


def backup_if_pending(migrations_dir: str, folder: Path, keep: int = KEEP) -> Path | None:
    """Write the backup when migrations are pending on books (see the module); its
    path, or None when none was needed. OSError when it cannot be written."""
    state = pending(migrations_dir)
    if state is None or not holds_books():
        return None
    revision = re.sub(r"[^\w.-]", "_", state[0])
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    stamp = clock.now().strftime("%Y%m%dT%H%M%S%fZ")
    path = folder / f"{PREFIX}{stamp}-{revision}.jsonl.gz"
    while path.exists():  # the same instant (a frozen test clock): the next microsecond
        stamp = f"{stamp[:-7]}{int(stamp[-7:-1]) + 1:06d}Z"
        path = folder / f"{PREFIX}{stamp}-{revision}.jsonl.gz"
    fd, tmp = tempfile.mkstemp(prefix=".before-upgrade-", dir=folder)  # owner-only
    os.close(fd)
    try:  # a reader: backup reads on a snapshot of its own (store.read_snapshot)
        with gzip.open(tmp, "wt", encoding="utf-8", newline="") as stream:
            for line in backup.generate(seal=False):
                stream.write(line)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink()
        raise
    rotate(folder, keep)
    return path


def rotate(folder: Path, keep: int = KEEP) -> list[Path]:
    """Delete all but the newest `keep` backups serve wrote (by the time in their
    names); the ones deleted."""
    ours = sorted(p for p in folder.iterdir() if _NAME.match(p.name))
    removed = ours[: max(0, len(ours) - keep)]
    for path in removed:
        path.unlink()
    return removed
