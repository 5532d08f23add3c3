"""The JSON-RPC 2.0 envelope of the tool endpoint (docs/mcp.md "Methods" and
"Errors").

handle(body, principal) returns the reply object, or None when no reply is due
(a notification, or a response sent to us): the route answers that with an
empty 202. Every JSON-RPC failure travels in the envelope; the HTTP status is 200.

Codes: -32700 unparseable JSON (also nesting too deep, a lone surrogate); -32600
not a JSON-RPC 2.0 request object (batches included: MCP dropped batching in
2025-06-18); -32601 unknown method; -32602 bad params, unknown tool, or a ledger
rejection (a ServiceError that HTTP would answer with 400, same message); -32603
anything else, with a fixed generic message and the details only in the server log.

The 2026-07-28 revision (server/discover, `_meta` on every request, -32020 and -32022,
resultType and cache hints) is decided in revisions.py; both eras dispatch to the same
tools/list and tools/call functions below, so figures and rejections are identical.
"""

from __future__ import annotations

import json
import logging
from importlib import metadata

from werkzeug.datastructures import Headers

from .. import store
from ..errors import GENERIC_500
from ..json_provider import BodyNotJSON, parse_body
from ..services.errors import ServiceError
from ..services.ledger import audit
from . import revisions, tools

log = logging.getLogger("app.mcp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

DEFAULT_PROTOCOL_VERSION = "2025-06-18"
SERVER_NAME = "ledger-service"
INSTRUCTIONS = (
    "This server is a double-entry bookkeeping ledger. Money is integer cents (1234 = 12.34). "
    "The reports (account_balances, income_statement, balance_sheet) are already "
    "sign-adjusted: present their figures exactly as given and never flip a sign. "
    "To record money use record_transaction with exactly two entries, +cents and -cents: "
    "spending from a bank account on a cost is +cents on the expense account and -cents on "
    "the asset account; money received is +cents on the asset account and -cents on the "
    "income account. Call list_accounts first to learn the account ids."
)


class RpcError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def _server_version() -> str:
    try:
        return metadata.version("ledger-service")
    except metadata.PackageNotFoundError:
        return "0"


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def parse(body: bytes):
    """The decoded JSON value of the body, or RpcError(-32700).

    The shared body parser refuses nesting too deep to parse and a lone surrogate
    anywhere (id, method, arguments): both are parse errors, decided before dispatch.
    """
    try:
        return parse_body(body, parse_constant=_reject_constant)
    except BodyNotJSON as exc:
        raise RpcError(PARSE_ERROR, f"parse error: the body is {exc.reason}") from exc


def _valid_id(value) -> bool:
    # MCP: a request id is a string or an integer, never null.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def error(request_id, code: int, message: str, data=None) -> dict:
    body = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def handle(body: bytes, principal, headers=None) -> dict | None:
    """One POST body in, one reply (or None for 202) out.

    headers: the HTTP request headers (read only for 2026-07-28 requests).
    """
    try:
        message = parse(body)
    except RpcError as err:
        return error(None, err.code, err.message)
    if isinstance(message, list):
        return error(
            None,
            INVALID_REQUEST,
            "batch requests are not supported; send one JSON-RPC 2.0 request object per POST",
        )
    if not isinstance(message, dict):
        return error(None, INVALID_REQUEST, "invalid request: expected a JSON-RPC 2.0 object")
    raw_id = message.get("id")
    echo_id = raw_id if _valid_id(raw_id) else None
    if message.get("jsonrpc") != "2.0":
        return error(echo_id, INVALID_REQUEST, "invalid request: 'jsonrpc' must be \"2.0\"")
    if "method" not in message:
        if "id" in message and ("result" in message or "error" in message):
            return None  # a response from the client; we never ask it anything
        return error(echo_id, INVALID_REQUEST, "invalid request: 'method' is required")
    method = message["method"]
    if not isinstance(method, str):
        return error(echo_id, INVALID_REQUEST, "invalid request: 'method' must be a string")
    params = message.get("params")
    if params is not None and not isinstance(params, dict | list):
        return error(echo_id, INVALID_REQUEST, "invalid request: 'params' must be an object")
    if "id" not in message:
        # A notification: acknowledged, never answered. Every method here is a request,
        # so a notification changes nothing (a tools/call without an id records nothing).
        return None
    if echo_id is None:
        return error(None, INVALID_REQUEST, "invalid request: 'id' must be a string or an integer")
    if revisions.is_modern(method, params):
        return _dispatch_modern(echo_id, method, params, principal, headers)
    return _dispatch(echo_id, method, params, principal)


def _not_found(request_id, method: str) -> dict:
    shown = method if len(method) <= 80 else method[:80] + "..."
    return error(request_id, METHOD_NOT_FOUND, f"method not found: {shown}")


def _dispatch_modern(request_id, method: str, params, principal, headers) -> dict:
    """A 2026-07-28 request: the revision's checks, the shared handler, its decoration."""
    try:
        revisions.check(method, params, headers if headers is not None else _NO_HEADERS)
    except revisions.Rejection as rejection:
        return error(request_id, rejection.code, rejection.message, rejection.data)
    handler = MODERN_METHODS.get(method)
    if handler is None:
        return _not_found(request_id, method)
    reply = _dispatch(request_id, method, params, principal, handler)
    if "result" in reply:
        reply["result"] = revisions.decorate(method, reply["result"])
    return reply


def _dispatch(request_id, method: str, params, principal, handler=None) -> dict:
    handler = handler or METHODS.get(method)
    if handler is None:
        return _not_found(request_id, method)
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return error(request_id, INVALID_PARAMS, "invalid params: 'params' must be an object")
    try:
        result = handler(params, principal)
    except RpcError as err:
        return error(request_id, err.code, err.message)
    except Exception:  # noqa: BLE001 - the envelope must still be answered
        log.exception("tool endpoint: %s failed", method)
        return error(request_id, INTERNAL_ERROR, GENERIC_500)
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _server_info() -> dict:
    return {"name": SERVER_NAME, "version": _server_version()}


def initialize(params: dict, principal) -> dict:
    requested = params.get("protocolVersion")
    version = requested if isinstance(requested, str) and requested else DEFAULT_PROTOCOL_VERSION
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {}},
        "serverInfo": _server_info(),
        "instructions": INSTRUCTIONS,
    }


