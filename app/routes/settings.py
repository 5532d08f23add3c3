"""HTTP adapters for the books' settings: GET and PUT /settings."""

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
