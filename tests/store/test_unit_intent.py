"""Every entry point declares its unit's intent: readers never write-lock SQLite.

HTTP per route (method, or @writes / @reads), MCP per tool (its readOnlyHint), CLI per
command. On SQLite a reader begins with a plain BEGIN and never queues on the writer
lock; a writer begins with BEGIN IMMEDIATE. (The OAuth token grants' retrying
unit: tests/services/oauth/test_refresh.py.)
"""

from __future__ import annotations

import re

import pytest
from sqlalchemy import event

from app import store
from app.extensions import db

READ_TOOLS = {
    "list_accounts": {},
    "account_balances": {},
    "income_statement": {"from": "2026-01-01", "to": "2026-12-31"},
    "balance_sheet": {"as_of": "2026-12-31"},
    "list_transactions": {},
}
READ_ROUTES = (
    "/accounts",
    "/transactions",
    "/settings",
    "/reports/balances",
    "/reports/income-statement?from=2026-01-01&to=2026-12-31",
    "/reports/balance-sheet",
    "/auth/me",
    "/auth/tokens",
    "/export?format=csv",
)
_WRITES = re.compile(r"^BEGIN IMMEDIATE|\bINSERT INTO\b|^UPDATE\b|\bDELETE FROM\b", re.I)


@pytest.fixture
def trace(app, monkeypatch):
    """Statements sent, and how often the SQLite writer lock was asked for."""
    seen: list[str] = []
    asked: list[int] = []

    def record(_conn, _cursor, statement, _params, _context, _executemany):
        seen.append(" ".join(statement.split())[:200])  # the posting CTE writes after its lock read

    with app.app_context():
        engine = db.engine
        lock = store.writer_lock(engine)
    if lock is not None:
        real = lock.acquire

        def counting(timeout):
            asked.append(1)
            return real(timeout)

        monkeypatch.setattr(lock, "acquire", counting)
    event.listen(engine, "before_cursor_execute", record)
    yield seen, asked
    event.remove(engine, "before_cursor_execute", record)


@pytest.fixture
def books(api, make_account):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    entries = [
        {"account_id": food, "amount_cents": 500},
        {"account_id": bank, "amount_cents": -500},
    ]
    body = {"occurred_on": "2026-03-01", "description": "groceries", "entries": entries}
    assert api.post("/transactions", json=body).status_code == 201
    assert api.get("/accounts").status_code == 200  # last-use bookkeeping done now
    return body


def _writes(seen):
    return [s for s in seen if _WRITES.search(s)]


def test_read_only_tools_never_begin_a_write_transaction(rpc, books, trace, dialect):
    seen, asked = trace
    for tool, arguments in READ_TOOLS.items():
        seen.clear()
        rpc.result(tool, arguments)
        assert seen, tool  # the tool did read the database
        assert not _writes(seen), (tool, seen)
    assert asked == []


def test_the_write_tool_still_begins_as_a_writer(rpc, books, trace, dialect):
    seen, asked = trace
    rpc.result("record_transaction", books)
    assert _writes(seen), seen
    if dialect == "sqlite":
        assert "BEGIN IMMEDIATE" in seen and asked == [1], seen


def test_read_routes_never_begin_a_write_transaction(api, books, trace):
    seen, asked = trace
    for path in READ_ROUTES:
        seen.clear()
        response = api.get(path)
        assert response.status_code == 200, (path, response.data)
        assert not _writes(seen), (path, seen)
    assert asked == []
