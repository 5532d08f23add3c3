"""`compare` on the income statement and the balance sheet, as worked examples
(docs/ledger.md, "Trends and comparisons")."""

from datetime import date

import pytest

from app.services.ledger.comparisons import previous_window, year_before

POSTINGS = [
    # (date, description, [(account, cents), ...])  debit positive, credit negative
    ("2023-02-28", "salary", [("Bank", 50000), ("Salary", -50000)]),
    ("2023-03-01", "rent", [("Rent", 33300), ("Bank", -33300)]),
    ("2024-02-28", "bread", [("Food", 111), ("Bank", -111)]),
    ("2024-02-29", "a gift on the leap day", [("Bank", 999), ("Gifts", -999)]),
    ("2025-01-01", "opening balance", [("Bank", 100000), ("Opening", -100000)]),
    ("2025-02-28", "salary", [("Bank", 200000), ("Salary", -200000)]),
    ("2025-03-10", "food on card", [("Food", 5000), ("Card", -5000)]),
    ("2025-12-15", "food", [("Food", 1234), ("Bank", -1234)]),
    ("2026-01-20", "rent", [("Rent", 90000), ("Bank", -90000)]),
    ("2026-02-28", "salary", [("Bank", 210000), ("Salary", -210000)]),
    ("2026-03-05", "food on card", [("Food", 7000), ("Card", -7000)]),
]
ACCOUNTS = {
    "Bank": "asset",
    "Card": "liability",
    "Opening": "equity",
    "Salary": "income",
    "Gifts": "income",
    "Food": "expense",
    "Rent": "expense",
}
Q1 = "from=2026-01-01&to=2026-03-31"


@pytest.fixture
def ledger(make_account, post_tx):
    ids = {name: make_account(name, kind) for name, kind in ACCOUNTS.items()}
    for day, description, legs in POSTINGS:
        response = post_tx(day, description, *[(ids[a], c) for a, c in legs])
        assert response.status_code == 201, response.get_json()
    return ids


def ok(response):
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def refused(response, named):
    assert response.status_code == 400, response.get_json()
    body = response.get_json()
    assert set(body) == {"error"} and body["error"].startswith(named), body
    return body["error"]


# --- the windows -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "start,end,previous",
    [
        # 90 days (January to March 2026) end the day before 1 January.
        ("2026-01-01", "2026-03-31", ("2025-10-03", "2025-12-31")),
        ("2026-03-01", "2026-03-01", ("2026-02-28", "2026-02-28")),  # one day
        ("2024-03-01", "2024-03-31", ("2024-01-30", "2024-02-29")),  # 31 days over a leap Feb
        ("2026-01-10", "2027-01-09", ("2025-01-10", "2026-01-09")),  # 365 days
    ],
)
def test_previous_is_as_many_days_ending_the_day_before(start, end, previous):
    window = previous_window("previous", date.fromisoformat(start), date.fromisoformat(end))
    assert tuple(d.isoformat() for d in window) == previous


@pytest.mark.parametrize(
    "day,before",
    [
        ("2024-02-29", "2023-02-28"),  # 29 February read as 28 February
        ("2025-02-28", "2024-02-28"),  # not moved to the leap day
        ("2025-03-01", "2024-03-01"),
        ("2026-12-31", "2025-12-31"),
    ],
)
def test_a_year_before(day, before):
    assert year_before(date.fromisoformat(day)).isoformat() == before


# --- the income statement ----------------------------------------------------------------


def test_income_statement_against_the_previous_year(api, ledger):
    body = ok(api.get(f"/reports/income-statement?{Q1}&compare=previous_year"))
    assert body["income"] == [
        {"account": "Gifts", "cents": 0, "previous_cents": 0},
        {"account": "Salary", "cents": 210000, "previous_cents": 200000},
    ]
    assert body["expenses"] == [
        {"account": "Food", "cents": 7000, "previous_cents": 5000},
        {"account": "Rent", "cents": 90000, "previous_cents": 0},
    ]
    assert (body["total_income_cents"], body["total_expenses_cents"]) == (210000, 97000)
    assert body["net_cents"] == 113000
    assert body["previous"] == {
        "from": "2025-01-01",
        "to": "2025-03-31",
        "total_income_cents": 200000,
        "total_expenses_cents": 5000,
        "net_cents": 195000,
    }


