"""Reports as worked examples on a ledger holding all five kinds.

Expected figures are computed in the test from the postings themselves (raw
debit/credit sums and the sign rule written out here), not read back from the
service.
"""

import pytest

POSTINGS = [
    # (date, description, [(account, cents), ...])  debit positive, credit negative
    ("2025-12-31", "opening balance", [("Bank", 500000), ("Opening", -500000)]),
    ("2026-01-05", "salary", [("Bank", 320000), ("Salary", -320000)]),
    ("2026-01-10", "groceries on card", [("Food", 8450), ("Card", -8450)]),
    ("2026-01-20", "rent", [("Rent", 150000), ("Bank", -150000)]),
    ("2026-02-01", "pay card", [("Card", 8450), ("Bank", -8450)]),
    ("2026-02-05", "salary", [("Bank", 320000), ("Salary", -320000)]),
    ("2026-02-14", "dinner", [("Food", 6000), ("Card", -6000)]),
    ("2026-03-01", "interest", [("Bank", 123), ("Interest", -123)]),
]
ACCOUNTS = {
    "Bank": "asset",
    "Savings": "asset",
    "Card": "liability",
    "Opening": "equity",
    "Salary": "income",
    "Interest": "income",
    "Food": "expense",
    "Rent": "expense",
}
SIGN = {"asset": 1, "expense": 1, "liability": -1, "equity": -1, "income": -1}


def raw_sums(start=None, end=None):
    sums = dict.fromkeys(ACCOUNTS, 0)
    for day, _, legs in POSTINGS:
        if (start and day < start) or (end and day > end):
            continue
        for account, cents in legs:
            sums[account] += cents
    return sums


def shown(start=None, end=None):
    return {a: SIGN[ACCOUNTS[a]] * c for a, c in raw_sums(start, end).items()}


@pytest.fixture
def ledger(make_account, post_tx):
    ids = {name: make_account(name, kind) for name, kind in ACCOUNTS.items()}
    for day, description, legs in POSTINGS:
        response = post_tx(day, description, *[(ids[a], c) for a, c in legs])
        assert response.status_code == 201
    return ids


def lines(response):
    assert response.status_code == 200, response.get_json()
    return {line["account"]: line["cents"] for line in response.get_json()}


def test_all_time_balances_are_sign_adjusted(api, ledger):
    got = lines(api.get("/reports/balances"))
    assert got == shown()
    assert got["Salary"] == 640000 and got["Card"] == 6000 and got["Opening"] == 500000
    assert got["Savings"] == 0  # no activity: still listed, with 0
    assert sum(raw_sums().values()) == 0


def test_balances_come_ordered_like_accounts(api, ledger):
    names = [line["account"] for line in api.get("/reports/balances").get_json()]
    assert names == [a["name"] for a in api.get("/accounts").get_json()]


@pytest.mark.parametrize(
    "query,start,end",
    [
        ("?from=2026-01-01&to=2026-01-31", "2026-01-01", "2026-01-31"),
        ("?from=2026-02-01", "2026-02-01", None),
        ("?to=2026-01-10", None, "2026-01-10"),
        ("?from=2026-01-05&to=2026-01-05", "2026-01-05", "2026-01-05"),
    ],
)
def test_windowed_balances(api, ledger, query, start, end):
    assert lines(api.get("/reports/balances" + query)) == shown(start, end)


def test_income_statement_for_a_period(api, ledger):
    response = api.get("/reports/income-statement?from=2026-01-01&to=2026-02-28")
    assert response.status_code == 200
    body = response.get_json()
    expected = shown("2026-01-01", "2026-02-28")
    assert body["from"] == "2026-01-01" and body["to"] == "2026-02-28"
    assert body["income"] == [
        {"account": "Interest", "cents": expected["Interest"]},
        {"account": "Salary", "cents": expected["Salary"]},
    ]
    assert body["expenses"] == [
        {"account": "Food", "cents": expected["Food"]},
        {"account": "Rent", "cents": expected["Rent"]},
    ]
    assert body["total_income_cents"] == 640000
    assert body["total_expenses_cents"] == 8450 + 150000 + 6000
    assert body["net_cents"] == 640000 - (8450 + 150000 + 6000)


