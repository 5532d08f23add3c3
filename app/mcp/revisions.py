"""What each MCP revision gets from the tool endpoint, in one place (docs/mcp.md "Protocol
revisions").

Two eras share POST /mcp and the same tool functions (jsonrpc.call_tool, tools.py):

- the handshake revisions (2024-11-05 .. 2025-11-25): `initialize` (echoing the client's
  version), `ping`, `tools/list`, `tools/call`, notifications acknowledged with 202;
  nothing here applies to them and no MCP header is read.
- 2026-07-28, stateless: every request carries its protocol version and client
  capabilities in `params._meta`; `server/discover` replaces `initialize`; every result
  carries `resultType: "complete"`; cacheable results (`server/discover`, `tools/list`)
  carry `ttlMs` and `cacheScope: "private"`; the `MCP-Protocol-Version`, `Mcp-Method` and
  (for `tools/call`) `Mcp-Name` headers must agree with the body.

A request belongs to 2026-07-28 when it is `server/discover` or its `params._meta` names a
protocol version. The checks run in the order of the official SDK's server ladder
(mcp.shared.inbound.classify_inbound_request): envelope keys (-32602), headers (-32020),
version (-32022), so a client that disagrees with itself is told so first.
"""

from __future__ import annotations

import base64
import binascii
import re

MODERN_VERSIONS = ("2026-07-28",)

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
ROUTING_HEADERS = (VERSION_HEADER, METHOD_HEADER, NAME_HEADER)

HEADER_MISMATCH = -32020
UNSUPPORTED_VERSION = -32022
# The revision asks for HTTP 400 with these two; this service answers every
# tool-endpoint error with HTTP 200 (docs/mcp.md "Errors"), and that rule wins: they travel
# with 200 like the rest.

# The tool list changes only with a deployment; a client may reuse it for five minutes.
# "private": it was fetched with the caller's credential, so no shared cache may keep it.
TTL_MS = 300_000
CACHE_SCOPE = "private"
CACHEABLE = frozenset({"server/discover", "tools/list"})

_B64_SENTINEL = re.compile(r"^=\?base64\?(?P<payload>.*)\?=$")


class Rejection(Exception):
    """A request the revision refuses before dispatch: code, message, optional data."""

    def __init__(self, code: int, message: str, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def is_modern(method: str, params) -> bool:
    if method == "server/discover":
        return True
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


def unwrap_header(value: str | None) -> str | None:
    """The SDK's Mcp-Name encoding: `=?base64?...?=` wraps a value HTTP cannot carry."""
    if value is None:
        return None
    match = _B64_SENTINEL.fullmatch(value)
    if match is None:
        return value
    payload = match.group("payload")
    try:
        raw = base64.b64decode(payload, validate=True)
        canonical = base64.b64encode(raw).decode("ascii")
        if canonical != payload:  # padding or alphabet the SDK would not produce
            return None
        return raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def check(method: str, params, headers) -> str:
    """The request's 2026-07-28 protocol version, or Rejection.

    headers: the HTTP request headers (case-insensitive .get and .getlist).
    """
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        raise Rejection(
            -32602,
            f"invalid params: params._meta must be an object carrying "
            f"{PROTOCOL_VERSION_KEY!r} and {CLIENT_CAPABILITIES_KEY!r}",
        )
    missing = [key for key in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY) if key not in meta]
    if missing:
        raise Rejection(-32602, f"invalid params: params._meta is missing {', '.join(missing)}")
    if not isinstance(meta[CLIENT_CAPABILITIES_KEY], dict):
        raise Rejection(-32602, f"invalid params: {CLIENT_CAPABILITIES_KEY} must be an object")
    version = meta[PROTOCOL_VERSION_KEY]
    for name in ROUTING_HEADERS:
        if len(headers.getlist(name)) > 1:
            raise Rejection(HEADER_MISMATCH, f"the {name} header appears more than once")
    if headers.get(VERSION_HEADER) is None or headers.get(VERSION_HEADER) != version:
        raise Rejection(
            HEADER_MISMATCH,
            f"the {VERSION_HEADER} header must equal params._meta's protocol version",
        )
    if headers.get(METHOD_HEADER) != method:
        raise Rejection(HEADER_MISMATCH, f"the {METHOD_HEADER} header must equal the method")
    if method == "tools/call":
        name = params.get("name")
        if name is not None and unwrap_header(headers.get(NAME_HEADER)) != name:
            raise Rejection(HEADER_MISMATCH, f"the {NAME_HEADER} header must equal params.name")
    if not isinstance(version, str):
        raise Rejection(-32602, "invalid params: the protocol version must be a string")
    if version not in MODERN_VERSIONS:
        raise Rejection(
            UNSUPPORTED_VERSION,
            "unsupported protocol version",
            {"supported": list(MODERN_VERSIONS), "requested": version},
        )
    return version


def discover(server_info: dict, instructions: str) -> dict:
    return {
        "supportedVersions": list(MODERN_VERSIONS),
        "capabilities": {"tools": {}},
        "instructions": instructions,
        "_meta": {SERVER_INFO_KEY: server_info},
    }


def decorate(method: str, result: dict) -> dict:
    """A 2026-07-28 result: the shared result plus the revision's fields, content untouched."""
    out = {**result, "resultType": "complete"}
    if method in CACHEABLE:
        out["ttlMs"] = TTL_MS
        out["cacheScope"] = CACHE_SCOPE
    return out