def test_income_statement_against_the_previous_window(api, ledger):
    body = ok(api.get(f"/reports/income-statement?{Q1}&compare=previous"))
    assert body["expenses"] == [
        {"account": "Food", "cents": 7000, "previous_cents": 1234},  # 15 December 2025
        {"account": "Rent", "cents": 90000, "previous_cents": 0},
    ]
    assert body["previous"] == {
        "from": "2025-10-03",
        "to": "2025-12-31",
        "total_income_cents": 0,
        "total_expenses_cents": 1234,
        "net_cents": -1234,
    }


def test_the_leap_day_is_compared_with_28_february(api, ledger):
    body = ok(
        api.get("/reports/income-statement?from=2024-02-01&to=2024-02-29&compare=previous_year")
    )
    assert (body["previous"]["from"], body["previous"]["to"]) == ("2023-02-01", "2023-02-28")
    # The salary of 28 February 2023 is in; the rent of 1 March 2023 is not.
    assert body["previous"]["total_income_cents"] == 50000
    assert body["previous"]["total_expenses_cents"] == 0
    assert body["income"] == [
        {"account": "Gifts", "cents": 999, "previous_cents": 0},
        {"account": "Salary", "cents": 0, "previous_cents": 50000},
    ]


def test_compare_with_a_budget_gives_both(api, ledger):
    made = api.post("/budgets", json={"name": "Plan 2026", "starts_on": "2026-01-01"})
    assert made.status_code == 201, made.get_json()
    budget = made.get_json()
    lines = [{"account_id": ledger["Food"], "annual_cents": 120000}]  # 10,000.00 a month
    assert api.put(f"/budgets/{budget['id']}", json={"lines": lines}).status_code == 200
    query = f"{Q1}&budget={budget['id']}"
    body = ok(api.get(f"/reports/income-statement?{query}&compare=previous_year"))
    assert body["expenses"][0] == {
        "account": "Food",
        "cents": 7000,
        "budget_cents": 30000,
        "variance_cents": 23000,
        "previous_cents": 5000,
    }
    assert body["budget"] == {"id": budget["id"], "name": "Plan 2026"}
    assert body["total_expenses_budget_cents"] == 30000
    assert body["previous"]["total_expenses_cents"] == 5000
    # The budget's own rules still hold: a budget plans whole months.
    refused(
        api.get(
            f"/reports/income-statement?from=2026-01-02&to=2026-03-31&budget={budget['id']}"
            "&compare=previous"
        ),
        "'from'",
    )


def test_without_compare_the_statement_is_exactly_as_before(api, ledger):
    expected = (
        b'{"from":"2026-01-01","to":"2026-03-31","income":[{"account":"Gifts","cents":0},'
        b'{"account":"Salary","cents":210000}],"total_income_cents":210000,'
        b'"expenses":[{"account":"Food","cents":7000},{"account":"Rent","cents":90000}],'
        b'"total_expenses_cents":97000,"net_cents":113000}\n'
    )
    for query in (Q1, Q1 + "&compare="):
        response = api.get(f"/reports/income-statement?{query}")
        assert response.status_code == 200
        assert response.data == expected


@pytest.mark.parametrize(
    "query,named",
    [
        (Q1 + "&compare=previous_month", "'compare'"),
        (Q1 + "&compare=PREVIOUS", "'compare'"),
        ("compare=previous", "'from'"),
        ("to=2026-03-31&compare=previous_year", "'from'"),
        ("from=2026-01-01&compare=previous_year", "'to'"),
        ("from=2026-01-01&to=2026-13-01&compare=previous", "'to'"),
        ("from=2026-03-01&to=2026-01-01&compare=previous", "'to'"),
    ],
)
def test_income_statement_refusals(api, ledger, query, named):
    refused(api.get(f"/reports/income-statement?{query}"), named)


