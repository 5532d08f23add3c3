"""HTTP adapters for accounts: the chart (list, create, rename), an account's register,
clearing entries and reconciling against a statement."""

from flask import Blueprint, jsonify, request

from ..services.ledger import accounts, reconciliation, register, validate
from .support import created_once, json_body, principal

bp = Blueprint("accounts", __name__)


@bp.get("/accounts")
def list_accounts():
    return jsonify(accounts.list_accounts())


@bp.post("/accounts")
def create_account():
    body = json_body()
    return created_once(
        "POST /accounts", body, accounts.create_account, body.get("name"), body.get("kind")
    )


@bp.put("/accounts/<int:account_id>")
def update_account(account_id: int):
    body = json_body()
    account = accounts.update_account(account_id, body)
    return jsonify(account)


@bp.get("/accounts/<int:account_id>/register")
def account_register(account_id: int):
    start, end = validate.window(request.args.get("from"), request.args.get("to"))
    page = register.register(
        account_id,
        start,
        end,
        validate.page_limit(request.args.get("limit"), default=validate.PAGE_DEFAULT),
        validate.cursor_text(request.args.get("cursor")),
    )
    return jsonify(page)


@bp.post("/accounts/<int:account_id>/cleared")
def mark_cleared(account_id: int):
    body = json_body()
    reconciliation.set_cleared(account_id, body.get("entry_ids"), body.get("cleared"))
    return "", 204


@bp.post("/accounts/<int:account_id>/reconciliations")
def reconcile(account_id: int):
    body = json_body()
    result = reconciliation.reconcile(
        account_id,
        body.get("statement_date"),
        body.get("closing_balance_cents"),
        created_by=principal().user_id,
    )
    return jsonify(result), 201
