"""The application factory: config -> extensions -> blueprints -> error handlers -> CLI.

The top level of the package (docs/architecture.md, "Module map"):

- config.py: layered settings; extensions.py: db, migrate, cors
- errors.py: the HTTP error mapping, registered once
- json_provider.py: the strict JSON body parser and the fast JSON provider
- routes/: the HTTP API (blueprints, the unit-of-work boundary)
- mcp/: the tool endpoint (JSON-RPC over POST /mcp)
- cli/: the `ledger-service` command line and `serve`'s process supervisor
- services/: every rule, query and validation, once, by domain
- store/: the unit of work and its intent, per-database plumbing
- models/: the schema (SQLAlchemy)
- web/: the companion web app (page shells and static files)
- openapi.yaml: the API's description (docs/openapi.yaml is a copy)
"""

from __future__ import annotations

import os
from pathlib import Path

from flask import Flask

PROJECT_ROOT = Path(__file__).resolve().parent.parent
MIGRATIONS_DIR = str(PROJECT_ROOT / "migrations")


def create_app(test_config: dict | None = None) -> Flask:
    from . import config, errors
    from .cli.commands import register_commands
    from .extensions import cors, db, migrate
    from .json_provider import FastJSONProvider
    from .routes import register_blueprints
    from .store import init_engine_events, init_session_events

    instance_path = os.environ.get("LEDGER_INSTANCE_PATH") or str(PROJECT_ROOT / "instance")
    app = Flask(__name__, instance_path=instance_path, instance_relative_config=True)
    app.json = FastJSONProvider(app)
    config.load(app, test_config)
    # Owner-only when created here (it holds the default SQLite database); an
    # existing folder keeps its mode.
    Path(app.instance_path).mkdir(mode=0o700, parents=True, exist_ok=True)

    db.init_app(app)
    with app.app_context():
        init_engine_events(db.engine)
    init_session_events()
    migrate.init_app(app, db, directory=MIGRATIONS_DIR)
    cors.init_app(
        app,
        origins=[app.config["WEB_ORIGIN"]],
        supports_credentials=True,
        methods=["GET", "POST", "PUT", "DELETE", "OPTIONS"],
        allow_headers=["Content-Type", "Authorization"],
        # The sign-in page shows how long a throttled login must wait (429 Retry-After);
        # a cross-origin page can read only the response headers listed here.
        expose_headers=["Retry-After"],
        # CORS headers only for a request that carries an Origin (docs/deploy.md,
        # "CORS"): a script, curl or the MCP SDK sends none and gets none, and the
        # extension builds no headers for it (flask-cors's default sends them always).
        always_send=False,
    )

    if app.config["TRUSTED_PROXIES"] > 0:
        from werkzeug.middleware.proxy_fix import ProxyFix

        hops = app.config["TRUSTED_PROXIES"]
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]  # Flask's documented way
            app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops, x_port=hops
        )

    register_blueprints(app)
    errors.register(app)
    register_commands(app)
    return app
