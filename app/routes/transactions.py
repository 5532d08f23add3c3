"""HTTP adapters for transactions: the listing, recording (a correction with `replaces`)
and deleting."""

import contextlib

from flask import Blueprint, current_app, request

from .. import store
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
        body.get("adjusts"),
    )


def _post(occurred_on, description, entries, user_id: int, replaces, adjusts) -> dict:
    # The posting is this unit's only write and nothing after it belongs with it (the
    # answer is its id), unless it corrects another (the original is deleted with it):
    # on PostgreSQL it may then commit on its own (store.sole_write). With an
    # Idempotency-Key the key's claim has opened the unit's transaction already, and
    # the posting and the kept answer commit together in it.
    with store.sole_write() if replaces is None else contextlib.nullcontext():
        tx_id = transactions.record_transaction(
            occurred_on, description, entries, user_id, replaces=replaces, adjusts=adjusts
        )
    return {"id": tx_id}


@bp.delete("/transactions/<int:tx_id>")
def delete_transaction(tx_id: int):
    transactions.delete_transaction(tx_id)
    return "", 204
