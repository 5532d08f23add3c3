"""`ledger-service serve`: migrate the schema (a backup first when books are upgraded),
then serve the API and the web app through the process supervisor (serving.py), which
runs `post_due` (schedules in mode `post`, docs/schedules.md) when serving starts and
hourly.

The command reads (@store.reading()); upgrade_schema writes under its own intent.
"""

from __future__ import annotations

import click
from flask import current_app
from flask.cli import with_appcontext

from .. import store
from ..config import parse_host_port
from .common import fail, upgrade_schema


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


def post_due(app) -> None:
    """Serve's tick (serving.Ticker): post what schedules in mode `post` have due today
    (services/ledger/schedule_posting.post_due), one unit of its own under write intent."""
    from ..extensions import db
    from ..services import clock
    from ..services.ledger import schedule_posting

    with app.app_context(), store.writing():
        try:
            store.run_unit(schedule_posting.post_due, clock.today())
        finally:
            db.session.remove()


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
    if cfg.get("API_ORIGIN_DERIVED"):
        click.echo(
            f"API_ORIGIN is not set: {cfg['API_ORIGIN']}, from BIND_ADDR {cfg['BIND_ADDR']} "
            "(set API_ORIGIN when clients reach the API at another address)"
        )
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
            tick=lambda: post_due(app),
        )
    except ListenError as err:
        fail(str(err))
    if stop.requested is not None:
        click.echo(f"stopped ({stop.requested})")
