"""What every `ledger-service` command shares: one-line failures, the unit of work,
reading a password from stdin, migrating the schema first.

Imported by the command modules (serve.py, users.py, checks.py, interchange.py), never
the other way.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from flask import current_app

from .. import store
from ..services.errors import ServiceError


def fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


def run(fn, *args, **kwargs):
    """Run a service call as one unit of work (store.run_unit, the runner HTTP views and
    MCP tools end their units with: committed, re-run when the database asks for a
    retry, a rejection that is a state change kept); a ServiceError is a one-line
    failure."""
    try:
        return store.run_unit(fn, *args, **kwargs)
    except ServiceError as err:
        fail(err.message)


def run_once(fn, *args, **kwargs):
    """run() for a unit that cannot be repeated from the start (it consumes a stream)."""
    try:
        return store.run_unit_once(fn, *args, **kwargs)
    except ServiceError as err:
        fail(err.message)


def read_password(option: str | None) -> str | None:
    if option is None:
        return None
    if option != "-":
        fail("pass the password on standard input with --password - (never on the command line)")
    line = sys.stdin.readline()
    password = line.rstrip("\r\n")
    if not password:
        fail("no password on standard input")
    return password


def upgrade_schema(backup_first: bool = False) -> None:
    """Bring the schema to the newest migration (serialised under a lock, see migrations/env.py).

    backup_first (serve): when migrations are pending on books, write a backup to the
    instance folder's backups/ first (services.interchange.upgrade_backup); if the
    upgrade then fails, the books are as they were and the message names the backup.
    """
    from flask_migrate import upgrade

    from ..services.interchange import upgrade_backup

    directory = current_app.extensions["migrate"].directory
    saved = None
    if backup_first:
        try:
            saved = upgrade_backup.backup_if_pending(
                directory, Path(current_app.instance_path) / "backups"
            )
        except (ServiceError, OSError) as err:
            fail(f"cannot back up the books before upgrading the schema, so it was not: {err}")
        if saved is not None:
            click.echo(f"backed up the books before upgrading the schema: {saved}", err=True)
    if saved is None:
        with store.writing():
            upgrade(directory=directory)
        return
    from alembic import command

    config = current_app.extensions["migrate"].migrate.get_config(directory)
    try:
        with store.writing():
            command.upgrade(config, "head")  # as flask_migrate's upgrade, its error kept
    except Exception as err:  # noqa: BLE001 - reported with the backup's place
        cause = (str(err).strip().splitlines() or [""])[0][:200]
        fail(
            f"the schema upgrade failed ({type(err).__name__}{': ' + cause if cause else ''}); "
            f"the books are as they were; the backup taken just before it is {saved}"
        )
