"""GET /reports/series as worked examples (docs/ledger.md, "Trends and comparisons").

The expected cents are written out by hand from POSTINGS below; a property-style check
compares every period of random books with the income statement and balance sheet of
that period.
"""

import random
from datetime import date, timedelta

import pytest

POSTINGS = [
    # (date, description, [(account, cents), ...])  debit positive, credit negative
    ("2025-12-31", "opening balance", [("Bank", 500000), ("Opening", -500000)]),
    ("2026-01-05", "salary", [("Bank", 320000), ("Salary", -320000)]),
    ("2026-01-10", "groceries on card", [("Food", 8450), ("Card", -8450)]),
    ("2026-01-20", "rent", [("Rent", 150000), ("Bank", -150000)]),
    ("2026-02-01", "pay card", [("Card", 8450), ("Bank", -8450)]),
    ("2026-02-14", "dinner", [("Food", 6000), ("Card", -6000)]),
    ("2026-03-31", "salary", [("Bank", 320000), ("Salary", -320000)]),
    ("2026-04-02", "rent", [("Rent", 150000), ("Bank", -150000)]),
    ("2026-07-15", "market", [("Food", 2500), ("Bank", -2500)]),
]
ACCOUNTS = {
    "Bank": "asset",
    "Savings": "asset",
    "Card": "liability",
    "Opening": "equity",
    "Salary": "income",
    "Gifts": "income",
    "Food": "expense",
    "Rent": "expense",
}


@pytest.fixture
def ledger(make_account, post_tx):
    ids = {name: make_account(name, kind) for name, kind in ACCOUNTS.items()}
    for day, description, legs in POSTINGS:
        response = post_tx(day, description, *[(ids[a], c) for a, c in legs])
        assert response.status_code == 201, response.get_json()
    return ids


def series(api, query):
    response = api.get("/reports/series" + query)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def cents(body):
    return {line["name"]: line["cents"] for line in body["accounts"]}


def periods(body):
    return [(p["from"], p["to"]) for p in body["periods"]]


def test_monthly_series_of_whole_months(api, ledger):
    body = series(api, "?from=2026-01-01&to=2026-04-30")
    assert body["interval"] == "month"
    assert periods(body) == [
        ("2026-01-01", "2026-01-31"),
        ("2026-02-01", "2026-02-28"),
        ("2026-03-01", "2026-03-31"),
        ("2026-04-01", "2026-04-30"),
    ]
    assert cents(body) == {
        "Bank": [170000, -8450, 320000, -150000],
        "Savings": [0, 0, 0, 0],  # nothing happened: still listed, with 0
        "Card": [8450, -2450, 0, 0],  # a liability grows positive, as the reports sign it
        "Opening": [0, 0, 0, 0],  # its posting lies before the window
        "Salary": [320000, 0, 320000, 0],
        "Gifts": [0, 0, 0, 0],
        "Food": [8450, 6000, 0, 0],
        "Rent": [150000, 0, 0, 150000],
    }
    assert body["total_income_cents"] == [320000, 0, 320000, 0]
    assert body["total_expenses_cents"] == [158450, 6000, 0, 150000]
    assert body["net_cents"] == [161550, -6000, 320000, -150000]
    # Bank 500,000.00 before the window, then the card's debt subtracted.
    assert body["net_worth_cents"] == [661550, 655550, 975550, 825550]


def test_the_answer_has_exactly_the_documented_shape(api, ledger):
    body = series(api, "?from=2026-01-01&to=2026-02-28")
    assert list(body) == [
        "interval",
        "periods",
        "accounts",
        "total_income_cents",
        "total_expenses_cents",
        "net_cents",
        "net_worth_cents",
    ]
    assert body["accounts"][0] == {
        "account_id": ledger["Bank"],
        "name": "Bank",
        "kind": "asset",
        "cents": [170000, -8450],
    }


def test_accounts_come_in_the_order_of_get_accounts(api, ledger):
    body = series(api, "?from=2026-01-01&to=2026-01-31")
    listed = api.get("/accounts").get_json()
    assert [(a["account_id"], a["name"], a["kind"]) for a in body["accounts"]] == [
        (a["id"], a["name"], a["kind"]) for a in listed
    ]


def test_the_window_is_cut_at_both_ends(api, ledger):
    body = series(api, "?from=2026-01-10&to=2026-03-30")
    assert periods(body) == [
        ("2026-01-10", "2026-01-31"),
        ("2026-02-01", "2026-02-28"),
        ("2026-03-01", "2026-03-30"),
    ]
    got = cents(body)
    assert got["Salary"] == [0, 0, 0]  # 5 January and 31 March lie outside
    assert got["Food"] == [8450, 6000, 0]  # 10 January, the first day, counts
    assert got["Bank"] == [-150000, -8450, 0]
    assert body["net_cents"] == [-158450, -6000, 0]
    # Opening 500,000.00 + the salary of 5 January before the window.
    assert body["net_worth_cents"] == [661550, 655550, 655550]


