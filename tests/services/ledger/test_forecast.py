"""GET /reports/forecast (docs/schedules.md, "The forecast") as worked examples on both
stores: the balance today, the open occurrences of the account's active schedules (an
overdue or due one counted today), their order, the signs of an asset and of a liability
account, the running balances, the lowest point (the earliest on a tie) and every
refusal. The test clock's today is Saturday 2026-11-21; the expected figures are written
out by hand."""

from __future__ import annotations

import pytest


@pytest.fixture
def books(club_books, make_account):
    return {
        **club_books,  # tests/services/ledger/conftest.py: bank, dues, rent
        "opening": make_account("Opening", "equity"),
        "savings": make_account("Savings", "asset"),
        "card": make_account("Card", "liability"),
        "food": make_account("Food", "expense"),
    }


def create(api, books, name, rrule, **extra) -> int:
    body = {
        "name": name,
        "account_id": books["bank"],
        "counter_account_id": books["dues"],
        "amount_cents": 2500,
        "rrule": rrule,
        "starts_on": "2026-09-01",
        **extra,
    }
    response = api.post("/schedules", json=body)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def forecast(api, query: str) -> dict:
    response = api.get("/reports/forecast" + query)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def rows(body) -> list[tuple]:
    return [
        (i["due_on"], i["name"], i["occurs_on"], i["amount_cents"], i["balance_cents"])
        for i in body["items"]
    ]


def test_a_bank_account_over_its_schedules(api, books, post_tx):
    b = books
    assert (
        post_tx("2026-11-01", "opening", (b["bank"], 100000), (b["opening"], -100000)).status_code
        == 201
    )
    anna = create(api, b, "Dues Anna", "FREQ=MONTHLY;BYMONTHDAY=1")
    bert = create(api, b, "Dues Bert", "FREQ=MONTHLY;BYMONTHDAY=15", starts_on="2026-11-01")
    # 2026-11-22 is a Sunday: due Monday 2026-11-23.
    create(
        api,
        b,
        "Rent",
        "FREQ=MONTHLY;BYMONTHDAY=22",
        starts_on="2026-11-01",
        weekend="after",
        counter_account_id=b["rent"],
        amount_cents=-90000,
    )
    # Overdue since October, created after the others: counted today after them.
    late = create(
        api,
        b,
        "Late fee",
        "FREQ=MONTHLY;BYMONTHDAY=5;COUNT=1",
        starts_on="2026-10-01",
        amount_cents=1000,
    )
    # Anna paid September: it is met, not forecast; the payment is in today's balance.
    paid = post_tx("2026-09-03", "Anna", (b["bank"], 2500), (b["dues"], -2500))
    assert paid.status_code == 201
    # Bert's December is skipped: not forecast.
    skipped = api.post(f"/schedules/{bert}/occurrences/2026-12-15", json={"action": "skip"})
    assert skipped.status_code == 200
    # Not on the bank: an inactive schedule, one whose counter account is the bank, one
    # on another account.
    create(api, b, "Old dues", "FREQ=MONTHLY;BYMONTHDAY=2", active=False)
    create(
        api,
        b,
        "Sweep",
        "FREQ=MONTHLY;BYMONTHDAY=3",
        account_id=b["savings"],
        counter_account_id=b["bank"],
    )
    create(api, b, "Savings dues", "FREQ=MONTHLY;BYMONTHDAY=4", account_id=b["savings"])
    # After today: not in today's balance.
    assert post_tx("2026-11-25", "later", (b["bank"], -5000), (b["food"], 5000)).status_code == 201

    body = forecast(api, f"?account_id={b['bank']}")
    assert body["account_id"] == b["bank"]
    assert (body["from"], body["to"]) == ("2026-11-21", "2027-02-19")  # 90 days
    assert body["balance_cents"] == 102500
    assert rows(body) == [
        # Overdue and due ones counted today, by schedule, then occurs_on.
        ("2026-10-01", "Dues Anna", "2026-10-01", 2500, 105000),
        ("2026-11-01", "Dues Anna", "2026-11-01", 2500, 107500),
        ("2026-11-15", "Dues Bert", "2026-11-15", 2500, 110000),
        ("2026-10-05", "Late fee", "2026-10-05", 1000, 111000),
        ("2026-11-23", "Rent", "2026-11-22", -90000, 21000),
        ("2026-12-01", "Dues Anna", "2026-12-01", 2500, 23500),
        ("2026-12-22", "Rent", "2026-12-22", -90000, -66500),
        ("2027-01-01", "Dues Anna", "2027-01-01", 2500, -64000),
        ("2027-01-15", "Dues Bert", "2027-01-15", 2500, -61500),
        ("2027-01-22", "Rent", "2027-01-22", -90000, -151500),
        ("2027-02-01", "Dues Anna", "2027-02-01", 2500, -149000),
        ("2027-02-15", "Dues Bert", "2027-02-15", 2500, -146500),
    ]
    assert [i["schedule_id"] for i in body["items"][:4]] == [anna, anna, bert, late]
    assert body["end_balance_cents"] == -146500
    assert body["lowest"] == {"on": "2027-01-22", "balance_cents": -151500}

    shorter = forecast(api, f"?account_id={b['bank']}&to=2026-12-22")
    assert shorter["to"] == "2026-12-22"
    assert rows(shorter)[-1] == ("2026-12-22", "Rent", "2026-12-22", -90000, -66500)
    assert shorter["lowest"] == {"on": "2026-12-22", "balance_cents": -66500}
    # An empty `to` is none: the default.
    assert forecast(api, f"?account_id={b['bank']}&to=")["to"] == "2027-02-19"


