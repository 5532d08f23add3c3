"""GET /schedules/preview (docs/schedules.md, "Before saving: the next five dates"): the
first five dates a rule gives, counted from `starts_on` (default today, the injectable
clock's 2026-11-21) with the weekend rule, computed and checked by the schedules' own
rule code; refusals name the field; nothing is stored. Both stores."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import Schedule


def preview(api, **query) -> list[tuple[str, str]]:
    response = api.get("/schedules/preview", query_string=query)
    assert response.status_code == 200, response.get_json()
    return [(d["occurs_on"], d["due_on"]) for d in response.get_json()["dates"]]


def test_the_first_five_dates_of_a_monthly_rule_from_starts_on(api):
    assert preview(api, rrule="FREQ=MONTHLY;BYMONTHDAY=1", starts_on="2026-01-15") == [
        ("2026-02-01", "2026-02-01"),
        ("2026-03-01", "2026-03-01"),
        ("2026-04-01", "2026-04-01"),
        ("2026-05-01", "2026-05-01"),
        ("2026-06-01", "2026-06-01"),
    ]


def test_without_starts_on_the_rule_counts_from_today(api):
    # Today is 2026-11-21 (a Saturday): the next 31 Januarys, counted from today.
    assert [d for d, _ in preview(api, rrule="FREQ=YEARLY;BYMONTH=1;BYMONTHDAY=31")] == [
        "2027-01-31",
        "2028-01-31",
        "2029-01-31",
        "2030-01-31",
        "2031-01-31",
    ]
    # An empty starts_on (an HTML form's empty field) is none: today.
    assert preview(api, rrule="FREQ=MONTHLY;BYMONTHDAY=1", starts_on="")[0][0] == "2026-12-01"
    assert preview(api, rrule="FREQ=DAILY")[0][0] == "2026-11-21"


def test_two_weeks_on_monday_counts_weeks_from_starts_on(api):
    # As a schedule's rule: the weeks of starts_on's week (2026-01-01, a Thursday), so
    # 2026-01-05 is in an off week (docs/schedules.md, "The rule").
    assert [
        d for d, _ in preview(api, rrule="FREQ=WEEKLY;INTERVAL=2;BYDAY=MO", starts_on="2026-01-01")
    ] == [
        "2026-01-12",
        "2026-01-26",
        "2026-02-09",
        "2026-02-23",
        "2026-03-09",
    ]


@pytest.mark.parametrize(
    "weekend, due",
    [("none", "2026-01-31"), ("before", "2026-01-30"), ("after", "2026-02-02")],
)
def test_the_weekend_rule_moves_due_on(api, weekend, due):
    # 2026-01-31 is a Saturday; the last Friday rule never moves.
    dates = preview(
        api, rrule="FREQ=MONTHLY;BYMONTHDAY=-1", starts_on="2026-01-01", weekend=weekend
    )
    assert dates[0] == ("2026-01-31", due)
    assert dates[1] == (
        "2026-02-28",
        {"none": "2026-02-28", "before": "2026-02-27", "after": "2026-03-02"}[weekend],
    )


def test_a_rule_that_ends_gives_fewer(api):
    assert [
        d
        for d, _ in preview(api, rrule="FREQ=MONTHLY;BYMONTHDAY=31;COUNT=3", starts_on="2026-01-01")
    ] == [
        "2026-01-31",
        "2026-03-31",
        "2026-05-31",
    ]
    assert preview(api, rrule="FREQ=MONTHLY;UNTIL=20251231", starts_on="2026-01-01") == []


@pytest.mark.parametrize(
    "query, field",
    [
        ({}, "rrule"),
        ({"rrule": ""}, "rrule"),
        ({"rrule": "  "}, "rrule"),
        ({"rrule": "FREQ=HOURLY"}, "rrule"),
        ({"rrule": "FREQ=MONTHLY;BYMONTHDAY=32"}, "rrule"),
        ({"rrule": "FREQ=MONTHLY;FREQ=MONTHLY"}, "rrule"),
        ({"rrule": "DTSTART=20260101;FREQ=MONTHLY"}, "rrule"),
        ({"rrule": "FREQ=WEEKLY;BYDAY=-1FR"}, "rrule"),
        ({"rrule": "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30"}, "rrule"),  # gives no date
        ({"rrule": "FREQ=MONTHLY;" + "BYMONTHDAY=1," * 50}, "rrule"),
        ({"rrule": "FREQ=MONTHLY", "starts_on": "2026-02-30"}, "starts_on"),
        ({"rrule": "FREQ=MONTHLY", "starts_on": "1899-12-31"}, "starts_on"),
        ({"rrule": "FREQ=MONTHLY", "weekend": "sunday"}, "weekend"),
        ({"rrule": "FREQ=MONTHLY", "weekend": ""}, "weekend"),
    ],
)
def test_refusals_name_the_field_and_store_nothing(app, api, query, field):
    response = api.get("/schedules/preview", query_string=query)
    assert response.status_code == 400
    assert f"'{field}'" in response.get_json()["error"]
    with app.app_context():
        assert db.session.execute(select(func.count()).select_from(Schedule)).scalar() == 0


def test_preview_is_not_taken_for_a_schedule_id(api, club_books):
    # /schedules/{id} takes integers only: "preview" is never read as an id (404 there).
    made = api.post(
        "/schedules",
        json={
            "name": "Dues",
            "account_id": club_books["bank"],
            "counter_account_id": club_books["dues"],
            "amount_cents": 5000,
            "rrule": "FREQ=MONTHLY;BYMONTHDAY=1",
            "starts_on": "2026-01-01",
        },
    )
    assert made.status_code == 201, made.get_json()
    assert "dates" in api.get("/schedules/preview?rrule=FREQ%3DDAILY").get_json()
    assert api.put("/schedules/preview", json={"name": "x"}).status_code in (404, 405)
    assert api.get(f"/schedules/{made.get_json()['id']}").status_code == 200
