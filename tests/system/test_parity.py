"""The same inputs through HTTP and through the tool endpoint give identical figures and
identical rejections (an assistant is refused exactly as an HTTP client is), worked on one
ledger that uses all five kinds."""

from __future__ import annotations

from collections import defaultdict

import pytest


@pytest.fixture
def ledger(make_account, post_tx):
    ids = {
        "Checking": make_account("Checking", "asset"),
        "Savings": make_account("Savings", "asset"),
        "Credit Card": make_account("Credit Card", "liability"),
        "Opening Balance": make_account("Opening Balance", "equity"),
        "Salary": make_account("Salary", "income"),
        "Gifts": make_account("Gifts", "income"),  # never used: must still show 0
        "Groceries": make_account("Groceries", "expense"),
        "Rent": make_account("Rent", "expense"),
    }
    postings = [
        ("2026-01-01", "Opening balance", ("Checking", 100000), ("Opening Balance", -100000)),
        ("2026-01-05", "January pay", ("Checking", 300000), ("Salary", -300000)),
        ("2026-01-10", "Groceries on the card", ("Groceries", 4250), ("Credit Card", -4250)),
        ("2026-02-01", "February rent", ("Rent", 120000), ("Checking", -120000)),
        ("2026-02-05", "February pay", ("Checking", 300000), ("Salary", -300000)),
        ("2026-02-15", "To savings", ("Savings", 50000), ("Checking", -50000)),
        ("2026-02-20", "Pay the card", ("Credit Card", 4250), ("Checking", -4250)),
        ("2026-03-03", "Groceries", ("Groceries", 1999), ("Checking", -1999)),
    ]
    for day, text, *legs in postings:
        response = post_tx(day, text, *[(ids[name], cents) for name, cents in legs])
        assert response.status_code == 201, response.get_json()
    return ids


def http(api, path):
    response = api.get(path)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_account_list_and_transactions_match(api, rpc, ledger):
    assert rpc.result("list_accounts") == http(api, "/accounts")
    assert rpc.result("list_transactions") == http(api, "/transactions")
    window = {"from": "2026-02-01", "to": "2026-02-28"}
    feb = rpc.result("list_transactions", window)
    assert feb == http(api, "/transactions?from=2026-02-01&to=2026-02-28")
    assert [t["description"] for t in feb] == [
        "Pay the card",
        "To savings",
        "February pay",
        "February rent",
    ]


def test_balances_match_and_are_sign_adjusted(api, rpc, ledger):
    all_time = rpc.result("account_balances")
    assert all_time == http(api, "/reports/balances")
    assert {line["account"]: line["cents"] for line in all_time} == {
        "Checking": 100000 + 300000 - 120000 + 300000 - 50000 - 4250 - 1999,
        "Savings": 50000,
        "Credit Card": 0,
        "Opening Balance": 100000,
        "Salary": 600000,
        "Gifts": 0,
        "Groceries": 6249,
        "Rent": 120000,
    }
    feb = rpc.result("account_balances", {"from": "2026-02-01", "to": "2026-02-28"})
    assert feb == http(api, "/reports/balances?from=2026-02-01&to=2026-02-28")
    assert {line["account"]: line["cents"] for line in feb}["Credit Card"] == -4250
    only_from = rpc.result("account_balances", {"from": "2026-03-01"})
    assert only_from == http(api, "/reports/balances?from=2026-03-01")


@pytest.mark.parametrize(
    "start, end",
    [("2026-01-01", "2026-01-31"), ("2026-01-01", "2026-02-28"), ("2026-02-01", "2026-12-31")],
)
def test_income_statement_matches(api, rpc, ledger, start, end):
    statement = rpc.result("income_statement", {"from": start, "to": end})
    assert statement == http(api, f"/reports/income-statement?from={start}&to={end}")
    assert (
        statement["net_cents"]
        == statement["total_income_cents"] - statement["total_expenses_cents"]
    )


def test_income_statement_worked_example(rpc, ledger):
    january = rpc.result("income_statement", {"from": "2026-01-01", "to": "2026-01-31"})
    assert january == {
        "from": "2026-01-01",
        "to": "2026-01-31",
        "income": [{"account": "Gifts", "cents": 0}, {"account": "Salary", "cents": 300000}],
        "total_income_cents": 300000,
        "expenses": [{"account": "Groceries", "cents": 4250}, {"account": "Rent", "cents": 0}],
        "total_expenses_cents": 4250,
        "net_cents": 295750,
    }


