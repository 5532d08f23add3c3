"""Budgets: plan against actual (docs/ledger.md, "Budgets"), over HTTP and MCP, on both
stores: the exact monthly split, budgets from actuals and copies, frozen approved
budgets, the `approved` choice, the income statement against a budget, every refusal
(a named field, nothing changed, never a 500), audit events and verify."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import AuditEvent, Budget, BudgetLine
from app.services.ledger import budgets

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


@pytest.fixture
def person(api, session_client):
    """The web app's caller: alice's full cookie session (the bearer `api` is alice too)."""
    return session_client(mfa_complete=True)


@pytest.fixture
def books(make_account):
    return {
        "bank": make_account("Bank", "asset"),
        "dues": make_account("Dues", "income"),
        "grants": make_account("Grants", "income"),
        "rent": make_account("Rent", "expense"),
        "food": make_account("Food", "expense"),
        "loan": make_account("Loan", "liability"),
    }


def create(api, name="Plan 2027", starts_on="2027-01-01", **extra):
    response = api.post("/budgets", json={"name": name, "starts_on": starts_on, **extra})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def put(api, budget_id, body, status=200):
    response = api.put(f"/budgets/{budget_id}", json=body)
    assert response.status_code == status, response.get_json()
    return response.get_json()


def approve(person, budget_id):
    response = person.post(f"/budgets/{budget_id}/approve")
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def stored(app):
    """Every budget row and line row, as stored."""
    with app.app_context():
        rows = [
            [tuple(r) for r in db.session.execute(select(t).order_by(*t.primary_key.columns))]
            for t in (Budget.__table__, BudgetLine.__table__)
        ]
        db.session.rollback()
        return rows


def event_count(app) -> int:
    with app.app_context():
        from app.services.ledger import audit

        audit.seal()
        n = db.session.execute(select(func.count()).select_from(AuditEvent)).scalar_one()
        db.session.rollback()
        return n


# --- the split rule (the service's one function, then over HTTP) ------------------------


@pytest.mark.parametrize(
    "annual, months",
    [
        (1200, [100] * 12),
        (1205, [101] * 5 + [100] * 7),
        (11, [1] * 11 + [0]),
        (0, [0] * 12),
        (-1, [0] * 11 + [-1]),  # divmod(-1, 12) == (-1, 11): eleven 0s, one -1
        (-1205, [-100] * 7 + [-101] * 5),  # divmod(-1205, 12) == (-101, 7)
        (-13, [-1] * 11 + [-2]),
        (INT64_MAX, [768614336404564651] * 7 + [768614336404564650] * 5),
        (INT64_MIN, [-768614336404564650] * 4 + [-768614336404564651] * 8),
    ],
)
def test_an_annual_figure_splits_exactly_with_floor_division(annual, months):
    split = budgets.split_annual(annual)
    assert split == months
    assert sum(split) == annual and len(split) == 12


def test_create_read_list_change_and_delete(api, books):
    empty = create(api, name="  Plan   2027 ", starts_on="2027-04-01")
    assert empty == {
        "id": empty["id"],
        "name": "Plan   2027",
        "starts_on": "2027-04-01",
        "ends_on": "2028-03-31",
        "approved_at": None,
        "approved_by_email": None,
        "lines": [],
    }
    months = [100, -200, 300, 0, 5, 6, 7, 8, 9, 10, 11, INT64_MIN]
    changed = put(
        api,
        empty["id"],
        {
            "lines": [
                {"account_id": books["rent"], "months": months},
                {"account_id": books["dues"], "annual_cents": 100_001},
                {"account_id": books["food"], "annual_cents": -25},
            ]
        },
    )
    # Ordered as GET /accounts orders accounts: kind, then name.
    assert changed["lines"] == [
        {"account_id": books["food"], "account_name": "Food", "months": [-2] * 11 + [-3]},
        {"account_id": books["rent"], "account_name": "Rent", "months": months},
        {
            "account_id": books["dues"],
            "account_name": "Dues",
            "months": [8334] * 5 + [8333] * 7,
        },
    ]
    assert sum(changed["lines"][2]["months"]) == 100_001
    assert api.get(f"/budgets/{empty['id']}").get_json() == changed
    renamed = put(api, empty["id"], {"name": "Plan A"})
    assert renamed["name"] == "Plan A" and renamed["lines"] == changed["lines"]  # kept
    cleared = put(api, empty["id"], {"lines": []})
    assert cleared["lines"] == [] and cleared["name"] == "Plan A"

    other = create(api, name="Plan 2026", starts_on="2026-01-01")
    third = create(api, name="Plan 2027 b", starts_on="2027-04-01")
    listed = api.get("/budgets").get_json()
    assert [b["id"] for b in listed] == [third["id"], empty["id"], other["id"]]
    assert all("lines" not in b for b in listed)
    assert listed[0] == {k: v for k, v in third.items() if k != "lines"}

    assert api.delete(f"/budgets/{other['id']}").status_code == 204
    assert api.get(f"/budgets/{other['id']}").status_code == 404
    assert [b["id"] for b in api.get("/budgets").get_json()] == [third["id"], empty["id"]]


def test_starts_on_in_any_month_ends_on_the_last_day_of_the_twelfth(api):
    assert create(api, "a", "2028-03-01")["ends_on"] == "2029-02-28"
    assert create(api, "b", "2027-03-01")["ends_on"] == "2028-02-29"
    assert create(api, "c", "2200-12-01")["ends_on"] == "2201-11-30"
    assert create(api, "d", "1900-01-01")["ends_on"] == "1900-12-31"


# --- from actuals, and copies ------------------------------------------------------------


def test_based_on_actuals_takes_last_years_sign_adjusted_months(api, books, post_tx):
    def tx(day, account, cents):
        assert post_tx(day, "t", (account, cents), (books["bank"], -cents)).status_code == 201

    tx("2026-04-01", books["rent"], 50_000)  # month 1 of the year before 2027-04-01
    tx("2026-04-30", books["rent"], 1)
    tx("2027-03-31", books["rent"], 70_000)  # month 12
    tx("2027-04-01", books["rent"], 999)  # inside the budget itself: not an actual
    tx("2026-03-31", books["rent"], 999)  # before the year
    tx("2026-06-15", books["dues"], -12_345)  # income: shown positive
    tx("2026-07-01", books["food"], 500)  # nets to 0 in the month: still a line
    tx("2026-07-20", books["food"], -500)
    tx("2026-05-05", books["loan"], 300)  # a liability: never a line
    posted = post_tx("2026-08-08", "gone", (books["grants"], -7), (books["bank"], 7))
    assert api.delete(f"/transactions/{posted.get_json()['id']}").status_code == 204

    budget = create(api, starts_on="2027-04-01", based_on="actuals")
    assert budget["lines"] == [
        {"account_id": books["food"], "account_name": "Food", "months": [0] * 12},
        {
            "account_id": books["rent"],
            "account_name": "Rent",
            "months": [50_001] + [0] * 10 + [70_000],
        },
        {
            "account_id": books["dues"],
            "account_name": "Dues",
            "months": [0, 0, 12_345] + [0] * 9,
        },
    ]  # Grants: its only entry was deleted, so no line; Loan and Bank: not income/expense


def test_based_on_a_budget_copies_its_lines_month_for_month(api, person, books):
    source = create(api, "Plan 2027")
    put(api, source["id"], {"lines": [{"account_id": books["rent"], "annual_cents": 1205}]})
    approve(person, source["id"])
    revision = create(api, "Plan 2027 revised", based_on=source["id"])
    assert revision["approved_at"] is None
    assert revision["lines"] == api.get(f"/budgets/{source['id']}").get_json()["lines"]
    later = create(api, "Plan 2028", starts_on="2028-01-01", based_on=revision["id"])
    assert later["lines"] == revision["lines"]


# --- approval: a person, once; then frozen ------------------------------------------------


def test_a_person_approves_then_the_budget_is_frozen(app, api, person, books):
    budget = create(api)
    put(api, budget["id"], {"lines": [{"account_id": books["rent"], "annual_cents": 120}]})
    approved = approve(person, budget["id"])
    assert approved["approved_at"] == "2026-11-21T12:00:00Z"
    assert approved["approved_by_email"] == "alice@example.com"
    before = stored(app)
    events = event_count(app)
    for response in (
        api.put(f"/budgets/{budget['id']}", json={"name": "Other"}),
        api.put(f"/budgets/{budget['id']}", json={"lines": []}),
        api.put(f"/budgets/{budget['id']}", json={}),
        person.post(f"/budgets/{budget['id']}/approve"),
        api.delete(f"/budgets/{budget['id']}"),
    ):
        assert response.status_code == 409, response.get_json()
        assert set(response.get_json()) == {"error"}
    assert "based_on" in api.delete(f"/budgets/{budget['id']}").get_json()["error"]
    assert stored(app) == before and event_count(app) == events
    assert api.get(f"/budgets/{budget['id']}").get_json() == approved


def test_a_bearer_token_cannot_approve(app, api, books):
    budget = create(api)
    response = api.post(f"/budgets/{budget['id']}/approve")
    assert response.status_code == 403 and set(response.get_json()) == {"error"}
    assert api.get(f"/budgets/{budget['id']}").get_json()["approved_at"] is None


def test_unknown_budgets_are_404(api, person):
    for response in (
        api.get("/budgets/999"),
        api.put("/budgets/999", json={"name": "x"}),
        api.delete("/budgets/999"),
        person.post("/budgets/999/approve"),
        api.get("/budgets/99999999999"),
        api.delete("/budgets/0"),
    ):
        assert response.status_code == 404, response.get_json()
        assert set(response.get_json()) == {"error"}


def test_budgets_need_a_full_credential(client):
    assert client.get("/budgets").status_code == 401
    assert client.post("/budgets", json={"name": "x", "starts_on": "2027-01-01"}).status_code == 401
    assert client.post("/budgets/1/approve").status_code == 401


# --- refusals: 400 naming the field, nothing changed -------------------------------------


@pytest.mark.parametrize(
    "body, words",
    [
        ({"starts_on": "2027-01-01"}, "name is required"),
        ({"name": "   ", "starts_on": "2027-01-01"}, "name is required"),
        ({"name": 5, "starts_on": "2027-01-01"}, "'name'"),
        ({"name": "Plan 2026"}, "starts_on is required"),
        ({"name": "x", "starts_on": "2027-01-02"}, "'starts_on' must be a first day (YYYY-MM-01"),
        ({"name": "x", "starts_on": "1899-12-01"}, "'starts_on'"),
        ({"name": "x", "starts_on": "2201-01-01"}, "'starts_on'"),
        ({"name": "x", "starts_on": "2027-13-01"}, "'starts_on'"),
        ({"name": "x", "starts_on": 20270101}, "'starts_on'"),
        ({"name": "x", "starts_on": "2027-01-01", "based_on": "actual"}, "'based_on'"),
        ({"name": "x", "starts_on": "2027-01-01", "based_on": 999}, "'based_on'"),
        ({"name": "x", "starts_on": "2027-01-01", "based_on": True}, "'based_on'"),
        ({"name": "x", "starts_on": "2027-01-01", "based_on": 1.5}, "'based_on'"),
        ({"name": "x", "starts_on": "2027-01-01", "based_on": 2**70}, "'based_on'"),
        ({"name": " plan   2026 ", "starts_on": "2027-01-01"}, "already exists"),
        ({"name": "PLAN 2026", "starts_on": "2027-01-01"}, "already exists"),
    ],
)
def test_create_refusals_name_the_field(app, api, books, body, words):
    create(api, "Plan 2026", "2026-01-01")
    before, events = stored(app), event_count(app)
    response = api.post("/budgets", json=body)
    assert response.status_code == 400, response.get_json()
    assert set(response.get_json()) == {"error"}
    assert words in response.get_json()["error"]
    assert stored(app) == before and event_count(app) == events


@pytest.mark.parametrize(
    "lines, words",
    [
        ("rent", "'lines' must be an array"),
        ({"account_id": 1}, "'lines' must be an array"),
        ([5], "'lines[0]' must be an object"),
        ([{"months": [0] * 12}], "'lines[0].account_id' is required"),
        ([{"account_id": "12", "annual_cents": 1}], "'lines[0].account_id' must be an integer"),
        ([{"account_id": 99999, "annual_cents": 1}], "'lines[0].account_id': no such account"),
        ([{"account_id": "BANK", "annual_cents": 1}], "an income or expense account only"),
        ([{"account_id": "LOAN", "annual_cents": 1}], "an income or expense account only"),
        (
            [{"account_id": "RENT", "annual_cents": 1}, {"account_id": "RENT", "annual_cents": 2}],
            "'lines[1].account_id': account",
        ),
        ([{"account_id": "RENT"}], "'lines[0]' must have either 'months' or 'annual_cents'"),
        (
            [{"account_id": "RENT", "annual_cents": 1, "months": [0] * 12}],
            "'lines[0]' must have either",
        ),
        ([{"account_id": "RENT", "months": [0] * 11}], "'lines[0].months' must be an array"),
        ([{"account_id": "RENT", "months": [0] * 13}], "'lines[0].months' must be an array"),
        ([{"account_id": "RENT", "months": "0" * 12}], "'lines[0].months' must be an array"),
        ([{"account_id": "RENT", "months": [0] * 11 + [1.5]}], "'lines[0].months[11]'"),
        ([{"account_id": "RENT", "months": [True] + [0] * 11}], "'lines[0].months[0]'"),
        ([{"account_id": "RENT", "months": ["1"] + [0] * 11}], "'lines[0].months[0]'"),
        ([{"account_id": "RENT", "months": [2**63] + [0] * 11}], "'lines[0].months[0]' is out"),
        ([{"account_id": "RENT", "annual_cents": -(2**63) - 1}], "'lines[0].annual_cents' is out"),
        ([{"account_id": "RENT", "annual_cents": "100"}], "'lines[0].annual_cents'"),
        ([{"account_id": "RENT", "annual_cents": None}], "'lines[0].annual_cents'"),
    ],
)
def test_line_refusals_name_the_field_and_change_nothing(app, api, books, lines, words):
    def resolve(value):
        if isinstance(value, list):
            return [resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: resolve(v) for k, v in value.items()}
        if value in ("RENT", "BANK", "LOAN"):
            return books[value.lower()]
        return value

    budget = create(api)
    put(api, budget["id"], {"lines": [{"account_id": books["food"], "annual_cents": 12}]})
    create(api, "Other")
    before, events = stored(app), event_count(app)
    response = api.put(
        f"/budgets/{budget['id']}", json={"name": "Renamed", "lines": resolve(lines)}
    )
    assert response.status_code == 400, response.get_json()
    assert set(response.get_json()) == {"error"}
    assert words in response.get_json()["error"]
    assert stored(app) == before and event_count(app) == events


def test_rename_to_a_taken_name_is_refused_and_to_itself_is_fine(app, api):
    first = create(api, "Club plan")
    create(api, "Other plan")
    before = stored(app)
    response = api.put(f"/budgets/{first['id']}", json={"name": " other  PLAN"})
    assert response.status_code == 400 and "already exists" in response.get_json()["error"]
    assert stored(app) == before
    assert put(api, first["id"], {"name": "club plan"})["name"] == "club plan"


@pytest.mark.parametrize(
    "body, status",
    [
        (None, 415),
        ("[]", 400),
        ("{", 400),
    ],
)
def test_bodies_that_are_not_json_objects(api, body, status):
    budget = create(api)
    if body is None:
        response = api.put(f"/budgets/{budget['id']}", data="x")
    else:
        response = api.put(
            f"/budgets/{budget['id']}", data=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == status


# --- the income statement against a budget ------------------------------------------------


@pytest.fixture
def planned(api, person, books, post_tx):
    """A 2027 budget (approved) and some 2027 actuals."""
    budget = create(api, "Plan 2027")
    put(
        api,
        budget["id"],
        {
            "lines": [
                {"account_id": books["dues"], "annual_cents": 120_000},  # 10,000 a month
                {"account_id": books["rent"], "months": [30_000] * 6 + [31_000] * 6},
                {"account_id": books["food"], "annual_cents": -13},  # odd, but a plan
            ]
        },
    )
    approve(person, budget["id"])
    for day, account, cents in (
        ("2027-01-15", books["dues"], -9_000),
        ("2027-02-15", books["dues"], -12_500),
        ("2027-01-01", books["rent"], 30_000),
        ("2027-02-01", books["rent"], 29_000),
        ("2027-03-01", books["rent"], 40_000),  # outside a Jan-Feb window
        ("2027-02-02", books["grants"], -1_000),
    ):
        assert post_tx(day, "t", (account, cents), (books["bank"], -cents)).status_code == 201
    return budget


def test_statement_against_a_budget_gains_budget_and_variance(api, planned):
    statement = api.get(
        "/reports/income-statement",
        query_string={"from": "2027-01-01", "to": "2027-02-28", "budget": str(planned["id"])},
    ).get_json()
    assert statement == {
        "from": "2027-01-01",
        "to": "2027-02-28",
        "income": [
            {"account": "Dues", "cents": 21_500, "budget_cents": 20_000, "variance_cents": 1_500},
            {"account": "Grants", "cents": 1_000, "budget_cents": 0, "variance_cents": 1_000},
        ],
        "total_income_cents": 22_500,
        "expenses": [
            {"account": "Food", "cents": 0, "budget_cents": -2, "variance_cents": -2},
            {"account": "Rent", "cents": 59_000, "budget_cents": 60_000, "variance_cents": 1_000},
        ],
        "total_expenses_cents": 59_000,
        "net_cents": -36_500,
        "budget": {"id": planned["id"], "name": "Plan 2027"},
        "total_income_budget_cents": 20_000,
        "total_expenses_budget_cents": 59_998,
        "net_budget_cents": -39_998,
    }
    whole = api.get(
        "/reports/income-statement",
        query_string={"from": "2027-01-01", "to": "2027-12-31", "budget": "approved"},
    ).get_json()
    assert whole["total_income_budget_cents"] == 120_000
    assert whole["total_expenses_budget_cents"] == 366_000 - 13
    assert whole["expenses"][1]["variance_cents"] == 366_000 - 99_000


def test_without_budget_the_statement_is_unchanged(api, planned):
    plain = api.get("/reports/income-statement?from=2027-01-01&to=2027-02-28")
    empty = api.get("/reports/income-statement?from=2027-01-01&to=2027-02-28&budget=")
    assert plain.data == empty.data
    assert set(plain.get_json()) == {
        "from",
        "to",
        "income",
        "total_income_cents",
        "expenses",
        "total_expenses_cents",
        "net_cents",
    }
    assert all(set(line) == {"account", "cents"} for line in plain.get_json()["income"])
    # A window that a budget could not take is fine without one.
    assert api.get("/reports/income-statement?from=2027-01-05&to=2027-02-03").status_code == 200
    assert api.get("/reports/income-statement").status_code == 200


def test_approved_picks_the_latest_approval_then_the_highest_id(app, api, person, clock, books):
    def plan(name, starts_on, cents):
        budget = create(api, name, starts_on)
        put(api, budget["id"], {"lines": [{"account_id": books["rent"], "annual_cents": cents}]})
        return budget["id"]

    def chosen(start, end):
        response = api.get(
            "/reports/income-statement",
            query_string={"from": start, "to": end, "budget": "approved"},
        )
        assert response.status_code == 200, response.get_json()
        return response.get_json()["budget"]["id"]

    older = plan("Older", "2027-01-01", 1200)
    approve(person, older)
    clock.advance(60)
    later = plan("Later", "2026-07-01", 2400)  # covers 2026-07 .. 2027-06
    approve(person, later)
    plan("Draft", "2027-01-01", 3600)  # drafts are never chosen
    assert chosen("2027-01-01", "2027-06-30") == later
    assert chosen("2027-07-01", "2027-07-31") == older  # later does not cover July
    assert chosen("2026-12-01", "2027-01-31") == later  # older does not cover December
    clock.advance(60)
    same_a = plan("Same a", "2027-01-01", 1)
    same_b = plan("Same b", "2027-01-01", 2)
    approve(person, same_b)  # same second as same_a below: the higher id wins
    approve(person, same_a)
    assert chosen("2027-01-01", "2027-03-31") == same_b
    nothing = api.get(
        "/reports/income-statement",
        query_string={"from": "2026-06-01", "to": "2026-07-31", "budget": "approved"},
    )
    assert nothing.status_code == 400 and "'budget'" in nothing.get_json()["error"]


@pytest.mark.parametrize(
    "query, words",
    [
        ({"to": "2027-01-31"}, "'from' is required"),
        ({"from": "2027-01-01"}, "'to' is required"),
        ({"from": "2027-01-02", "to": "2027-01-31"}, "'from' must be a first day"),
        ({"from": "2027-01-01", "to": "2027-01-30"}, "'to' must be a last day"),
        ({"from": "2027-02-01", "to": "2027-01-31"}, "'to' must not be before 'from'"),
        ({"from": "2026-12-01", "to": "2027-01-31"}, "'from' must lie inside"),
        ({"from": "2027-12-01", "to": "2028-01-31"}, "'to' must lie inside"),
        ({"from": "2027-13-01", "to": "2028-01-31"}, "'from' must be a date"),
        ({"from": "2027-01-01", "to": "2027-01-31", "budget": "999"}, "'budget': no such"),
        ({"from": "2027-01-01", "to": "2027-01-31", "budget": "Plan 2027"}, "'budget' must be"),
        ({"from": "2027-01-01", "to": "2027-01-31", "budget": "-1"}, "'budget' must be"),
        ({"from": "2027-01-01", "to": "2027-01-31", "budget": "1.0"}, "'budget' must be"),
        ({"from": "2027-01-01", "to": "2027-01-31", "budget": "APPROVED"}, "'budget' must be"),
        ({"from": "2027-01-01", "to": "2027-01-31", "budget": "9" * 19}, "'budget': no such"),
        ({"from": "2028-01-01", "to": "2028-01-31", "budget": "approved"}, "'budget': no approved"),
    ],
)
def test_statement_refusals_are_400_over_http_and_32602_over_mcp(api, rpc, planned, query, words):
    query = {"budget": str(planned["id"]), **query}
    response = api.get("/reports/income-statement", query_string=query)
    assert response.status_code == 400, response.get_json()
    assert set(response.get_json()) == {"error"} and words in response.get_json()["error"]
    reply = rpc.call("income_statement", query)
    assert reply["error"]["code"] == -32602, reply
    assert reply["error"]["message"] == response.get_json()["error"]


def test_mcp_gives_the_same_figures_and_takes_an_integer_id(api, rpc, planned):
    for budget in (str(planned["id"]), planned["id"], "approved"):
        args = {"from": "2027-01-01", "to": "2027-03-31", "budget": budget}
        http = api.get(
            "/reports/income-statement", query_string={**args, "budget": str(budget)}
        ).get_json()
        reply = rpc.call("income_statement", args)
        assert reply["result"]["structuredContent"] == http
        assert http["budget"]["id"] == planned["id"]
    plain = rpc.call("income_statement", {"from": "2027-01-01", "to": "2027-03-31"})
    assert "budget" not in plain["result"]["structuredContent"]
    for bad in (True, 1.5, [1], {"id": 1}):
        reply = rpc.call(
            "income_statement", {"from": "2027-01-01", "to": "2027-01-31", "budget": bad}
        )
        assert reply["error"]["code"] == -32602 and "'budget'" in reply["error"]["message"]


def test_the_tool_tells_an_assistant_how_to_ask(rpc):
    tools = {t["name"]: t for t in rpc.request("tools/list")["result"]["tools"]}
    assert len(tools) == 6
    tool = tools["income_statement"]
    assert "budget" in tool["inputSchema"]["properties"]
    assert tool["inputSchema"]["required"] == ["from", "to"]
    assert '"approved"' in tool["description"] and "variance_cents" in tool["description"]


# --- the audit trail and verify -------------------------------------------------------


def test_every_change_is_an_audit_event_and_verify_replays_them(app, api, person, runner, books):
    budget = create(api)
    put(api, budget["id"], {"lines": [{"account_id": books["rent"], "annual_cents": 12}]})
    approve(person, budget["id"])
    doomed = create(api, "Doomed", based_on=budget["id"])
    assert api.delete(f"/budgets/{doomed['id']}").status_code == 204
    # Renaming an account reorders lines; verify still agrees.
    assert api.put(f"/accounts/{books['rent']}", json={"name": "AAA rent"}).status_code == 200

    items = api.get("/audit?limit=500").get_json()["items"]
    budget_events = [i for i in items if i["action"].startswith("budget.")]
    assert [(i["action"], i["via"]) for i in budget_events] == [
        ("budget.deleted", "api"),
        ("budget.created", "api"),
        ("budget.approved", "web"),
        ("budget.changed", "api"),
        ("budget.created", "api"),
    ] or [(i["action"], i["via"]) for i in reversed(budget_events)] == [
        ("budget.created", "api"),
        ("budget.changed", "api"),
        ("budget.approved", "web"),
        ("budget.created", "api"),
        ("budget.deleted", "api"),
    ]
    approved = next(i for i in budget_events if i["action"] == "budget.approved")
    assert approved["object"]["budget"]["approved_by_email"] == "alice@example.com"
    assert approved["object"]["budget"]["lines"] == [
        {"account_id": books["rent"], "months": [1] * 12}
    ]
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 0, result.output
    assert ", 1 budgets," in result.output  # exactly one: not "11 budgets"

    with app.app_context():  # a change outside the service: verify names the budget
        db.session.execute(
            BudgetLine.__table__.update()
            .where(BudgetLine.budget_id == budget["id"])
            .values(m03=999)
        )
        from app import store

        store.commit()
    result = runner.invoke(args=["verify"])
    assert result.exit_code != 0
    assert f"budget {budget['id']}: lines" in result.output


def test_an_archived_account_keeps_its_line_and_a_renamed_one_shows_its_new_name(
    api, runner, books
):
    budget = create(api)
    put(
        api,
        budget["id"],
        {
            "lines": [
                {"account_id": books["rent"], "annual_cents": 12},
                {"account_id": books["food"], "annual_cents": 24},
            ]
        },
    )
    assert api.put(f"/accounts/{books['rent']}", json={"name": "Hall rent"}).status_code == 200
    archived = api.put(f"/accounts/{books['food']}", json={"archived": True})
    assert archived.status_code == 200 and archived.get_json()["archived"] is True
    lines = api.get(f"/budgets/{budget['id']}").get_json()["lines"]
    assert lines == [
        {"account_id": books["food"], "account_name": "Food", "months": [2] * 12},
        {"account_id": books["rent"], "account_name": "Hall rent", "months": [1] * 12},
    ]
    result = runner.invoke(args=["verify"])  # the archived account's line is still replayed
    assert result.exit_code == 0 and ", 1 budgets," in result.output, result.output
