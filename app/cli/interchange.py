"""CLI commands that move the books in and out: export, import, backup, restore.

Registered on the `ledger-service` group by app.cli.commands.register_commands. Each
command declares its intent (@store.reading() / @store.writing()), parses its
arguments, calls services, commits (or not) and echoes.
"""

from __future__ import annotations

import gzip
import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import click
from flask import current_app
from flask.cli import with_appcontext

from .. import store
from ..extensions import db
from ..services.errors import ServiceError
from ..services.interchange import audit_pack, backup, export, importer, restore
from ..services.ledger import audit, validate
from .common import fail, run, run_once, upgrade_schema


@contextmanager
def _output(path: str | None, binary_gzip: bool = False):
    """A text stream to PATH, written to a temporary file and renamed when complete."""
    if path in (None, "-"):
        yield sys.stdout
        sys.stdout.flush()
        return
    directory = Path(os.path.abspath(path)).parent
    fd, tmp = tempfile.mkstemp(prefix=".ledger-", dir=directory)
    os.close(fd)
    try:
        opener = gzip.open if binary_gzip else open
        with opener(tmp, "wt", encoding="utf-8", newline="") as stream:
            yield stream
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink()
        raise


@contextmanager
def _binary_output(path: str | None):
    """A binary stream to PATH (written to a temporary file, renamed when complete)."""
    if path in (None, "-"):
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    directory = Path(os.path.abspath(path)).parent
    fd, tmp = tempfile.mkstemp(prefix=".ledger-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as stream:
            yield stream
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink()
        raise


def _open_text(path: str):
    with Path(path).open("rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8")
    return Path(path).open(encoding="utf-8")


@click.command("export")
@click.option(
    "--format", "fmt", required=True, type=click.Choice((*export.FORMATS, audit_pack.FORMAT))
)
@click.option("--from", "from_", default=None, metavar="YYYY-MM-DD")
@click.option("--to", default=None, metavar="YYYY-MM-DD")
@click.option("-o", "--output", default=None, help="write to FILE instead of standard output")
@with_appcontext
@store.reading()
def export_command(fmt, from_, to, output):
    """Export the books as an hledger journal, a Beancount file or CSV, or an audit
    pack (a zip of the period's exports, documents, trail head and manifest)."""
    upgrade_schema()
    try:
        start, end = validate.window(from_, to)
    except ServiceError as err:
        fail(err.message)
    if fmt == audit_pack.FORMAT:
        with _binary_output(output) as stream:
            for piece in audit_pack.generate(start, end):
                stream.write(piece)
        store.rollback()
        return
    with _output(output) as stream:
        for chunk in export.generate(fmt, start, end):
            stream.write(chunk)
    store.rollback()


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--format", "fmt", required=True, type=click.Choice(tuple(importer.PARSERS)))
@click.option("--dry-run", is_flag=True, help="check and count, but store nothing")
@with_appcontext
@store.writing()
def import_command(file, fmt, dry_run):
    """Import a journal, Beancount file or CSV: all of it, or nothing."""
    upgrade_schema()
    try:
        if file == "-":
            text = sys.stdin.read()
        else:
            with _open_text(file) as stream:
                text = stream.read()
    except UnicodeDecodeError:
        fail(f"{file} is not UTF-8 text")
    if dry_run:
        try:
            result = importer.import_text(text, fmt)
        except ServiceError as err:
            store.rollback()
            fail(err.message)
        store.rollback()
        verb = "would add"
    else:
        result = run(importer.import_text, text, fmt)
        verb = "added"
    click.echo(
        f"{verb} {result.added} transactions; {result.duplicates} already present (skipped); "
        f"{verb} {result.accounts_created} accounts"
    )


@click.command("backup")
@click.argument("file")
@with_appcontext
@store.reading()
def backup_command(file):
    """Write a consistent snapshot of every table to FILE (.gz: compressed; -: stdout)."""
    upgrade_schema()
    try:
        with _output(file, binary_gzip=file.endswith(".gz")) as stream:
            for line in backup.generate():
                stream.write(line)
    except ServiceError as err:
        fail(err.message)
    if file != "-":
        click.echo(f"backup written to {file}", err=True)


@click.command("restore")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@with_appcontext
@store.reading()
def restore_command(file):
    """Load a backup into an empty database (migrating it to the backup's schema first)."""
    from alembic.runtime.migration import MigrationContext
    from flask_migrate import upgrade

    directory = current_app.extensions["migrate"].directory
    try:
        with _open_text(file) as stream:
            lines = iter(stream)
            header = restore.read_header(lines)
            restore.check_revisions_known(header["revisions"], directory)
            restore.check_empty()
            with db.engine.connect() as conn:
                current = set(MigrationContext.configure(conn).get_current_heads())
            restore.check_target_schema(current, header["revisions"], directory)
            with store.writing():
                for revision in header["revisions"]:
                    upgrade(directory=directory, revision=revision)
                counts = run_once(restore.load, lines)  # lines: read once, not rewound
    except ServiceError as err:
        fail(err.message)
    except (UnicodeDecodeError, EOFError, OSError) as err:
        fail(f"cannot read {file}: {err}")
    upgrade_schema()
    with store.writing():
        # A backup taken while a change's event waited for its seal carries it pending.
        run(audit.seal_here)
    rows = sum(counts.values())
    click.echo(f"restored {rows} rows in {len(counts)} tables from {file}", err=True)


COMMANDS = (export_command, import_command, backup_command, restore_command)
