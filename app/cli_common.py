"""What every `ledger-service` command shares: one-line failures, the unit of work,
reading a password from stdin, migrating the schema first.

Imported by cli.py and cli_books.py (never the other way), so neither imports the other
back.
"""

from __future__ import annotations

import sys

import click
from flask import current_app

from . import store
from .services.errors import ServiceError


def fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


def run(fn, *args, **kwargs):
    """Run a service call as one unit of work; a ServiceError is a one-line failure."""
    try:
        result = fn(*args, **kwargs)
        store.commit()
        return result
    except ServiceError as err:
        store.rollback()
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


def upgrade_schema() -> None:
    """Bring the schema to the newest migration (serialised under a lock, see migrations/env.py)."""
    from flask_migrate import upgrade

    with store.writing():
        upgrade(directory=current_app.extensions["migrate"].directory)
