"""HTTP adapters for the audit trail: GET /audit (paged, newest first), GET /audit/head."""

from flask import Blueprint, jsonify, request

from ..services.ledger import audit
from .support import reads

bp = Blueprint("audit", __name__)


@bp.get("/audit")
@reads
def list_events():
    args = request.args
    return jsonify(
        audit.page(
            limit=args.get("limit"),
            cursor=args.get("cursor"),
            from_=args.get("from"),
            to=args.get("to"),
            action=args.get("action"),
        )
    )


@bp.get("/audit/head")
@reads
def head():
    return jsonify(audit.head())
