"""HTTP adapters for accounts, transactions and settings."""

from flask import Blueprint, current_app, jsonify, request

from .. import store
from ..services.ledger import accounts, settings, transactions, validate
from .support import json_body, principal

bp = Blueprint("ledger", __name__)


@bp.get("/accounts")
def list_accounts():
    return jsonify(accounts.list_accounts())


@bp.post("/accounts")
def create_account():
    body = json_body()
    account = accounts.create_account(body.get("name"), body.get("kind"))
    store.commit()
    return jsonify(account), 201


@bp.get("/transactions")
def list_transactions():
    start, end = validate.window(request.args.get("from"), request.args.get("to"))
    listing = transactions.transaction_listing(start, end)
    # The listing is already JSON text: sent as it is, like jsonify's compact output.
    return current_app.response_class(listing.json() + b"\n", mimetype="application/json")


@bp.post("/transactions")
def record_transaction():
    body = json_body()
    tx_id = store.run_unit(
        transactions.record_transaction,
        body.get("occurred_on"),
        body.get("description"),
        body.get("entries"),
        created_by=principal().user_id,
    )
    return jsonify({"id": tx_id}), 201


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
