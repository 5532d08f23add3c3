"""HTTP adapters for accounts, transactions and settings."""

from flask import Blueprint, current_app, jsonify, request

from .. import store
from ..services.ledger import accounts, idempotency, settings, transactions, validate
from .support import json_body, principal

bp = Blueprint("ledger", __name__)


@bp.get("/accounts")
def list_accounts():
    return jsonify(accounts.list_accounts())


def _created_once(operation: str, body: dict, fn, *args):
    """201 and fn's data, once per Idempotency-Key (services/ledger/idempotency.py)."""
    key = idempotency.header_key(request.headers.get(idempotency.HEADER))
    answer = store.run_unit(
        idempotency.once, principal().user_id, key, operation, body, 201, fn, *args
    )
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


@bp.get("/transactions")
def list_transactions():
    start, end = validate.window(request.args.get("from"), request.args.get("to"))
    listing = transactions.transaction_listing(start, end)
    # The listing is already JSON text: sent as it is, like jsonify's compact output.
    return current_app.response_class(listing.json() + b"\n", mimetype="application/json")


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
    )


def _post(occurred_on, description, entries, user_id: int) -> dict:
    return {"id": transactions.record_transaction(occurred_on, description, entries, user_id)}


@bp.delete("/transactions/<int:tx_id>")
def delete_transaction(tx_id: int):
    store.run_unit(transactions.delete_transaction, tx_id)
    return "", 204


@bp.get("/settings")
def get_settings():
    return jsonify(settings.get_settings())


@bp.put("/settings")
def update_settings():
    body = json_body()
    result = settings.update_settings(body.get("book_style"))
    store.commit()
    return jsonify(result)