def discover(params: dict, principal) -> dict:
    return revisions.discover(_server_info(), INSTRUCTIONS)


def ping(params: dict, principal) -> dict:
    return {}


def list_tools(params: dict, principal) -> dict:
    return {"tools": tools.listing()}


def call_tool(params: dict, principal) -> dict:
    name = params.get("name")
    if not isinstance(name, str) or not name:
        raise RpcError(INVALID_PARAMS, "invalid params: 'name' must be a tool name")
    tool = tools.TOOLS.get(name)
    if tool is None:
        shown = name if len(name) <= 80 else name[:80] + "..."
        raise RpcError(INVALID_PARAMS, f"unknown tool: {shown}")
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise RpcError(INVALID_PARAMS, "invalid params: 'arguments' must be an object")
    data = run_tool(name, tool, arguments, principal)
    return render(data)


def run_tool(name: str, tool: dict, arguments: dict, principal):
    """One unit of work: the tool's service call, then commit; roll back on any failure.

    The unit begins afresh with the tool's own intent (tools.writes): the credential
    lookup's read unit is ended first, so a read-only tool never opens a SQLite write
    transaction. Like the HTTP write routes it runs through store.run_unit, so a unit
    the database asks to retry (deadlock, serialization failure, SQLite busy) is re-run.
    """
    if not (tools.writes(tool) and store.dialect.is_postgresql()):
        # The lookup wrote nothing (a last-use update committed on its own). On
        # PostgreSQL the lookup ran as a transaction of its own (store.on_its_own), so
        # a writing tool's unit begins with its first statement: no ROLLBACK to send
        # (docs/performance.md, "The write path, issue 30").
        store.rollback()
    try:
        with store.intent(tools.writes(tool)), _acting(principal):
            return store.run_unit(tool["fn"], arguments, principal)
    except ServiceError as err:
        _end_quietly(err)
        # A ledger rejection: what HTTP answers with 400 (or a refusal of the arguments
        # such as the lock date, which HTTP answers 409), same words.
        if err.status == 400 or err.invalid_params:
            raise RpcError(INVALID_PARAMS, err.message) from err
        log.warning("tool %s refused with status %s: %s", name, err.status, err.message)
        raise RpcError(INTERNAL_ERROR, GENERIC_500) from err
    except Exception as exc:
        log.exception("tool %s failed", name)
        _end_quietly(exc)
        raise RpcError(INTERNAL_ERROR, GENERIC_500) from exc


def _acting(principal):
    """The audit trail names the caller with via `mcp` for whatever a tool changes."""
    if principal is None:
        return audit.acting(via="mcp")
    token = audit.actor_for(principal, via="mcp")
    return audit.acting(**vars(token))


def _end_quietly(err: BaseException) -> None:
    try:
        store.finish(err)
    except Exception:  # noqa: BLE001 - the connection itself may be what failed
        log.exception("ending the unit of work failed")
        try:
            store.rollback()
        except Exception:  # noqa: BLE001
            log.exception("rollback failed")


def render(data) -> dict:
    """MCP result: pretty JSON text plus the same data as an object (lists wrapped)."""
    structured = data if isinstance(data, dict) else {"result": data}
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured}


METHODS = {
    "initialize": initialize,
    "ping": ping,
    "tools/list": list_tools,
    "tools/call": call_tool,
}
"""The handshake revisions (2024-11-05 to 2025-11-25)."""

MODERN_METHODS = {
    "server/discover": discover,
    "tools/list": list_tools,
    "tools/call": call_tool,
}
"""2026-07-28: no initialize or ping (the revision removed both); the same tool functions."""

_NO_HEADERS = Headers()
