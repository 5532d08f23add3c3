"""HTTP adapters for the lock date: GET and PUT /books/lock (services/ledger/lock.py;
blueprint "books")."""

from flask import Blueprint, jsonify

from ..services.ledger import lock
from .support import json_body, session_only

bp = Blueprint("books", __name__)


@bp.get("/books/lock")
def get_lock():
    return jsonify(lock.get_lock())


@bp.put("/books/lock")
@session_only()
def set_lock():
    # A person moves the lock from the web app; a token (a script, an assistant) never can.
    return jsonify(lock.set_lock(json_body()))
