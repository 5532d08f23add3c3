"""HTTP adapters for transactions: the listing, recording (a correction with `replaces`)
and deleting."""

from flask import Blueprint, current_app, request

from ..services.ledger import listing, transactions, validate
from .support import created_once, json_body, principal

bp = Blueprint("transactions", __name__)


@bp.get("/transactions")
def list_transactions():
    result = listing.listing(validate.listing_query(request.args))
    # The listing is already JSON text: sent as it is, like jsonify's compact output.
    return current_app.response_class(result.json() + b"\n", mimetype="application/json")


@bp.post("/transactions")
def record_transaction():
    body = json_body()
    return created_once(
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
