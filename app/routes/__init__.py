"""The one list of blueprints, plus GET /health; every view runs in the unit-of-work
boundary (boundary.py), applied here once."""

from flask import Blueprint

from .support import common_headers, forget_principal, load_principal, open_route

health_bp = Blueprint("health", __name__)


@health_bp.get("/health")
@open_route
def health():
    return "ok", 200, {"Content-Type": "text/plain; charset=utf-8"}


def register_blueprints(app) -> None:
    from . import (
        audit,
        auth,
        books,
        budgets,
        documents,
        export,
        ledger,
        mcp,
        oauth,
        reports,
        well_known,
    )
    from .boundary import apply as apply_unit_of_work

    app.before_request(load_principal)
    app.after_request(common_headers)
    app.teardown_request(forget_principal)
    for bp in (
        health_bp,
        ledger.bp,
        reports.bp,
        auth.bp,
        mcp.bp,
        oauth.bp,
        well_known.bp,
        export.bp,
        books.bp,
        audit.bp,
        budgets.bp,
        documents.bp,
    ):
        app.register_blueprint(bp)
    apply_unit_of_work(app)
