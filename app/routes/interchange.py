"""HTTP adapters for the books in and out (services/interchange/, blueprint "export"):
GET /export (the file streamed as the body) and POST /import (a bank statement from the
web app, previewed or imported all or nothing).
"""

from flask import Blueprint, Response, jsonify, request, stream_with_context

from ..services.interchange import audit_pack, export, importer
from ..services.ledger import validate
from .support import json_body, principal, writes

bp = Blueprint("export", __name__)


@bp.get("/export")
def export_books():
    if request.args.get("format") == audit_pack.FORMAT:
        return _audit_pack()
    fmt = export.check_format(request.args.get("format"))
    start, end = validate.window(request.args.get("from"), request.args.get("to"))
    chunks = export.generate(fmt, start, end)
    return Response(
        stream_with_context(chunks),
        status=200,
        headers={
            "Content-Type": export.content_type(fmt),
            "Content-Disposition": f'attachment; filename="{export.filename(fmt)}"',
        },
    )


def _audit_pack():
    start, end = validate.window(request.args.get("from"), request.args.get("to"))
    return Response(
        stream_with_context(audit_pack.generate(start, end)),
        status=200,
        headers={
            "Content-Type": audit_pack.CONTENT_TYPE,
            "Content-Disposition": f'attachment; filename="{audit_pack.filename()}"',
            "Cache-Control": "no-store",
        },
    )


@bp.post("/import")
@writes  # a dry run also posts, inside a savepoint it rolls back
def import_statement():
    body = json_body()
    result = importer.import_statement(
        body.get("transactions"),
        body.get("dry_run", False),
        created_by=principal().user_id,
    )
    return jsonify(result), 200 if result["dry_run"] else 201
