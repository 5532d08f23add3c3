"""The HTTP API: the one list of blueprints, plus GET /health; every view runs in the
unit-of-work boundary (boundary.py), applied here once.

One module per area, named after what it serves (the blueprint's name in brackets when
it differs):

- accounts.py: /accounts: the chart, an account's register, clearing, reconciliations
- transactions.py: /transactions: the listing, recording (and correcting), deleting
- settings.py: /settings and /books/currency
- reports.py: /reports/*: balances, income statement, balance sheet (both with `compare`), series
- budgets.py: /budgets
- documents.py: receipts: /transactions/{id}/documents and /documents
- statements.py: bank statements: /accounts/{id}/statements and /statements
- rules.py: /rules, the filing rules of statement lines
- schedules.py: /schedules, what is expected, and its occurrences
- uploads.py: reading a multipart upload's `file` part (documents, statements)
- lock.py: /books/lock, the lock date ("books")
- audit.py: /audit and /audit/head, the audit trail
- interchange.py: GET /export and POST /import ("export")
- auth.py: /auth/*: sign-in, sessions, the password, passkeys, tokens
- oauth.py: /oauth/*, the OAuth authorization server
- well_known.py: /.well-known/* discovery documents
- mcp.py: POST /mcp, the tool endpoint (app/mcp/)
- boundary.py: the unit-of-work boundary, applied to every view
- support.py: shared plumbing: access tiers, the declared intent, the principal,
  json_body, created_once (Idempotency-Key), common headers
"""

from flask import Blueprint

from .support import common_headers, forget_principal, load_principal, open_route

health_bp = Blueprint("health", __name__)


@health_bp.get("/health")
@open_route
def health():
    return "ok", 200, {"Content-Type": "text/plain; charset=utf-8"}


def register_blueprints(app) -> None:
    from . import (
        accounts,
        audit,
        auth,
        budgets,
        documents,
        interchange,
        lock,
        mcp,
        oauth,
        reports,
        rules,
        schedules,
        settings,
        statements,
        transactions,
        well_known,
    )
    from .boundary import apply as apply_unit_of_work

    app.before_request(load_principal)
    app.after_request(common_headers)
    app.teardown_request(forget_principal)
    for bp in (
        health_bp,
        accounts.bp,
        transactions.bp,
        settings.bp,
        reports.bp,
        auth.bp,
        mcp.bp,
        oauth.bp,
        well_known.bp,
        interchange.bp,
        lock.bp,
        audit.bp,
        budgets.bp,
        documents.bp,
        statements.bp,
        rules.bp,
        schedules.bp,
    ):
        app.register_blueprint(bp)
    apply_unit_of_work(app)