def test_quarterly_series_cut_at_both_ends(api, ledger):
    body = series(api, "?from=2026-01-10&to=2026-07-20&interval=quarter")
    assert body["interval"] == "quarter"
    assert periods(body) == [
        ("2026-01-10", "2026-03-31"),
        ("2026-04-01", "2026-06-30"),
        ("2026-07-01", "2026-07-20"),
    ]
    got = cents(body)
    assert got["Salary"] == [320000, 0, 0]
    assert got["Food"] == [14450, 0, 2500]
    assert got["Rent"] == [150000, 150000, 0]
    assert body["total_income_cents"] == [320000, 0, 0]
    assert body["total_expenses_cents"] == [164450, 150000, 2500]
    assert body["net_cents"] == [155550, -150000, -2500]
    assert body["net_worth_cents"] == [975550, 825550, 823050]


def test_yearly_series_and_net_worth_across_years(api, ledger):
    body = series(api, "?from=2025-12-31&to=2026-12-31&interval=year")
    assert periods(body) == [("2025-12-31", "2025-12-31"), ("2026-01-01", "2026-12-31")]
    got = cents(body)
    assert got["Opening"] == [500000, 0]
    assert got["Bank"] == [500000, 329050]
    assert body["total_income_cents"] == [0, 640000]
    assert body["total_expenses_cents"] == [0, 316950]
    assert body["net_cents"] == [0, 323050]
    assert body["net_worth_cents"] == [500000, 823050]


def test_a_window_inside_one_month_and_one_across_two_partial_months(api, ledger):
    # No whole month inside either: the days are read and still split by month.
    assert cents(series(api, "?from=2026-01-06&to=2026-01-19"))["Food"] == [8450]
    body = series(api, "?from=2026-01-15&to=2026-02-10")
    assert periods(body) == [("2026-01-15", "2026-01-31"), ("2026-02-01", "2026-02-10")]
    assert cents(body)["Bank"] == [-150000, -8450]
    assert cents(body)["Card"] == [0, -8450]
    assert body["net_worth_cents"] == [661550, 661550]


def test_a_month_in_which_every_account_moves(api, ledger, post_tx):
    legs = [
        (ledger[name], cents)
        for name, cents in [
            ("Bank", 1000),
            ("Savings", 2000),
            ("Card", -300),
            ("Opening", -400),
            ("Salary", -5000),
            ("Gifts", -600),
            ("Food", 700),
            ("Rent", 2600),
        ]
    ]
    assert post_tx("2026-05-09", "everything at once", *legs).status_code == 201
    body = series(api, "?from=2026-05-01&to=2026-05-31")
    assert cents(body) == {
        "Bank": [1000],
        "Savings": [2000],
        "Card": [300],
        "Opening": [400],
        "Salary": [5000],
        "Gifts": [600],
        "Food": [700],
        "Rent": [2600],
    }
    assert body["total_income_cents"] == [5600] and body["net_cents"] == [5600 - 3300]


def test_default_window_is_the_twelve_months_ending_this_month(api, ledger, clock):
    # The fake clock says 2026-11-21.
    body = series(api, "")
    assert body["interval"] == "month"
    assert len(body["periods"]) == 12
    assert body["periods"][0] == {"from": "2025-12-01", "to": "2025-12-31"}
    assert body["periods"][-1] == {"from": "2026-11-01", "to": "2026-11-30"}
    assert cents(body)["Opening"][0] == 500000
    # `to` alone: the twelve months ending with its month; `from` alone: up to this month.
    only_to = series(api, "?to=2026-03-15&interval=quarter")
    assert periods(only_to)[0] == ("2025-04-01", "2025-06-30")
    assert periods(only_to)[-1] == ("2026-01-01", "2026-03-15")
    only_from = series(api, "?from=2026-10-05&interval=")
    assert periods(only_from) == [("2026-10-05", "2026-10-31"), ("2026-11-01", "2026-11-30")]
    clock.advance(days=11)  # 2026-12-02: the default window moves with the clock
    assert series(api, "")["periods"][-1] == {"from": "2026-12-01", "to": "2026-12-31"}


def test_an_empty_ledger_has_empty_lists_of_accounts(api):
    body = series(api, "?from=2026-01-01&to=2026-03-31&interval=quarter")
    assert body["accounts"] == []
    assert body["net_cents"] == [0] and body["net_worth_cents"] == [0]


