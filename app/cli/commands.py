"""The one list of `ledger-service` commands, registered on every app by create_app
(register_commands), as routes/__init__.py registers the blueprints. The group itself
is app.cli (cli/__init__.py).

Each command parses its arguments, calls services through common.run (store.run_unit:
committed, retried when the database asks) and echoes; each declares the intent of its
units of work (@store.writing() / @store.reading()); migrating the schema first always
writes.
"""

from __future__ import annotations

from .checks import check_command, verify_command
from .interchange import COMMANDS as INTERCHANGE_COMMANDS
from .serve import serve_command
from .users import mint_token, user_group


def register_commands(app) -> None:
    for command in (
        serve_command,
        user_group,
        mint_token,
        check_command,
        verify_command,
        *INTERCHANGE_COMMANDS,
    ):
        app.cli.add_command(command)