@pytest.mark.parametrize("as_of", ["2026-01-31", "2026-02-28", "2026-12-31", "2025-12-31"])
def test_balance_sheet_matches(api, rpc, ledger, as_of):
    sheet = rpc.result("balance_sheet", {"as_of": as_of})
    assert sheet == http(api, f"/reports/balance-sheet?as_of={as_of}")
    assert (
        sheet["total_assets_cents"]
        == sheet["total_liabilities_cents"] + sheet["total_equity_cents"]
    )


def test_balance_sheet_worked_example(rpc, ledger):
    sheet = rpc.result("balance_sheet", {"as_of": "2026-01-31"})
    assert sheet["assets"] == [
        {"account": "Checking", "cents": 400000},
        {"account": "Savings", "cents": 0},
    ]
    assert sheet["liabilities"] == [{"account": "Credit Card", "cents": 4250}]
    assert sheet["equity"] == [{"account": "Opening Balance", "cents": 100000}]
    assert sheet["retained_cents"] == 295750
    assert sheet["total_equity_cents"] == 395750
    assert sheet["total_assets_cents"] == 400000


# --- identical rejections ------------------------------------------------------------------


@pytest.mark.parametrize(
    "path, tool, arguments",
    [
        ("/reports/balances?from=2026-13-01", "account_balances", {"from": "2026-13-01"}),
        ("/reports/balances?to=yesterday", "account_balances", {"to": "yesterday"}),
        (
            "/reports/balances?from=2026-02-01&to=2026-01-31",
            "account_balances",
            {"from": "2026-02-01", "to": "2026-01-31"},
        ),
        (
            "/reports/income-statement?from=2026-02-01&to=2026-01-31",
            "income_statement",
            {"from": "2026-02-01", "to": "2026-01-31"},
        ),
        (
            "/reports/income-statement?from=2026/01/01&to=2026-01-31",
            "income_statement",
            {"from": "2026/01/01", "to": "2026-01-31"},
        ),
        ("/reports/balance-sheet?as_of=2026-02-30", "balance_sheet", {"as_of": "2026-02-30"}),
        ("/transactions?to=31-01-2026", "list_transactions", {"to": "31-01-2026"}),
        (
            "/transactions?from=2026-03-01&to=2026-02-01",
            "list_transactions",
            {"from": "2026-03-01", "to": "2026-02-01"},
        ),
    ],
)
def test_read_rejections_match(api, rpc, ledger, path, tool, arguments):
    response = api.get(path)
    assert response.status_code == 400
    reply = rpc.call(tool, arguments)
    assert reply["error"] == {"code": -32602, "message": response.get_json()["error"]}


def _bodies(ids):
    ok = [
        {"account_id": ids["Groceries"], "amount_cents": 1000},
        {"account_id": ids["Checking"], "amount_cents": -1000},
    ]
    return [
        {
            "occurred_on": "2026-03-05",
            "description": "Unbalanced",
            "entries": [dict(ok[0]), {**ok[1], "amount_cents": -999}],
        },
        {"occurred_on": "2026-03-05", "description": "One leg", "entries": [ok[0]]},
        {"occurred_on": "2026-03-05", "description": "No legs", "entries": []},
        {
            "occurred_on": "2026-03-05",
            "description": "Unknown account",
            "entries": [ok[0], {**ok[1], "account_id": 424242}],
        },
        {"occurred_on": "2026-03-05", "description": "   ", "entries": ok},
        {"occurred_on": "2026-03-05", "entries": ok},
        {"occurred_on": "5 March", "description": "Bad date", "entries": ok},
        {"description": "No date", "entries": ok},
        {
            "occurred_on": "2026-03-05",
            "description": "Float",
            "entries": [{**ok[0], "amount_cents": 10.5}, {**ok[1], "amount_cents": -10.5}],
        },
        {
            "occurred_on": "2026-03-05",
            "description": "String cents",
            "entries": [{**ok[0], "amount_cents": "1000"}, ok[1]],
        },
        {
            "occurred_on": "2026-03-05",
            "description": "Missing account",
            "entries": [{"amount_cents": 1000}, ok[1]],
        },
        {"occurred_on": "2026-03-05", "description": "Entries not a list", "entries": "1000"},
        {"occurred_on": "2026-03-05", "description": 7, "entries": ok},
    ]


