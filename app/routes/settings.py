"""HTTP adapters for the books' settings: GET and PUT /settings, GET and PUT
/books/currency (services/ledger/settings.py)."""

from flask import Blueprint, jsonify

from ..services.ledger import settings
from .support import json_body

bp = Blueprint("settings", __name__)


@bp.get("/settings")
def get_settings():
    return jsonify(settings.get_settings())


@bp.put("/settings")
def update_settings():
    body = json_body()
    result = settings.update_settings(body.get("book_style"))
    return jsonify(result)


@bp.get("/books/currency")
def get_currency():
    return jsonify(settings.get_currency())


@bp.put("/books/currency")
def set_currency():
    # A cookie session or a bearer token (full tier), unlike the lock date.
    return jsonify(settings.set_currency(json_body()))
