"""HTTP adapters for documents (receipts) attached to transactions.

POST /transactions/{id}/documents takes multipart/form-data with one part named
`file`. Its body may be larger than MAX_BODY_BYTES: up to MAX_DOCUMENT_BYTES plus
the multipart framing (MULTIPART_ALLOWANCE). Werkzeug spools the part to a temporary
file as it arrives, so the body is never held in memory whole; the service hashes
it from there (services/ledger/documents.py).
"""

from __future__ import annotations

import base64
import unicodedata
from urllib.parse import quote

from flask import Blueprint, current_app, jsonify, request, stream_with_context
from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge

from .. import store
from ..services.errors import BadRequestError, UnsupportedMediaTypeError
from ..services.ledger import document_rules, documents
from .boundary import steps
from .support import json_body, principal

bp = Blueprint("documents", __name__)

MULTIPART_ALLOWANCE = 64 * 1024  # boundaries and part headers around the file
# Werkzeug's own bounds on a multipart body (it refuses either with its 413, which is
# answered as what it is: too many parts, not a size).
MAX_PARTS = 1000
MAX_FIELD_BYTES = 500_000


def too_many_parts() -> BadRequestError:
    return BadRequestError(
        f"the multipart body has too many parts (at most {MAX_PARTS}) or a form field "
        f"over {MAX_FIELD_BYTES} bytes: send one part named 'file' holding the document"
    )


@bp.post("/transactions/<int:tx_id>/documents")
@steps  # the body is read (spooled) before the unit; the upload is one unit of its own
def upload(tx_id: int):
    if request.mimetype != "multipart/form-data":
        raise UnsupportedMediaTypeError(
            "send the document as multipart/form-data with one part named 'file'"
        )
    limit = document_rules.max_bytes()
    request.max_content_length = limit + MULTIPART_ALLOWANCE
    request.max_form_parts = MAX_PARTS
    request.max_form_memory_size = MAX_FIELD_BYTES
    try:
        if (request.content_length or 0) > limit + MULTIPART_ALLOWANCE:
            raise document_rules.too_large(limit)  # before reading a byte of it
        try:
            part = request.files.get("file")
        except RequestEntityTooLarge:
            # The body's length was checked above when it was declared; an undeclared
            # one (chunked) went past it when the stream ran out at its maximum.
            if request.content_length is None and getattr(request.stream, "is_exhausted", False):
                raise document_rules.too_large(limit) from None
            raise too_many_parts() from None
        except (ClientDisconnected, ValueError):
            raise BadRequestError("the multipart body could not be read") from None
        doc = store.run_unit(
            documents.upload,
            tx_id,
            part.stream if part is not None else None,
            part.filename if part is not None else None,
            principal().user_id,
            limit=limit,
        )
    finally:
        request.close()  # the spooled temporary files, now
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