@pytest.mark.parametrize(
    "query,named",
    [
        ("?interval=week", "'interval'"),
        ("?interval=Month", "'interval'"),
        ("?from=2026-02-30", "'from'"),
        ("?to=26-01-31", "'to'"),
        ("?from=1899-12-31&to=1900-01-31", "'from'"),
        ("?from=2026-03-01&to=2026-02-28", "'to'"),
        ("?from=2027-01-01", "'to'"),  # after the default `to` (the end of this month)
        ("?from=1950-01-01&to=2000-01-31", "'interval'"),  # 601 months
        ("?from=1900-01-01&to=2200-12-31&interval=quarter", "'interval'"),  # 1204 quarters
    ],
)
def test_bad_input_is_refused_naming_the_parameter(api, ledger, query, named):
    response = api.get("/reports/series" + query)
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert set(response.get_json()) == {"error"}
    assert error.startswith(named), error


def test_six_hundred_periods_are_allowed(api, ledger):
    body = series(api, "?from=1950-01-01&to=1999-12-31")
    assert len(body["periods"]) == 600
    assert body["periods"][-1] == {"from": "1999-12-01", "to": "1999-12-31"}
    assert series(api, "?from=1900-01-01&to=2200-12-31&interval=year")["periods"][-1] == {
        "from": "2200-01-01",
        "to": "2200-12-31",
    }


def _statement(api, lo, hi):
    return api.get(f"/reports/income-statement?from={lo}&to={hi}").get_json()


def _sheet(api, day):
    return api.get(f"/reports/balance-sheet?as_of={day}").get_json()


def _assert_each_period_is_its_reports(api, body):
    """Every period's figures equal the income statement of that period and the balance
    sheet as of its last day; each account's figure its balance over the period."""
    for i, period in enumerate(body["periods"]):
        statement = _statement(api, period["from"], period["to"])
        assert body["total_income_cents"][i] == statement["total_income_cents"], period
        assert body["total_expenses_cents"][i] == statement["total_expenses_cents"], period
        assert body["net_cents"][i] == statement["net_cents"], period
        sheet = _sheet(api, period["to"])
        worth = sheet["total_assets_cents"] - sheet["total_liabilities_cents"]
        assert body["net_worth_cents"][i] == worth, period
        balances = api.get(f"/reports/balances?from={period['from']}&to={period['to']}")
        by_name = {line["account"]: line["cents"] for line in balances.get_json()}
        assert {a["name"]: a["cents"][i] for a in body["accounts"]} == by_name, period


@pytest.mark.parametrize("interval", ["month", "quarter", "year"])
def test_each_period_equals_the_reports_of_that_period(api, ledger, interval):
    body = series(api, f"?from=2025-12-20&to=2026-08-10&interval={interval}")
    _assert_each_period_is_its_reports(api, body)


def test_random_books_agree_with_the_reports_period_by_period(api, make_account, post_tx):
    rng = random.Random(46)
    ids = [
        make_account(f"{kind.title()} {n}", kind)
        for kind in ("asset", "liability", "equity", "income", "expense")
        for n in range(2)
    ]
    first = date(2024, 11, 1)
    for n in range(60):
        day = first + timedelta(days=rng.randrange(0, 500))
        a, b = rng.sample(ids, 2)
        amount = rng.randrange(1, 500000)
        assert post_tx(day.isoformat(), f"t{n}", (a, amount), (b, -amount)).status_code == 201
    for n in range(6):  # days on which every account moves (the row of every account)
        day = first + timedelta(days=rng.randrange(0, 500))
        amounts = [rng.randrange(-300000, 300000) for _ in ids[1:]]
        legs = [(ids[0], -sum(amounts)), *zip(ids[1:], amounts, strict=True)]
        assert post_tx(day.isoformat(), f"all {n}", *legs).status_code == 201
    for interval in ("month", "quarter", "year"):
        lo = first + timedelta(days=rng.randrange(0, 120))
        hi = lo + timedelta(days=rng.randrange(200, 400))
        body = series(api, f"?from={lo}&to={hi}&interval={interval}")
        _assert_each_period_is_its_reports(api, body)


def test_a_series_is_the_same_two_statements_whatever_its_length(api, ledger, sql_sent):
    """Built from the month balances: the statements a series issues do not grow with
    the number of periods (one month, then 120 months with partial ends)."""

    def balances_read() -> list[str]:
        return [s for s in sql_sent if "account_month_balances" in s or "account_day_balances" in s]

    series(api, "?from=2026-01-01&to=2026-01-31")
    short = balances_read()
    sql_sent.clear()
    long = series(api, "?from=2016-01-15&to=2026-01-14")
    assert len(long["periods"]) == 121
    seen = balances_read()
    assert len(short) == 2, short
    assert seen == short  # the same two texts: only the bounds differ
    assert "FROM entries" not in " ".join(seen)
