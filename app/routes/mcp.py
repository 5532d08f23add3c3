"""HTTP adapter for the tool endpoint: POST /mcp (full tier), request and response only.

GET /mcp (the optional server-to-client stream) and DELETE /mcp (session end) are not
offered: with only POST routed, Flask answers them 405 with `Allow: POST, OPTIONS`.
No Mcp-Session-Id is ever issued (no revision served here has a session).
An Origin other than WEB_ORIGIN or API_ORIGIN is refused with 403 before the
credential is looked at (support.checks_origin; docs/mcp.md).
"""

from flask import Blueprint, jsonify, request

from ..mcp import jsonrpc
from ..services.errors import UnsupportedMediaTypeError
from .support import checks_origin, principal, reads

bp = Blueprint("mcp", __name__)


@bp.post("/mcp")
@checks_origin
@reads  # each tool declares its own intent (mcp/jsonrpc.py run_tool)
def endpoint():
    caller = principal()
    # A cookie is an ambient credential: insisting on a JSON content type makes a
    # browser preflight any cross-site attempt (which CORS then refuses), so a page on
    # another port of the same host cannot post tools/call with the user's cookie.
    # A bearer token cannot be attached by a foreign page, so its body is parsed as is.
    if caller.via == "session" and not request.is_json:
        raise UnsupportedMediaTypeError(
            "the request body must be JSON (Content-Type: application/json)"
        )
    reply = jsonrpc.handle(request.get_data(), caller, request.headers)
    if reply is None:
        return "", 202
    return jsonify(reply)