# --- the balance sheet -------------------------------------------------------------------


def test_balance_sheet_against_the_previous_year(api, ledger):
    body = ok(api.get("/reports/balance-sheet?as_of=2026-03-31&compare=previous_year"))
    assert body["assets"] == [{"account": "Bank", "cents": 436354, "previous_cents": 317588}]
    assert body["liabilities"] == [{"account": "Card", "cents": 12000, "previous_cents": 5000}]
    assert body["equity"] == [{"account": "Opening", "cents": 100000, "previous_cents": 100000}]
    assert body["retained_cents"] == 324354
    assert body["previous"] == {
        "as_of": "2025-03-31",
        "total_assets_cents": 317588,
        "total_liabilities_cents": 5000,
        "retained_cents": 212588,
        "total_equity_cents": 312588,
    }
    # Each column balances on its own.
    previous = body["previous"]
    assert previous["total_assets_cents"] == (
        previous["total_liabilities_cents"] + previous["total_equity_cents"]
    )


def test_balance_sheet_of_a_leap_day_against_28_february(api, ledger):
    body = ok(api.get("/reports/balance-sheet?as_of=2024-02-29&compare=previous_year"))
    assert body["previous"]["as_of"] == "2023-02-28"
    # The salary of 28 February 2023 counts, the rent of 1 March 2023 does not yet.
    assert body["assets"] == [{"account": "Bank", "cents": 17588, "previous_cents": 50000}]


def test_balance_sheet_compare_defaults_to_today(api, ledger, clock):
    # The fake clock says 2026-11-21.
    body = ok(api.get("/reports/balance-sheet?compare=previous_year"))
    assert body["as_of"] == "2026-11-21"
    assert body["previous"]["as_of"] == "2025-11-21"
    assert body["assets"][0]["previous_cents"] == 317588


def test_without_compare_the_sheet_is_exactly_as_before(api, ledger):
    expected = (
        b'{"as_of":"2025-03-31","assets":[{"account":"Bank","cents":317588}],'
        b'"total_assets_cents":317588,"liabilities":[{"account":"Card","cents":5000}],'
        b'"total_liabilities_cents":5000,"equity":[{"account":"Opening","cents":100000}],'
        b'"retained_cents":212588,"total_equity_cents":312588}\n'
    )
    for query in ("as_of=2025-03-31", "as_of=2025-03-31&compare="):
        response = api.get(f"/reports/balance-sheet?{query}")
        assert response.status_code == 200
        assert response.data == expected


@pytest.mark.parametrize("value", ["previous", "previous_month", "year"])
def test_balance_sheet_takes_only_previous_year(api, ledger, value):
    error = refused(
        api.get(f"/reports/balance-sheet?as_of=2026-03-31&compare={value}"), "'compare'"
    )
    assert "previous_year" in error


# --- the tools give the same figures ------------------------------------------------------


def test_the_tools_give_the_same_figures_and_refusals(api, rpc, ledger):
    for compare in ("previous", "previous_year"):
        args = {"from": "2026-01-01", "to": "2026-03-31", "compare": compare}
        http = ok(api.get("/reports/income-statement", query_string=args))
        assert rpc.result("income_statement", args) == http
    args = {"as_of": "2026-03-31", "compare": "previous_year"}
    http = ok(api.get("/reports/balance-sheet", query_string=args))
    assert rpc.result("balance_sheet", args) == http
    reply = rpc.call("balance_sheet", {"as_of": "2026-03-31", "compare": "previous"})
    assert reply["error"]["code"] == -32602
    assert reply["error"]["message"].startswith("'compare'")
    plain = rpc.result("income_statement", {"from": "2026-01-01", "to": "2026-03-31"})
    assert "previous" not in plain and "previous_cents" not in plain["income"][0]
