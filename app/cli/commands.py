"""The `ledger-service` commands: serve, user add|list|passwd|rm, mint-token, check, verify
(and, from interchange.py, export, import, backup, restore), registered on the app by
create_app through register_commands. The group itself is app.cli (cli/__init__.py).

Each command parses its arguments, calls services through common.run (store.run_unit:
committed, retried when the database asks) and echoes. User
accounts are managed only here, never over HTTP. Each command declares the intent
of its units of work (@store.writing() / @store.reading()); migrating the schema
first always writes.
"""

from __future__ import annotations

import sys

import click
from flask import current_app
from flask.cli import with_appcontext

from .. import store
from ..config import parse_host_port
from ..services.identity import credentials, users
from ..services.ledger import audit, derived, verify
from .common import fail, read_password, run, upgrade_schema
from .interchange import COMMANDS as INTERCHANGE_COMMANDS


@click.command("serve")
@click.option("--no-web", is_flag=True, help="serve the API alone (same as WEB_BIND_ADDR=off)")
@click.option(
    "--workers", "workers_opt", metavar="N", help="serving processes (default: WORKERS, or 1)"
)
@with_appcontext
@store.reading()
def serve_command(no_web, workers_opt):
    """Migrate the schema, then serve the API on BIND_ADDR and the web app on WEB_BIND_ADDR."""
    from .serving import Stop

    # SIGINT and SIGTERM are caught from here on: one arriving while the schema is
    # migrated lets the migration finish, then serve ends before it listens.
    with Stop() as stop:
        _serve(no_web, workers_opt, stop)


def _forget_connections() -> None:
    from ..extensions import db

    db.session.remove()
    db.engine.dispose()


def _serve(no_web, workers_opt, stop):
    from ..web import create_web_app
    from .serving import ListenError, parse_workers, serve, web_bind_addr

    app = current_app._get_current_object()  # type: ignore[attr-defined]
    try:
        workers = parse_workers(workers_opt if workers_opt is not None else app.config["WORKERS"])
    except ValueError as err:
        fail(str(err))
    upgrade_schema(backup_first=True)
    if stop.requested is not None:
        click.echo(f"stopped ({stop.requested}) before serving")
        return
    cfg = app.config
    host, port = parse_host_port(cfg["BIND_ADDR"])
    apps = [(app, host, port)]
    click.echo(f"ledger-service API on {host}:{port} (API_ORIGIN {cfg['API_ORIGIN']})")
    web_addr = web_bind_addr(cfg, no_web)
    if web_addr is None:
        click.echo("web app not served here (WEB_BIND_ADDR=off or --no-web)")
    else:
        web = create_web_app(cfg["API_ORIGIN"], cfg["WEB_ORIGIN"])
        apps.append((web, *web_addr))
        click.echo(
            f"ledger-service web app on {web_addr[0]}:{web_addr[1]} "
            f"(WEB_ORIGIN {cfg['WEB_ORIGIN']})"
        )
    try:
        # The workers open their own database connections (none may be shared
        # across a fork).
        serve(
            apps,
            announce=lambda line: click.echo(line),
            workers=workers,
            before_fork=_forget_connections,
            stop=stop,
        )
    except ListenError as err:
        fail(str(err))
    if stop.requested is not None:
        click.echo(f"stopped ({stop.requested})")


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


@click.command("check")
@click.option("--repair", is_flag=True, help="rebuild the derived tables from the entries")
@with_appcontext
@store.reading()
def check_command(repair):
    """Recompute every derived figure from the entries; print each difference, exit 1 if any."""
    upgrade_schema()
    # A read-only unit on one snapshot (the command reads): writers carry on while it
    # runs (on SQLite a write-intent BEGIN IMMEDIATE would hold them off for the whole check).
    store.begin_snapshot()
    try:
        lines = derived.differences()
    finally:
        store.rollback()
    with store.writing():
        search_lines = run(derived.search_index_differences)
    for line in lines + search_lines:
        click.echo(line)
    if repair and lines:
        with store.writing():
            run(derived.rebuild)
        click.echo("rebuilt the derived tables from the entries", err=True)
    if repair and search_lines:
        with store.writing():
            run(derived.rebuild_search_index)
        click.echo("rebuilt the description search index", err=True)
    lines = lines + search_lines
    if lines:
        click.echo(f"check: {len(lines)} difference(s)", err=True)
        sys.exit(1)
    click.echo("check: every derived figure equals the entries", err=True)


@click.command("verify")
@with_appcontext
@store.reading()
def verify_command():
    """Re-walk the audit trail's hash chain and replay it against the stored books.

    Exit 0 with one summary line when both agree; exit 1 naming the first event,
    transaction, entry or account that disagrees.
    """
    upgrade_schema()
    audit.seal()  # PostgreSQL: events a crash left pending join the chain first
    store.begin_snapshot()  # one consistent read; writers carry on meanwhile
    try:
        summary = verify.run()
    except verify.Disagreement as problem:
        click.echo(f"verify: FAILED: {problem.message}")
        sys.exit(1)
    finally:
        store.rollback()
    click.echo(summary)


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
