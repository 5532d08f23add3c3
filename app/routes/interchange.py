"""HTTP adapters for the books in and out (services/interchange/, blueprint "export"):
GET /export (the file streamed as the body) and POST /import (a bank statement from the
web app, previewed or imported all or nothing).
"""

import tempfile

from flask import Blueprint, Response, jsonify, request, stream_with_context
from werkzeug.wsgi import FileWrapper

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


class _ClosedAtEnd(FileWrapper):
    """A server without wsgi.file_wrapper (the test client, which never calls close()):
    the file is closed once read to its end."""

    def __next__(self) -> bytes:
        try:
            return super().__next__()
        except StopIteration:
            self.close()
            raise


# The pack is built in memory up to this size, in a temporary file past it.
PACK_IN_MEMORY = 1024 * 1024


def _audit_pack():
    """The pack, built whole by this serving thread, then handed to the server as a file.

    Streamed from the generator instead, a serving thread wrote it only as fast as the
    client read: a client that asked for a pack larger than the server's output
    watermark and read nothing held the thread for good, and eight such held all
    eight (GET /health went unanswered). As a file (wsgi.file_wrapper) the server's
    I/O loop sends it and the thread is free at once; a client that reads nothing is
    dropped after REQUEST_TIMEOUT_SECONDS, and its file with it (app/cli/limits.py).
    """
    start, end = validate.window(request.args.get("from"), request.args.get("to"))
    # closed by the server once sent (or when the connection is dropped)
    spooled = tempfile.SpooledTemporaryFile(max_size=PACK_IN_MEMORY)  # noqa: SIM115
    try:
        for chunk in audit_pack.generate(start, end):
            spooled.write(chunk)
        size = spooled.tell()
        spooled.seek(0)
    except BaseException:
        spooled.close()
        raise
    server_wrapper = request.environ.get("wsgi.file_wrapper")
    body = server_wrapper(spooled, 65536) if server_wrapper else _ClosedAtEnd(spooled, 65536)
    response = Response(
        body,
        status=200,
        headers={
            "Content-Type": audit_pack.CONTENT_TYPE,
            "Content-Disposition": f'attachment; filename="{audit_pack.filename()}"',
            "Cache-Control": "no-store",
        },
        direct_passthrough=True,  # the server must see its own file wrapper, unwrapped
    )
    response.content_length = size
    return response


@bp.post("/import")
@writes  # a real import posts; a dry run (same route) writes nothing
def import_statement():
    body = json_body()
    result = importer.import_statement(
        body.get("transactions"),
        body.get("dry_run", False),
        created_by=principal().user_id,
    )
    return jsonify(result), 200 if result["dry_run"] else 201