@pytest.mark.parametrize("case", range(len(_bodies(defaultdict(int)))))
def test_write_rejections_match_and_store_nothing(api, rpc, ledger, case):
    body = _bodies(ledger)[case]
    before = http(api, "/transactions")
    response = api.post("/transactions", json=body)
    assert response.status_code == 400
    reply = rpc.call("record_transaction", body)
    assert reply["error"] == {"code": -32602, "message": response.get_json()["error"]}
    assert http(api, "/transactions") == before


def test_one_recording_through_each_interface_gives_the_same_figures(api, rpc, ledger):
    body = {
        "occurred_on": "2026-03-10",
        "description": "Groceries",
        "entries": [
            {"account_id": ledger["Groceries"], "amount_cents": 1234},
            {"account_id": ledger["Checking"], "amount_cents": -1234},
        ],
    }
    assert api.post("/transactions", json=body).status_code == 201
    after_http = http(api, "/reports/balances")
    assert rpc.result("record_transaction", body)["recorded"] is True
    after_both = rpc.result("account_balances")
    assert after_both == http(api, "/reports/balances")
    groceries = {line["account"]: line["cents"] for line in after_http}["Groceries"]
    assert {line["account"]: line["cents"] for line in after_both}["Groceries"] == groceries + 1234


# --- identical in every revision (docs/mcp.md "Protocol revisions") ----------------------


def _calls(ids):
    """Successes and rejections of all six tools, each sent once per revision."""
    good = {
        "occurred_on": "2026-03-05",
        "description": "Groceries",
        "entries": [
            {"account_id": ids["Groceries"], "amount_cents": 1000},
            {"account_id": ids["Checking"], "amount_cents": -1000},
        ],
    }
    return [
        ("list_accounts", {}),
        ("account_balances", {}),
        ("account_balances", {"from": "2026-02-01", "to": "2026-02-28"}),
        ("account_balances", {"from": "2026-13-01"}),
        ("income_statement", {"from": "2026-01-01", "to": "2026-03-31"}),
        ("income_statement", {"from": "2026-02-01", "to": "2026-01-31"}),
        ("balance_sheet", {"as_of": "2026-02-28"}),
        ("balance_sheet", {}),
        ("list_transactions", {}),
        ("list_transactions", {"to": "31-01-2026"}),
        ("record_transaction", {**good, "entries": good["entries"][:1]}),
        ("record_transaction", {**good, "description": 7}),
        ("no_such_tool", {}),
    ] + [("record_transaction", body) for body in _bodies(ids)]


def test_every_revision_gets_the_same_results_and_rejections(rpc, ledger):
    checked = 0
    for tool, arguments in _calls(ledger):
        legacy = rpc.call(tool, arguments)
        modern = rpc.call_2026(tool, arguments)
        if "error" in legacy:
            assert modern["error"] == legacy["error"], (tool, arguments)
        else:
            assert modern["result"].pop("resultType") == "complete"
            assert modern["result"] == legacy["result"], (tool, arguments)
        checked += 1
    assert checked == 13 + len(_bodies(ledger))
    assert (
        rpc.result("list_transactions")
        == rpc.call_2026("list_transactions")["result"]["structuredContent"]["result"]
    )  # and nothing was stored by any rejection


def test_a_recording_under_2026_07_28_gives_the_figures_a_legacy_one_does(api, rpc, ledger):
    body = {
        "occurred_on": "2026-03-10",
        "description": "Groceries",
        "entries": [
            {"account_id": ledger["Groceries"], "amount_cents": 1234},
            {"account_id": ledger["Checking"], "amount_cents": -1234},
        ],
    }
    before = http(api, "/transactions")
    first = rpc.call("record_transaction", body)["result"]["structuredContent"]
    second = rpc.call_2026("record_transaction", body)["result"]["structuredContent"]
    assert first["recorded"] is second["recorded"] is True
    assert second["id"] == first["id"] + 1
    after = http(api, "/transactions")
    assert len(after) == len(before) + 2
    pair = {t["id"]: t for t in after if t["id"] in (first["id"], second["id"])}
    strip = [{k: v for k, v in t.items() if k not in ("id", "created_at")} for t in pair.values()]
    assert strip[0] == strip[1]
