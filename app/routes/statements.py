"""HTTP adapters for bank statements (docs/statements.md): upload to an account, list,
read, the file as uploaded, delete, act on the lines, reconcile.

POST /accounts/{id}/statements takes multipart/form-data with one part named `file`
(and the optional field `bank_account`), read by uploads.file_part up to
MAX_STATEMENT_BYTES plus the framing.
"""

from __future__ import annotations

import hashlib

from flask import Blueprint, jsonify, request
from werkzeug.datastructures import FileStorage

from ..services.banking import lines, statements
from .boundary import spooled
from .support import json_body, principal
from .uploads import file_response, spooled_unit

bp = Blueprint("statements", __name__)


@bp.post("/accounts/<int:account_id>/statements")
@spooled
def upload(account_id: int):
    limit = statements.max_bytes()
    user_id = principal().user_id

    def keep_statement(part: FileStorage | None) -> dict:
        data = part.stream.read(limit + 1) if part is not None else None
        return statements.upload(account_id, data, request.form.get("bank_account"), user_id)

    return jsonify(spooled_unit("statement", limit, statements.too_large, keep_statement)), 201


@bp.get("/statements")
def list_statements():
    return jsonify(statements.list_statements(request.args.get("account_id")))


@bp.get("/statements/<int:statement_id>")
def get_statement(statement_id: int):
    return jsonify(statements.get(statement_id))


@bp.get("/statements/<int:statement_id>/file")
def download(statement_id: int):
    header, data = statements.content(statement_id)
    return file_response(
        data,
        mimetype="application/octet-stream",
        filename=header["filename"],
        sha256=hashlib.sha256(data).digest(),
    )


@bp.delete("/statements/<int:statement_id>")
def remove(statement_id: int):
    statements.remove(statement_id)
    return "", 204


@bp.post("/statements/<int:statement_id>/lines")
def act_on_lines(statement_id: int):
    return jsonify(lines.act(statement_id, json_body(), principal().user_id))


@bp.post("/statements/<int:statement_id>/reconcile")
def reconcile(statement_id: int):
    if request.get_data(cache=True):  # no body needed; one sent must be JSON (as a form is not)
        json_body()
    return jsonify(statements.reconcile(statement_id, principal().user_id)), 201
