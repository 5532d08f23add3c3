"""HTTP adapters for accounts, transactions and settings."""

from flask import Blueprint, current_app, jsonify, request

from ..services.ledger import (
    accounts,
    idempotency,
    listing,
    reconciliation,
    register,
    settings,
    transactions,
    validate,
)
from .support import json_body, principal

bp = Blueprint("ledger", __name__)


@bp.get("/accounts")
def list_accounts():
    return jsonify(accounts.list_accounts())


def _created_once(operation: str, body: dict, fn, *args):
    """201 and fn's data, once per Idempotency-Key (services/ledger/idempotency.py)."""
    key = idempotency.header_key(request.headers.get(idempotency.HEADER))
    answer = idempotency.once(principal().user_id, key, operation, body, 201, fn, *args)
    response = jsonify(answer.data)
    response.status_code = answer.status
    if answer.replayed:
        response.headers["Idempotency-Replayed"] = "true"
    return response


@bp.post("/accounts")
def create_account():
    body = json_body()
    return _created_once(
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
        validate.page_limit(request.args.get("limit")),
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


@bp.get("/transactions")
def list_transactions():
    result = listing.listing(validate.listing_query(request.args))
    # The listing is already JSON text: sent as it is, like jsonify's compact output.
    return current_app.response_class(result.json() + b"\n", mimetype="application/json")


@bp.post("/transactions")
def record_transaction():
    body = json_body()
    return _created_once(
        "POST /transactions",
        body,
        _post,
        body.get("occurred_on"),
        body.get("description"),
        body.get("entries"),
        principal().user_id,
        body.get("replaces"),
    )


def _post(occurred_on, description, entries, user_id: int, replaces) -> dict:
    tx_id = transactions.record_transaction(
        occurred_on, description, entries, user_id, replaces=replaces
    )
    return {"id": tx_id}


@bp.delete("/transactions/<int:tx_id>")
def delete_transaction(tx_id: int):
    transactions.delete_transaction(tx_id)
    return "", 204


@bp.get("/settings")
def get_settings():
    return jsonify(settings.get_settings())


@bp.put("/settings")
def update_settings():
    body = json_body()
    result = settings.update_settings(body.get("book_style"))
    return jsonify(result)
