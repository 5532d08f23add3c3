"""The record_transaction tool's trust features (docs/mcp.md
"Retries, look-alikes and hints"): idempotency_key,
possible_duplicates, and the annotations of every tool in every MCP revision."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy import event

from app import store
from app.extensions import db
from app.models import IdempotencyKey
from app.services.ledger import lookalikes, transactions
from tests.testkit import row_count

READ_TOOLS = {
    "list_accounts",
    "account_balances",
    "income_statement",
    "balance_sheet",
    "list_transactions",
}


@pytest.fixture
def books(make_account):
    return {
        "bank": make_account("Bank", "asset"),
        "food": make_account("Food", "expense"),
        "card": make_account("Card", "liability"),
    }


def args(books, cents=500, day="2026-02-10", description="Groceries", key=None, legs=None):
    legs = legs or [("food", cents), ("bank", -cents)]
    out = {
        "occurred_on": day,
        "description": description,
        "entries": [{"account_id": books[a], "amount_cents": c} for a, c in legs],
    }
    if key is not None:
        out["idempotency_key"] = key
    return out


# --- idempotency_key ---------------------------------------------------------------------


def test_a_retry_with_the_same_key_returns_the_first_result_and_records_once(app, rpc, books):
    first = rpc.call("record_transaction", args(books, key="assistant-1"))
    again = rpc.call("record_transaction", args(books, key="assistant-1"))
    modern = rpc.call_2026("record_transaction", args(books, key="assistant-1"))
    assert "result" in first, first
    assert again["result"] == first["result"]
    assert modern["result"]["structuredContent"] == first["result"]["structuredContent"]
    assert row_count(app) == 1


def test_the_key_with_other_arguments_is_32602_and_records_nothing(app, rpc, books):
    rpc.result("record_transaction", args(books, key="assistant-2"))
    reply = rpc.call("record_transaction", args(books, cents=501, key="assistant-2"))
    assert reply["error"]["code"] == -32602
    assert "already used with a different request" in reply["error"]["message"]
    assert row_count(app) == 1


@pytest.mark.parametrize("key", ["", "x" * 256, 42, None, ["k"], "caf\u00e9", "new\nline"])
def test_a_bad_key_is_32602_and_records_nothing(app, rpc, books, key):
    call = args(books)
    call["idempotency_key"] = key
    reply = rpc.call("record_transaction", call)
    if key is None:  # null is no key: recorded as usual
        assert "result" in reply
        return
    assert reply["error"]["code"] == -32602
    assert "'idempotency_key' must be 1 to 255 printable ASCII" in reply["error"]["message"]
    assert row_count(app) == 0


def test_a_refused_call_keeps_no_key(app, rpc, books):
    lopsided = args(books, key="assistant-3")
    lopsided["entries"][0]["amount_cents"] = 499
    assert rpc.call("record_transaction", lopsided)["error"]["code"] == -32602
    assert row_count(app, IdempotencyKey) == 0
    assert rpc.result("record_transaction", args(books, key="assistant-3"))["recorded"] is True


def test_http_and_mcp_keys_do_not_answer_for_each_other(app, api, rpc, books):
    http_body = dict(args(books).items())
    assert (
        api.post("/transactions", json=http_body, headers={"Idempotency-Key": "both"}).status_code
        == 201
    )
    reply = rpc.call("record_transaction", args(books, key="both"))
    assert reply["error"]["code"] == -32602  # another operation: another request
    assert row_count(app) == 1


def test_the_description_tells_the_model_to_reuse_the_key(rpc):
    tools = {t["name"]: t for t in rpc.request("tools/list")["result"]["tools"]}
    record = tools["record_transaction"]
    assert "retry with the SAME idempotency_key" in record["description"]
    assert "possible_duplicates" in record["description"]
    schema = record["inputSchema"]["properties"]["idempotency_key"]
    assert schema["type"] == "string" and schema["maxLength"] == 255
    assert "idempotency_key" not in record["inputSchema"]["required"]


# --- possible_duplicates ---------------------------------------------------------------------


def test_the_result_lists_look_alikes_and_the_posting_is_not_its_own(rpc, books):
    first = rpc.result("record_transaction", args(books))
    assert first["possible_duplicates"] == []
    second = rpc.result("record_transaction", args(books, day="2026-02-12"))
    assert second["possible_duplicates"] == [first["id"]]
    third = rpc.result("record_transaction", args(books, day="2026-02-11"))
    assert third["possible_duplicates"] == [second["id"], first["id"]]  # newest date first


def _post(app, day, legs, books):
    with app.app_context(), store.writing():
        tx_id = transactions.record_transaction(
            day,
            "t",
            [{"account_id": books[a], "amount_cents": c} for a, c in legs],
            created_by=None,
        )
        store.commit()
        return tx_id


def _dupes(app, day, legs, books, exclude=None):
    with app.app_context():
        found = lookalikes.look_alikes(
            date.fromisoformat(day), [(books[a], c) for a, c in legs], exclude
        )
        db.session.rollback()
        return found


SPEND = [("food", 500), ("bank", -500)]


def test_the_window_is_three_days_either_side_inclusive(app, books):
    ids = {day: _post(app, day, SPEND, books) for day in ("2026-03-06", "2026-03-07")}
    ids |= {day: _post(app, day, SPEND, books) for day in ("2026-03-13", "2026-03-14")}
    found = _dupes(app, "2026-03-10", SPEND, books)
    assert found == [ids["2026-03-13"], ids["2026-03-07"]]  # 3 days out: in; 4: out


def test_entries_must_be_the_same_multiset(app, books):
    same_reordered = _post(app, "2026-04-01", [("bank", -500), ("food", 500)], books)
    _post(app, "2026-04-01", [("food", 500), ("card", -500)], books)  # other account
    _post(app, "2026-04-01", [("food", -500), ("bank", 500)], books)  # signs swapped
    _post(app, "2026-04-01", [("food", 500), ("bank", -400), ("bank", -100)], books)  # split
    _post(app, "2026-04-01", [("food", 250), ("food", 250), ("bank", -500)], books)
    assert _dupes(app, "2026-04-01", SPEND, books) == [same_reordered]


def test_repeated_pairs_count(app, books):
    twice = [("food", 250), ("food", 250), ("bank", -500)]
    three = [("food", 250), ("food", 250), ("bank", -250), ("bank", -250)]
    once_each = [("food", 250), ("bank", -250)]
    a = _post(app, "2026-05-01", twice, books)
    _post(app, "2026-05-01", three, books)
    _post(app, "2026-05-01", once_each, books)
    assert _dupes(app, "2026-05-01", twice, books) == [a]
    assert _dupes(app, "2026-05-01", [("food", 250), ("bank", -500)], books) == []


def test_newest_first_by_date_then_id_at_most_five_and_excluding_itself(app, books):
    days = ["2026-06-01", "2026-06-03", "2026-06-03", "2026-06-02", "2026-06-04", "2026-06-05"]
    ids = [_post(app, day, SPEND, books) for day in days]
    own = _post(app, "2026-06-03", SPEND, books)
    found = _dupes(app, "2026-06-03", SPEND, books, exclude=own)
    expected = sorted(zip(days, ids, strict=True), reverse=True)[:5]
    assert found == [tx_id for _, tx_id in expected]
    assert own not in found and len(found) == 5
    assert found[:3] == [ids[5], ids[4], ids[2]]  # 06-05, 06-04, then the later id of 06-03
    assert own in _dupes(app, "2026-06-03", SPEND, books)  # without exclude it is a look-alike


def test_look_alikes_behind_a_crowd_of_near_misses_are_still_found(app, books):
    """More near-misses (the first pair matches, the rest does not) than one batch of
    candidates: the reading goes on to the older exact matches."""
    older = [_post(app, "2026-07-01", SPEND, books) for _ in range(2)]
    near = [("food", 500), ("card", -500)]
    for _ in range(lookalikes.BATCH + 6):
        _post(app, "2026-07-02", near, books)
    assert _dupes(app, "2026-07-02", SPEND, books) == older[::-1]


def test_hundreds_of_identical_rows_stay_cheap(app, books):
    """An import of many identical rows (found by the fuzzer: each row's look-up read
    every earlier row's entries): a look-up reads one batch and stops at five."""
    rows = [
        {
            "occurred_on": "2026-08-01",
            "description": "same",
            "entries": [
                {"account_id": books["food"], "amount_cents": 500},
                {"account_id": books["bank"], "amount_cents": -500},
            ],
        }
        for _ in range(300)
    ]
    with app.app_context(), store.writing():
        for row in rows:
            transactions.record_transaction(
                row["occurred_on"], row["description"], row["entries"], created_by=None
            )
        store.commit()
    seen: list[str] = []

    def record(_conn, _cursor, statement, *_):
        seen.append(statement)

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        found = _dupes(app, "2026-08-01", SPEND, books)
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert len(found) == 5
    selects = [s for s in seen if s.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 2, selects
    # The entries are read for one batch of candidates, not for all 300 look-alikes.
    placeholders = max(s.count("?") + s.count("%(") for s in selects)
    assert placeholders <= lookalikes.BATCH + 8, placeholders


def test_the_import_look_up_of_many_agrees_with_one_at_a_time(app, books):
    """possible_duplicates_of_many (an import's rows in one pass) gives, row by row,
    what possible_duplicates gives, on books with crowds, near-misses and windows."""
    import random

    rng = random.Random(19)
    shapes = [
        SPEND,
        [("food", 500), ("card", -500)],
        [("bank", -500), ("food", 500)],
        [("food", 250), ("food", 250), ("bank", -500)],
    ]
    for _ in range(120):
        _post(app, f"2026-09-{rng.randint(1, 20):02d}", rng.choice(shapes), books)
    postings = [
        (date(2026, 9, rng.randint(1, 24)), [(books[a], c) for a, c in rng.choice(shapes)])
        for _ in range(40)
    ]
    with app.app_context():
        many = lookalikes.look_alikes_of_many(postings)
        one_by_one = [lookalikes.look_alikes(day, legs) for day, legs in postings]
        db.session.rollback()
    assert many == one_by_one
    assert any(len(found) == 5 for found in many) and any(not found for found in many)


# --- annotations, identical in every revision ------------------------------------------------


def _tools_legacy(rpc):
    return {t["name"]: t for t in rpc.request("tools/list")["result"]["tools"]}


def _tools_modern(rpc):
    response = rpc.post_2026("tools/list")
    assert response.status_code == 200
    return {t["name"]: t for t in response.get_json()["result"]["tools"]}


def test_every_tool_carries_annotations_identical_in_every_revision(rpc, spec_tools):
    legacy, modern = _tools_legacy(rpc), _tools_modern(rpc)
    assert set(legacy) == set(modern) == spec_tools
    for name in spec_tools:
        assert legacy[name]["annotations"] == modern[name]["annotations"], name
        annotations = legacy[name]["annotations"]
        if name in READ_TOOLS:
            assert annotations["readOnlyHint"] is True, name
        else:
            assert annotations["readOnlyHint"] is False
            assert annotations["destructiveHint"] is False
            assert annotations["openWorldHint"] is False
    assert READ_TOOLS | {"record_transaction"} == spec_tools
