"""Schedules (docs/schedules.md): create, read, list, change and delete over HTTP on both
stores, every field's refusal (400 naming the field, nothing stored), 404s, the audit
events, and next_due_on. The test clock's today is Saturday 2026-11-21."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Schedule
from tests.testkit import events


@pytest.fixture
def books(make_account):
    return {
        "bank": make_account("Bank", "asset"),
        "card": make_account("Card", "liability"),
        "dues": make_account("Dues", "income"),
        "rent": make_account("Rent", "expense"),
    }


def dues(books, **extra) -> dict:
    return {
        "name": "Dues Anna",
        "account_id": books["bank"],
        "counter_account_id": books["dues"],
        "amount_cents": 2500,
        "rrule": "FREQ=MONTHLY;BYMONTHDAY=1",
        "starts_on": "2026-01-01",
        **extra,
    }


def create(api, body, status=201):
    response = api.post("/schedules", json=body)
    assert response.status_code == status, response.get_json()
    return response.get_json()


def stored(app) -> list[tuple]:
    with app.app_context():
        rows = [tuple(r) for r in db.session.execute(select(Schedule.__table__))]
        db.session.rollback()
        return rows


def test_create_with_defaults_read_list(api, books):
    made = create(api, dues(books, name="  Dues   Anna "))
    assert made == {
        "id": made["id"],
        "name": "Dues   Anna",
        "account_id": books["bank"],
        "counter_account_id": books["dues"],
        "amount_cents": 2500,
        "rrule": "FREQ=MONTHLY;BYMONTHDAY=1",
        "starts_on": "2026-01-01",
        "weekend": "none",
        "match_text": None,
        "tolerance_cents": 0,
        "window_days": 10,
        "mode": "expect",
        "post_from": None,
        "active": True,
        "created_at": "2026-11-21T12:00:00Z",
        "next_due_on": "2026-12-01",
    }
    assert api.get(f"/schedules/{made['id']}").get_json() == made
    rent = create(
        api,
        dues(books, name="Rent", counter_account_id=books["rent"], amount_cents=-90000),
    )
    # By name: "Dues   Anna" before "Rent".
    assert [s["id"] for s in api.get("/schedules").get_json()] == [made["id"], rent["id"]]


def test_next_due_on_follows_the_weekend_rule(api, books):
    # 2027-08-01 is a Sunday: due Friday 2027-07-30 before, Monday 2027-08-02 after.
    rule = {"rrule": "FREQ=YEARLY;BYMONTH=8;BYMONTHDAY=1", "starts_on": "2027-01-01"}
    assert create(api, dues(books, name="a", weekend="before", **rule))["next_due_on"] == (
        "2027-07-30"
    )
    assert create(api, dues(books, name="b", weekend="after", **rule))["next_due_on"] == (
        "2027-08-02"
    )
    assert create(api, dues(books, name="c", **rule))["next_due_on"] == "2027-08-01"


def test_next_due_on_is_null_when_inactive_or_ended(api, books):
    assert create(api, dues(books, name="a", active=False))["next_due_on"] is None
    ended = dues(books, name="b", rrule="FREQ=MONTHLY;BYMONTHDAY=1;UNTIL=20261101")
    assert create(api, ended)["next_due_on"] is None
    # Today (2026-11-21) is a due date itself: it counts.
    today = dues(books, name="c", rrule="FREQ=MONTHLY;BYMONTHDAY=21")
    assert create(api, today)["next_due_on"] == "2026-11-21"


def test_mode_post_takes_post_from_default_today(api, books, clock):
    made = create(api, dues(books, mode="post", starts_on="2027-01-01"))
    assert made["post_from"] == "2026-11-21"
    given = create(
        api, dues(books, name="b", mode="post", post_from="2027-02-01", starts_on="2027-01-01")
    )
    assert given["post_from"] == "2027-02-01"
    clock.advance(days=3)
    # Back to expect: cleared; turned to post again: the day it was turned.
    back = api.put(f"/schedules/{made['id']}", json={"mode": "expect"}).get_json()
    assert back["post_from"] is None
    again = api.put(f"/schedules/{made['id']}", json={"mode": "post"}).get_json()
    assert again["post_from"] == "2026-11-24"
    # A change that leaves mode alone keeps post_from.
    kept = api.put(f"/schedules/{made['id']}", json={"amount_cents": 3000}).get_json()
    assert kept["post_from"] == "2026-11-24"


def test_put_keeps_what_is_left_out_and_delete(api, books):
    made = create(api, dues(books, match_text="Anna", tolerance_cents=100, window_days=5))
    response = api.put(f"/schedules/{made['id']}", json={"name": "Dues A.", "active": False})
    assert response.status_code == 200, response.get_json()
    changed = response.get_json()
    assert changed == {**made, "name": "Dues A.", "active": False, "next_due_on": None}
    assert api.delete(f"/schedules/{made['id']}").status_code == 204
    assert api.get(f"/schedules/{made['id']}").status_code == 404
    assert api.get("/schedules").get_json() == []


def test_audit_events(api, books, runner):
    made = create(api, dues(books))
    api.put(f"/schedules/{made['id']}", json={"amount_cents": 3000})
    api.delete(f"/schedules/{made['id']}")
    trail = [
        (e["action"], e["object"])
        for e in events(api, oldest_first=True)
        if e["action"].startswith("schedule.")
    ]
    fields = {k: v for k, v in made.items() if k not in ("created_at", "next_due_on")}
    assert trail == [
        ("schedule.created", {"schedule": fields}),
        ("schedule.changed", {"schedule": {**fields, "amount_cents": 3000}}),
        ("schedule.deleted", {"schedule": {**fields, "amount_cents": 3000}}),
    ]
    result = runner.invoke(args=["verify"])  # reads them (not yet replayed)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "change, field",
    [
        ({"name": "  "}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"account_id": None}, "account_id"),
        ({"account_id": "1"}, "account_id"),
        ({"account_id": 999999}, "account_id"),
        ({"account_id": "dues", "counter_account_id": "rent"}, "account_id"),  # income
        ({"counter_account_id": 999999}, "counter_account_id"),
        ({"counter_account_id": "bank"}, "counter_account_id"),  # the same as account_id
        ({"amount_cents": 0}, "amount_cents"),
        ({"amount_cents": 2**63}, "amount_cents"),
        ({"amount_cents": 1.5}, "amount_cents"),
        ({"rrule": "FREQ=HOURLY"}, "rrule"),
        ({"rrule": 5}, "rrule"),
        ({"rrule": "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30"}, "rrule"),  # gives no date
        ({"starts_on": "1899-12-31"}, "starts_on"),
        ({"starts_on": "2026-02-30"}, "starts_on"),
        ({"weekend": "sunday"}, "weekend"),
        ({"match_text": "x" * 201}, "match_text"),
        ({"match_text": 3}, "match_text"),
        ({"tolerance_cents": -1}, "tolerance_cents"),
        ({"window_days": 367}, "window_days"),
        ({"window_days": -1}, "window_days"),
        ({"mode": "auto"}, "mode"),
        ({"post_from": "2027-01-01"}, "post_from"),  # mode expect takes none
        ({"mode": "post", "post_from": "2027-13-01"}, "post_from"),
        ({"active": "yes"}, "active"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_each_field_refused_names_it_and_stores_nothing(app, api, books, change, field):
    change = {
        k: books.get(v, v) if isinstance(v, str) and k.endswith("_id") else v
        for k, v in change.items()
    }
    before = stored(app)
    response = api.post("/schedules", json=dues(books, **change))
    assert response.status_code == 400, response.get_json()
    # The message opens with the field's name (quoted, or bare as in "name is required").
    assert re.match(f"'?{field}'?[ :]", response.get_json()["error"]), response.get_json()
    assert stored(app) == before


def test_an_archived_account_is_refused(api, books):
    assert api.put(f"/accounts/{books['dues']}", json={"archived": True}).status_code == 200
    response = api.post("/schedules", json=dues(books))
    assert response.status_code == 400
    assert "counter_account_id" in response.get_json()["error"]


def test_a_schedule_whose_account_was_archived_can_still_be_turned_off(api, books):
    made = create(api, dues(books))
    assert api.put(f"/accounts/{books['dues']}", json={"archived": True}).status_code == 200
    response = api.put(f"/schedules/{made['id']}", json={"active": False})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["active"] is False
    # Given again (or another archived one), it is refused as at creation.
    response = api.put(f"/schedules/{made['id']}", json={"counter_account_id": books["dues"]})
    assert response.status_code == 200  # the same value: kept
    assert api.put(f"/accounts/{books['rent']}", json={"archived": True}).status_code == 200
    response = api.put(f"/schedules/{made['id']}", json={"counter_account_id": books["rent"]})
    assert response.status_code == 400
    assert response.get_json()["error"].startswith("'counter_account_id'")


def test_names_are_unique_as_account_names(app, api, books):
    made = create(api, dues(books))
    other = create(api, dues(books, name="Dues Bert"))
    for body in ({"name": "dues   ANNA"},):
        response = api.post("/schedules", json=dues(books, **body))
        assert response.status_code == 400 and "name" in response.get_json()["error"]
        before = stored(app)
        response = api.put(f"/schedules/{other['id']}", json=body)
        assert response.status_code == 400 and "name" in response.get_json()["error"]
        assert stored(app) == before
    # Its own name, differently spelt, is fine.
    response = api.put(f"/schedules/{made['id']}", json={"name": "DUES ANNA"})
    assert response.status_code == 200


def test_a_refused_change_changes_nothing(app, api, books):
    made = create(api, dues(books))
    before = stored(app)
    response = api.put(f"/schedules/{made['id']}", json={"amount_cents": 0, "name": "New"})
    assert response.status_code == 400 and "amount_cents" in response.get_json()["error"]
    assert stored(app) == before


@pytest.mark.parametrize("method", ["get", "put", "delete"])
@pytest.mark.parametrize("schedule_id", [12345, 2**31, 2**63])
def test_unknown_schedule_is_404(api, books, method, schedule_id):
    response = getattr(api, method)(f"/schedules/{schedule_id}", json={"name": "x"})
    assert response.status_code == 404
    assert response.get_json() == {"error": "no such schedule"}
