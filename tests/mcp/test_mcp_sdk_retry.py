"""The official MCP SDK client retries record_transaction with the same idempotency_key
(as after a timeout): one transaction exists and the retry gets the first result."""

from __future__ import annotations

import asyncio

import pytest

mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the 'test' extra) is not installed")
httpx2 = pytest.importorskip("httpx2", reason="httpx2 (installed with the MCP SDK) is missing")

from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from app.services.ledger.listing import list_transactions  # noqa: E402

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


async def record(url: str, token: str, arguments: dict, mode: str):
    """One connection (as a fresh retry after a lost answer would open): one call."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        try:
            result = await client.call_tool("record_transaction", arguments)
        except MCPError as err:
            return tools, ("error", err.error.code, err.error.message)
        return tools, result.structured_content


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_sdk_retry_with_the_same_key_records_once(
    app, live_server, make_user, service_account, mode
):
    make_user()
    checking = service_account("Checking", "asset")
    food = service_account("Food", "expense")
    token = live_server.mint()
    arguments = {
        "occurred_on": "2026-03-02",
        "description": "Market",
        "entries": [
            {"account_id": food, "amount_cents": 4250},
            {"account_id": checking, "amount_cents": -4250},
        ],
        "idempotency_key": "3f1c2a9e-retry",
    }

    tools, first = asyncio.run(record(live_server.url, token, arguments, mode))
    _, retried = asyncio.run(record(live_server.url, token, arguments, mode))
    _, other = asyncio.run(
        record(live_server.url, token, {**arguments, "description": "Market, again"}, mode)
    )

    assert first["recorded"] is True and first["possible_duplicates"] == []
    assert retried == first
    assert other[:2] == ("error", -32602)
    with app.app_context():
        stored = list_transactions(None, None)
    assert [t["id"] for t in stored] == [first["id"]]

    record_tool = tools["record_transaction"]
    assert record_tool.annotations.read_only_hint is False
    assert record_tool.annotations.destructive_hint is False
    assert record_tool.annotations.open_world_hint is False
    assert all(
        tools[name].annotations.read_only_hint is True
        for name in tools
        if name != "record_transaction"
    )
    assert "idempotency_key" in record_tool.input_schema["properties"]
