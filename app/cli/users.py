"""`ledger-service user add|list|passwd|rm` and `mint-token`: user accounts and bearer
tokens, managed only here, never over HTTP.

Each command declares its intent (@store.writing() / @store.reading()), migrates the
schema first, and calls its service through common.run (store.run_unit).
"""

from __future__ import annotations

import click
from flask import current_app
from flask.cli import with_appcontext

from .. import store
from ..services.identity import credentials, users
from .common import read_password, run, upgrade_schema


@click.group("user")
def user_group():
    """Manage users (never possible over HTTP)."""


def _password_or_generated(password_opt) -> tuple[str, bool]:
    """The password read from stdin (--password -), or a generated one (and True)."""
    password = read_password(password_opt)
    if password is None:
        return users.generate_password(), True
    return password, False


@user_group.command("add")
@click.argument("email")
@click.option("--password", "password_opt", metavar="-", help="read the password from stdin")
@with_appcontext
@store.writing()
def user_add(email, password_opt):
    """Create a user; prints a generated password once unless --password - is given."""
    upgrade_schema()
    password, generated = _password_or_generated(password_opt)
    user = run(users.add_user, email, password)
    if generated:
        click.echo(password)
    else:
        click.echo(f"created {user.email}", err=True)


@user_group.command("list")
@with_appcontext
@store.reading()
def user_list():
    """One row per user: email, passkey count, last seen."""
    upgrade_schema()
    for row in run(users.list_users):
        click.echo(f"{row['email']}\t{row['passkeys']}\t{row['last_seen_at'] or 'never'}")


@user_group.command("passwd")
@click.argument("email")
@click.option("--password", "password_opt", metavar="-", help="read the password from stdin")
@with_appcontext
@store.writing()
def user_passwd(email, password_opt):
    """Reset a password; ends every session and revokes every token of the user."""
    upgrade_schema()
    password, generated = _password_or_generated(password_opt)
    run(users.set_password, email, password)
    if generated:
        click.echo(password)


@user_group.command("rm")
@click.argument("email")
@with_appcontext
@store.writing()
def user_rm(email):
    """Delete a user; their transactions stay, with the author cleared."""
    upgrade_schema()
    run(users.remove_user, email)
    click.echo(f"removed {users.normalise_email(email)}", err=True)


@click.command("mint-token")
@click.argument("email")
@click.option("--label", default=None, help="a name for the token (default: cli)")
@click.option("--days", default=365, show_default=True, type=int, help="lifetime in days")
@with_appcontext
@store.writing()
def mint_token(email, label, days):
    """Mint a bearer token for scripts and clients; prints it alone on one line."""
    upgrade_schema()
    token = run(
        credentials.mint_token,
        email,
        label=label,
        days=days,
        audience=current_app.config["API_ORIGIN"],
    )
    click.echo(token)