def test_income_statement_without_window_is_all_time(api, ledger):
    body = api.get("/reports/income-statement").get_json()
    assert body["from"] is None and body["to"] is None
    assert body["total_income_cents"] == 640123
    assert body["net_cents"] == 640123 - 164450


def test_income_statement_refuses_to_before_from(api, ledger):
    response = api.get("/reports/income-statement?from=2026-02-01&to=2026-01-01")
    assert response.status_code == 400
    assert response.get_json() == {"error": "'to' must not be before 'from'"}


def test_balance_sheet_as_of_a_date(api, ledger):
    body = api.get("/reports/balance-sheet?as_of=2026-01-31").get_json()
    expected = shown(None, "2026-01-31")
    assert body["as_of"] == "2026-01-31"
    assert body["assets"] == [
        {"account": "Bank", "cents": expected["Bank"]},
        {"account": "Savings", "cents": 0},
    ]
    assert body["liabilities"] == [{"account": "Card", "cents": 8450}]
    assert body["equity"] == [{"account": "Opening", "cents": 500000}]
    retained = expected["Salary"] + expected["Interest"] - expected["Food"] - expected["Rent"]
    assert body["retained_cents"] == retained == 320000 - 8450 - 150000
    assert body["total_equity_cents"] == 500000 + retained
    assert body["total_assets_cents"] == expected["Bank"]
    assert (
        body["total_assets_cents"] == body["total_liabilities_cents"] + body["total_equity_cents"]
    )


def test_balance_sheet_identity_holds_on_every_day(api, ledger):
    for day in ["2025-12-30", "2025-12-31", "2026-01-10", "2026-02-14", "2026-03-01"]:
        body = api.get(f"/reports/balance-sheet?as_of={day}").get_json()
        assert (
            body["total_assets_cents"]
            == body["total_liabilities_cents"] + body["total_equity_cents"]
        )
        assert body["total_assets_cents"] == sum(shown(None, day)[a] for a in ("Bank", "Savings"))


def test_balance_sheet_defaults_to_today_and_is_never_a_window(api, ledger, post_tx, clock):
    # The fake clock says 2026-11-21; a future-dated posting is not in today's sheet.
    post_tx("2027-01-01", "future", (ledger["Food"], 1), (ledger["Bank"], -1))
    body = api.get("/reports/balance-sheet").get_json()
    assert body["as_of"] == "2026-11-21"
    assert body["total_assets_cents"] == shown()["Bank"]


@pytest.mark.parametrize(
    "path",
    [
        "/reports/balances?from=x",
        "/reports/income-statement?to=2026-02-31",
        "/reports/balance-sheet?as_of=31-01-2026",
    ],
)
def test_malformed_dates_are_refused(api, path):
    response = api.get(path)
    assert response.status_code == 400
    assert "YYYY-MM-DD" in response.get_json()["error"]


def test_empty_ledger_reports(api):
    assert api.get("/reports/balances").get_json() == []
    body = api.get("/reports/balance-sheet?as_of=2026-01-01").get_json()
    assert body["total_assets_cents"] == 0 and body["retained_cents"] == 0


def test_every_window_is_one_statement_with_the_same_text(api, ledger, sql_sent):
    """A report's sums are ONE statement built once per process: whatever the window
    (open, whole months, ragged edges, inverted), the same SQL text, only its bounds
    change; nothing is constructed or compiled per request (docs/performance.md,
    issue 39)."""
    for query in ("", "?from=2026-01-01&to=2026-02-28", "?from=2026-01-10&to=2026-02-14"):
        assert api.get("/reports/balances" + query).status_code == 200
    assert api.get("/reports/balance-sheet?as_of=2026-02-14").status_code == 200
    seen = sql_sent
    sums = [s for s in seen if "account_month_balances" in s]
    assert len(sums) == 4, seen
    assert len(set(sums)) == 1, sums
