"""HTTP adapters for documents (receipts) attached to transactions.

POST /transactions/{id}/documents takes multipart/form-data with one part named
`file`, read by uploads.file_part: up to MAX_DOCUMENT_BYTES plus the multipart framing,
spooled to a temporary file, never whole in memory; the service hashes it from there
(services/ledger/documents.py).
"""

from __future__ import annotations

from flask import Blueprint, jsonify, request, stream_with_context
from werkzeug.datastructures import FileStorage

from ..services.ledger import document_rules, documents
from .boundary import spooled
from .support import json_body, principal
from .uploads import file_response, spooled_unit

bp = Blueprint("documents", __name__)


@bp.post("/transactions/<int:tx_id>/documents")
@spooled
def upload(tx_id: int):
    limit = document_rules.max_bytes()
    user_id = principal().user_id

    def store_document(part: FileStorage | None) -> dict:
        if part is None:
            return documents.upload(tx_id, None, None, user_id, limit=limit)
        return documents.upload(tx_id, part.stream, part.filename, user_id, limit=limit)

    return jsonify(spooled_unit("document", limit, document_rules.too_large, store_document)), 201


@bp.get("/transactions/<int:tx_id>/documents")
def list_for_transaction(tx_id: int):
    return jsonify(documents.for_transaction(tx_id))


@bp.get("/documents")
def list_documents():
    args = request.args
    return jsonify(
        documents.page(
            attached=args.get("attached"), limit=args.get("limit"), cursor=args.get("cursor")
        )
    )


@bp.get("/documents/<int:doc_id>")
def download(doc_id: int):
    doc, chunks = documents.content(doc_id)
    return file_response(
        stream_with_context(chunks),
        mimetype=doc["content_type"],
        filename=doc["filename"],
        sha256=bytes.fromhex(doc["sha256"]),
        size=doc["size"],
    )


@bp.put("/documents/<int:doc_id>")
def move(doc_id: int):
    return jsonify(documents.move(doc_id, json_body()))


@bp.delete("/documents/<int:doc_id>")
def remove(doc_id: int):
    documents.remove(doc_id)
    return "", 204