def test_a_liability_account_is_signed_as_the_balance_sheet_signs_it(api, books, post_tx):
    b = books
    assert (
        post_tx("2026-11-10", "groceries", (b["food"], 3000), (b["card"], -3000)).status_code == 201
    )
    # Paying the card: the entry on the card is positive, its balance goes down.
    create(
        api,
        b,
        "Pay card",
        "FREQ=MONTHLY;BYMONTHDAY=25",
        starts_on="2026-11-01",
        account_id=b["card"],
        counter_account_id=b["bank"],
        amount_cents=3000,
    )
    # A subscription on the card: the entry on the card is negative, the balance grows.
    create(
        api,
        b,
        "Music",
        "FREQ=MONTHLY;BYMONTHDAY=5",
        starts_on="2026-12-01",
        account_id=b["card"],
        counter_account_id=b["food"],
        amount_cents=-1500,
    )
    body = forecast(api, f"?account_id={b['card']}&to=2026-12-31")
    sheet = api.get("/reports/balance-sheet").get_json()
    assert sheet["liabilities"] == [{"account": "Card", "cents": 3000}]
    assert body["balance_cents"] == 3000
    assert rows(body) == [
        ("2026-11-25", "Pay card", "2026-11-25", -3000, 0),
        ("2026-12-05", "Music", "2026-12-05", 1500, 1500),
        ("2026-12-25", "Pay card", "2026-12-25", -3000, -1500),
    ]
    assert body["end_balance_cents"] == -1500
    assert body["lowest"] == {"on": "2026-12-25", "balance_cents": -1500}


def test_the_lowest_point_is_the_earliest_on_a_tie(api, books):
    b = books
    # Balance 0 today. Out 100 on the 1st, in 100 on the 10th, out 100 on the 20th: the
    # running balance is -100 on 2026-12-01 and again on 2026-12-20.
    create(
        api,
        b,
        "Out first",
        "FREQ=MONTHLY;BYMONTHDAY=1",
        starts_on="2026-12-01",
        amount_cents=-100,
        counter_account_id=b["rent"],
    )
    create(api, b, "In", "FREQ=MONTHLY;BYMONTHDAY=10", starts_on="2026-12-01", amount_cents=100)
    create(
        api,
        b,
        "Out again",
        "FREQ=MONTHLY;BYMONTHDAY=20",
        starts_on="2026-12-01",
        amount_cents=-100,
        counter_account_id=b["rent"],
    )
    body = forecast(api, f"?account_id={b['bank']}&to=2026-12-31")
    assert [i["balance_cents"] for i in body["items"]] == [-100, 0, -100]
    assert body["lowest"] == {"on": "2026-12-01", "balance_cents": -100}
    rising = forecast(api, f"?account_id={b['bank']}&to=2026-12-10")
    assert rising["lowest"] == {"on": "2026-12-01", "balance_cents": -100}
    none = forecast(api, f"?account_id={b['savings']}")
    assert none["items"] == []
    assert none["end_balance_cents"] == 0
    assert none["lowest"] == {"on": "2026-11-21", "balance_cents": 0}


def test_a_return_to_todays_balance_keeps_today_as_the_lowest(api, books):
    b = books
    create(api, b, "In", "FREQ=MONTHLY;BYMONTHDAY=1", starts_on="2026-12-01", amount_cents=100)
    create(
        api,
        b,
        "Out",
        "FREQ=MONTHLY;BYMONTHDAY=2",
        starts_on="2026-12-01",
        amount_cents=-100,
        counter_account_id=b["rent"],
    )
    body = forecast(api, f"?account_id={b['bank']}&to=2026-12-31")
    assert [i["balance_cents"] for i in body["items"]] == [100, 0]
    assert body["lowest"] == {"on": "2026-11-21", "balance_cents": 0}


def test_to_at_most_1830_days_after_today(api, books):
    create(api, books, "Yearly", "FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=1")
    body = forecast(api, f"?account_id={books['bank']}&to=2031-11-25")  # 1,830 days
    assert body["to"] == "2031-11-25"
    assert len(body["items"]) == 5
    assert forecast(api, f"?account_id={books['bank']}&to=2026-11-21")["items"] == []


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("", "account_id"),
        ("?account_id=", "account_id"),
        ("?account_id=abc", "account_id"),
        ("?account_id=999999", "account_id"),
        ("?account_id=99999999999999999999", "account_id"),
        ("?account_id={dues}", "account_id"),  # income
        ("?account_id={rent}", "account_id"),  # expense
        ("?account_id={opening}", "account_id"),  # equity
        ("?account_id={bank}&to=2031-11-26", "to"),  # 1,831 days
        ("?account_id={bank}&to=2026-11-20", "to"),  # before today
        ("?account_id={bank}&to=2026-13-01", "to"),
        ("?account_id={bank}&to=soon", "to"),
    ],
)
def test_refusals(api, books, query, named):
    response = api.get("/reports/forecast" + query.format(**books))
    assert response.status_code == 400, response.get_json()
    body = response.get_json()
    assert set(body) == {"error"}
    assert named in body["error"]
