"""HTTP adapter for GET /export (full tier): the file streamed as the body."""

from flask import Blueprint, Response, request, stream_with_context

from ..services.interchange import export
from ..services.ledger import validate

bp = Blueprint("export", __name__)


@bp.get("/export")
def export_books():
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
