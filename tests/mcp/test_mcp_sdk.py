"""A real client: the official MCP Python SDK over its streamable HTTP transport, against
the service running under waitress, with a minted bearer token.

(The SDK's own OAuth-provider flow, the issue's part (b), is tests/mcp/test_mcp_sdk_oauth.py.)
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the 'test' extra) is not installed")
httpx2 = pytest.importorskip("httpx2", reason="httpx2 (installed with the MCP SDK) is missing")

from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from app.services.ledger import reports  # noqa: E402
from app.services.ledger.listing import list_transactions  # noqa: E402

# slow: not in the quick loop (README, Test it); own_app: a fixture adds an after_request hook
pytestmark = [pytest.mark.slow, pytest.mark.own_app]


@pytest.fixture
def wire(app):
    """Every JSON-RPC message the server saw: (rpc method or None, HTTP status, error code)."""
    from flask import request

    seen = []

    @app.after_request
    def record(response):
        if request.path == "/mcp":
            body = request.get_json(silent=True) if request.method == "POST" else None
            method = body.get("method") if isinstance(body, dict) else None
            code = None
            error = (response.get_json() or {}).get("error") if response.is_json else None
            if isinstance(error, dict):  # a JSON-RPC error (not the HTTP {error: text})
                code = error.get("code")
            seen.append((request.method, method, response.status_code, code))
        return response

    return seen


async def session_with(url: str, token: str, checking: int, salary: int, mode: str) -> dict:
    out: dict = {}
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        started = time.monotonic()
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            out["connect_seconds"] = time.monotonic() - started
            out["server_info"] = client.server_info
            out["protocol_version"] = client.protocol_version
            out["instructions"] = client.instructions
            out["tools"] = {tool.name: tool for tool in (await client.list_tools()).tools}

            before = await client.call_tool("account_balances", {})
            out["balances_before"] = before

            recorded = await client.call_tool(
                "record_transaction",
                {
                    "occurred_on": "2026-01-05",
                    "description": "January pay",
                    "entries": [
                        {"account_id": checking, "amount_cents": 250000},
                        {"account_id": salary, "amount_cents": -250000},
                    ],
                },
            )
            out["recorded"] = recorded

            try:
                await client.call_tool(
                    "record_transaction",
                    {
                        "occurred_on": "2026-01-06",
                        "description": "Lopsided",
                        "entries": [
                            {"account_id": checking, "amount_cents": 100},
                            {"account_id": salary, "amount_cents": -99},
                        ],
                    },
                )
                out["unbalanced"] = "accepted"
            except MCPError as err:
                out["unbalanced"] = (err.error.code, err.error.message)

            out["balances_after"] = await client.call_tool(
                "account_balances", {"from": "2026-01-01", "to": "2026-01-31"}
            )
            out["accounts"] = await client.call_tool("list_accounts", {})
            out["statement"] = await client.call_tool(
                "income_statement", {"from": "2026-01-01", "to": "2026-01-31"}
            )
            out["sheet"] = await client.call_tool("balance_sheet", {"as_of": "2026-01-31"})
            out["listing"] = await client.call_tool("list_transactions", {})
    return out


# What the wire must show for each way the SDK may connect: the methods POSTed before the
# first tools/list, and the protocol version the client ends on.
MODES = {
    # The 2.x default probes server/discover and stays on 2026-07-28: no initialize at all.
    "auto": (["server/discover"], "2026-07-28"),
    # Pinned to the revision: no probe, every request stands alone.
    "2026-07-28": ([], "2026-07-28"),
    # The handshake: initialize (echoed) then notifications/initialized (202).
    "legacy": (["initialize", "notifications/initialized"], "2025-11-25"),
}


@pytest.mark.parametrize("mode", list(MODES))
def test_official_sdk_lists_tools_reads_and_records(
    app, live_server, make_user, service_account, wire, spec_tools, mode
):
    make_user()
    checking = service_account("Checking", "asset")
    salary = service_account("Salary", "income")
    token = live_server.mint()

    out = asyncio.run(session_with(live_server.url, token, checking, salary, mode))

    opening, version = MODES[mode]
    assert out["connect_seconds"] < 10
    rpc_methods = [m for verb, m, status, code in wire if verb == "POST"]
    assert rpc_methods[: len(opening) + 1] == [*opening, "tools/list"], wire
    assert out["protocol_version"] == version  # auto ends on the revision, not the fallback
    if mode == "auto":
        assert ("POST", "server/discover", 200, None) in wire
    assert "initialize" not in rpc_methods or mode == "legacy"
    assert all(status in (200, 202) and code != -32020 for _, _, status, code in wire), wire
    if mode != "2026-07-28":  # a pinned client synthesizes its discover result
        assert out["server_info"].name == "ledger-service"
        assert "already sign-adjusted" in out["instructions"]

    assert set(out["tools"]) == spec_tools
    assert out["tools"]["balance_sheet"].input_schema["required"] == ["as_of"]

    before = out["balances_before"]
    assert before.is_error is not True
    assert before.structured_content == {
        "result": [{"account": "Checking", "cents": 0}, {"account": "Salary", "cents": 0}]
    }
    assert json.loads(before.content[0].text) == before.structured_content["result"]

    recorded = out["recorded"].structured_content
    assert recorded["recorded"] is True and isinstance(recorded["id"], int)
    assert out["unbalanced"] == (-32602, "entries must sum to 0; the 2 entries sum to 1")
    assert out["balances_after"].structured_content == {
        "result": [
            {"account": "Checking", "cents": 250000},
            {"account": "Salary", "cents": 250000},
        ]
    }
    assert [a["name"] for a in out["accounts"].structured_content["result"]] == [
        "Checking",
        "Salary",
    ]
    assert out["statement"].structured_content["net_cents"] == 250000
    assert out["sheet"].structured_content["total_assets_cents"] == 250000
    listing = out["listing"].structured_content["result"]
    assert [t["id"] for t in listing] == [recorded["id"]]

    with app.app_context():
        stored = list_transactions(None, None)
    assert len(stored) == 1  # the lopsided one stored nothing
    assert stored[0]["id"] == recorded["id"]
    assert stored[0]["description"] == "January pay"
    assert stored[0]["created_by_email"] == "alice@example.com"
    assert [(e["account_id"], e["amount_cents"]) for e in stored[0]["entries"]] == [
        (checking, 250000),
        (salary, -250000),
    ]


async def without_token(url: str) -> str:
    async with httpx2.AsyncClient(timeout=30) as http:
        try:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                await client.list_tools()
        except Exception as err:  # noqa: BLE001 - whatever the SDK raises, it must not connect
            return type(err).__name__
    return "connected"


def test_official_sdk_without_a_token_cannot_connect(live_server, wire):
    assert asyncio.run(without_token(live_server.url)) != "connected"
    assert wire and all(status == 401 for _, _, status, _ in wire)


def test_concurrent_tool_recordings_lose_no_write(app, live_server, make_user, service_account):
    """Many assistants recording at once through the real server: every write lands once."""
    import threading
    import urllib.request

    make_user()
    checking = service_account("Checking", "asset")
    groceries = service_account("Groceries", "expense")
    token = live_server.mint()
    workers, each = 6, 5
    replies: list[dict] = []
    lock = threading.Lock()

    def record(worker: int) -> None:
        for n in range(each):
            cents = 100 * worker + n + 1
            body = {
                "jsonrpc": "2.0",
                "id": f"{worker}-{n}",
                "method": "tools/call",
                "params": {
                    "name": "record_transaction",
                    "arguments": {
                        "occurred_on": "2026-03-01",
                        "description": f"worker {worker} #{n}",
                        "entries": [
                            {"account_id": groceries, "amount_cents": cents},
                            {"account_id": checking, "amount_cents": -cents},
                        ],
                    },
                },
            }
            request = urllib.request.Request(
                live_server.url,
                data=json.dumps(body).encode(),
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
                method="POST",
            )
            with urllib.request.urlopen(request, timeout=60) as response:
                reply = json.loads(response.read())
            with lock:
                replies.append(reply)

    threads = [threading.Thread(target=record, args=(w,)) for w in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert len(replies) == workers * each
    assert all(r["result"]["structuredContent"]["recorded"] is True for r in replies), replies
    ids = {r["result"]["structuredContent"]["id"] for r in replies}
    assert len(ids) == workers * each
    expected = sum(100 * w + n + 1 for w in range(workers) for n in range(each))
    with app.app_context():
        stored = list_transactions(None, None)
        lines = {line["account"]: line["cents"] for line in reports.balances(None, None)}
    assert {t["id"] for t in stored} == ids
    assert lines == {"Checking": -expected, "Groceries": expected}
