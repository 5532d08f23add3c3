"""The `ledger-service` console script: a Flask CLI group over the app factory.

The commands live in commands.py and cli_books.py and are registered by create_app;
this module only builds the group (it imports the factory, nothing imports it).
"""

from __future__ import annotations

from flask.cli import FlaskGroup

from . import create_app


def _create_app():
    return create_app()


cli = FlaskGroup(
    create_app=_create_app,
    add_default_commands=False,
    help=(
        "ledger-service: a double-entry bookkeeping server. Administer users and tokens, or serve."
    ),
)
