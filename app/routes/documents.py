"""HTTP adapters for documents (receipts) attached to transactions.

POST /transactions/{id}/documents takes multipart/form-data with one part named
`file`, read by uploads.file_part: up to MAX_DOCUMENT_BYTES plus the multipart framing,
spooled to a temporary file, never whole in memory; the service hashes it from there
(services/ledger/documents.py).
"""

from __future__ import annotations

import base64
import unicodedata
from urllib.parse import quote

from flask import Blueprint, current_app, jsonify, request, stream_with_context

from .. import store
from ..services.ledger import document_rules, documents
from .boundary import steps
from .support import json_body, principal
from .uploads import file_part

bp = Blueprint("documents", __name__)


@bp.post("/transactions/<int:tx_id>/documents")
@steps  # the body is read (spooled) before the unit; the upload is one unit of its own
def upload(tx_id: int):
    limit = document_rules.max_bytes()
    with file_part("document", limit, document_rules.too_large) as part:
        doc = store.run_unit(
            documents.upload,
            tx_id,
            part.stream if part is not None else None,
            part.filename if part is not None else None,
            principal().user_id,
            limit=limit,
        )
    return jsonify(doc), 201


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


def content_disposition(filename: str) -> str:
    """attachment, with an ASCII fallback name and the exact name (RFC 6266, 8187)."""
    ascii_name = unicodedata.normalize("NFKD", filename).encode("ascii", "ignore").decode("ascii")
    ascii_name = "".join(c for c in ascii_name if c.isprintable() and c not in '"\\') or "document"
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(filename, safe='')}"


@bp.get("/documents/<int:doc_id>")
def download(doc_id: int):
    doc, chunks = documents.content(doc_id)
    digest = base64.b64encode(bytes.fromhex(doc["sha256"])).decode("ascii")
    response = current_app.response_class(
        stream_with_context(chunks), status=200, mimetype=doc["content_type"]
    )
    response.headers["Content-Length"] = str(doc["size"])
    response.headers["Content-Disposition"] = content_disposition(doc["filename"])
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "no-store"
    response.headers["Repr-Digest"] = f"sha-256=:{digest}:"
    return response


@bp.put("/documents/<int:doc_id>")
def move(doc_id: int):
    return jsonify(documents.move(doc_id, json_body()))


@bp.delete("/documents/<int:doc_id>")
def remove(doc_id: int):
    documents.remove(doc_id)
    return "", 204
