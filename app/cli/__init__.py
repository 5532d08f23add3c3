"""The command line: the `ledger-service` console script (pyproject.toml: `app.cli:cli`).

This module only builds the group, a FlaskGroup over the app factory; the commands are
registered on every app by create_app (commands.register_commands), so `flask --app app`
offers them too. Nothing in app/ imports this module; create_app imports commands.py.

- commands.py: register_commands, the one list of commands
- serve.py: serve (migrate, then hand the apps to serving.py)
- users.py: user add|list|passwd|rm, mint-token
- checks.py: check (derived figures against the entries), verify (the audit trail)
- interchange.py: the books in and out: export, import, backup, restore
- common.py: what every command shares: one-line failures, `run` (store.run_unit, the
  runner the HTTP views and MCP tools end their units with), `run_once`, a password from
  stdin, `upgrade_schema`
- serving.py: the process supervisor of `serve`: sockets, --workers forking, signals
- limits.py: what the embedded server accepts and how long it waits (body size,
  deadlines, connections), for `serve` and the in-process test server
"""

from __future__ import annotations

from flask.cli import FlaskGroup

from .. import create_app


def _create_app():
    return create_app()


cli = FlaskGroup(
    create_app=_create_app,
    add_default_commands=False,
    help=(
        "ledger-service: a double-entry bookkeeping server. Administer users and tokens, or serve."
    ),
)
