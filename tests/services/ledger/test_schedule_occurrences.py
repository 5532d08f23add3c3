"""GET /schedules/occurrences (docs/schedules.md, "Occurrences") on both stores: the
window on due_on, the statuses computed from today (upcoming, due, overdue) and stored
(met, posted, skipped), the order, the filters and every refusal. The test clock's
today is Saturday 2026-11-21."""

from __future__ import annotations

from datetime import date

import pytest

from app import store
from app.extensions import db
from app.models import ScheduleOccurrence


@pytest.fixture
def books(club_books):
    return club_books  # tests/services/ledger/conftest.py


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


def keep(app, schedule_id: int, occurs_on: str, status: str) -> None:
    """An occurrence's stored row, as the actions write it."""
    with app.app_context():
        db.session.add(
            ScheduleOccurrence(
                schedule_id=schedule_id, occurs_on=date.fromisoformat(occurs_on), status=status
            )
        )
        store.commit()


def listing(api, query: str = "") -> list[tuple]:
    response = api.get("/schedules/occurrences" + query)
    assert response.status_code == 200, response.get_json()
    return [
        (i["schedule_id"], i["occurs_on"], i["due_on"], i["status"])
        for i in response.get_json()["items"]
    ]


def test_statuses_and_order_in_the_default_window(app, api, books):
    first = create(api, books, "Dues Anna", "FREQ=MONTHLY;BYMONTHDAY=1")
    fifteenth = create(api, books, "Dues Bert", "FREQ=MONTHLY;BYMONTHDAY=15")
    # 2026-11-22 is a Sunday: due Monday 2026-11-23.
    sunday = create(
        api,
        books,
        "Rent",
        "FREQ=MONTHLY;BYMONTHDAY=22",
        weekend="after",
        counter_account_id=books["rent"],
        amount_cents=-90000,
    )
    keep(app, first, "2026-10-01", "skipped")
    keep(app, first, "2026-09-01", "open")  # reopened: open as any other
    # Default window: 2025-11-20 to 2026-12-22 on due_on.
    assert listing(api) == [
        (first, "2026-09-01", "2026-09-01", "overdue"),
        (fifteenth, "2026-09-15", "2026-09-15", "overdue"),
        (sunday, "2026-09-22", "2026-09-22", "overdue"),
        (first, "2026-10-01", "2026-10-01", "skipped"),
        (fifteenth, "2026-10-15", "2026-10-15", "overdue"),
        (sunday, "2026-10-22", "2026-10-22", "overdue"),
        (first, "2026-11-01", "2026-11-01", "overdue"),  # 20 days after: beyond window_days 10
        (fifteenth, "2026-11-15", "2026-11-15", "due"),  # 6 days after
        (sunday, "2026-11-22", "2026-11-23", "upcoming"),
        (first, "2026-12-01", "2026-12-01", "upcoming"),
        (fifteenth, "2026-12-15", "2026-12-15", "upcoming"),
        (sunday, "2026-12-22", "2026-12-22", "upcoming"),
    ]
    item = api.get("/schedules/occurrences?status=upcoming&to=2026-11-30").get_json()["items"]
    assert item == [
        {
            "schedule_id": sunday,
            "name": "Rent",
            "occurs_on": "2026-11-22",
            "due_on": "2026-11-23",
            "amount_cents": -90000,
            "account_id": books["bank"],
            "counter_account_id": books["rent"],
            "status": "upcoming",
            "transaction_id": None,
        }
    ]


def test_due_ends_after_window_days(api, books):
    # Due 2026-11-11: 10 days before today is still due with window_days 10, overdue with 9.
    ten = create(api, books, "Ten", "FREQ=MONTHLY;BYMONTHDAY=11")
    nine = create(api, books, "Nine", "FREQ=MONTHLY;BYMONTHDAY=11", window_days=9)
    window = "?from=2026-11-11&to=2026-11-11"
    assert listing(api, window) == [
        (ten, "2026-11-11", "2026-11-11", "due"),
        (nine, "2026-11-11", "2026-11-11", "overdue"),
    ]


def test_the_window_is_on_due_on_and_inclusive(api, books):
    # Rule date Saturday 2026-08-01, due Friday 2026-07-31 under `before`.
    made = create(
        api, books, "Before", "FREQ=MONTHLY;BYMONTHDAY=1", weekend="before", starts_on="2026-07-01"
    )
    assert listing(api, "?from=2026-07-31&to=2026-07-31") == [
        (made, "2026-08-01", "2026-07-31", "overdue")
    ]
    assert listing(api, "?from=2026-08-01&to=2026-08-31") == []
    # starts_on 2026-07-01 itself is a rule date; nothing before it is an occurrence.
    assert listing(api, "?from=2026-01-01&to=2026-07-01") == [
        (made, "2026-07-01", "2026-07-01", "overdue")
    ]


def test_filters_schedule_id_and_status(app, api, books):
    first = create(api, books, "A", "FREQ=MONTHLY;BYMONTHDAY=1")
    other = create(api, books, "B", "FREQ=MONTHLY;BYMONTHDAY=1")
    keep(app, other, "2026-10-01", "skipped")
    assert listing(api, f"?schedule_id={other}&status=skipped") == [
        (other, "2026-10-01", "2026-10-01", "skipped")
    ]
    assert [i[0] for i in listing(api, f"?schedule_id={first}")] == [first] * 4


def test_an_inactive_schedule_lists_only_what_was_closed(app, api, books):
    made = create(api, books, "A", "FREQ=MONTHLY;BYMONTHDAY=1", active=False)
    keep(app, made, "2026-10-01", "skipped")
    keep(app, made, "2026-09-01", "open")
    assert listing(api) == [(made, "2026-10-01", "2026-10-01", "skipped")]


@pytest.mark.parametrize(
    "query, field",
    [
        ("?from=2026-02-30", "from"),
        ("?to=tomorrow", "to"),
        ("?from=2026-05-01&to=2026-04-30", "to"),
        ("?from=2016-01-01&to=2026-01-09", "to"),  # 3,661 days apart: 3,660 is the most
        ("?status=open", "status"),
        ("?schedule_id=x", "schedule_id"),
    ],
)
def test_refusals_name_the_argument(api, books, query, field):
    response = api.get("/schedules/occurrences" + query)
    assert response.status_code == 400
    assert f"'{field}'" in response.get_json()["error"]


def test_an_empty_from_or_to_is_the_default(api, books):
    """As every dated query of the API (docs/openapi.yaml, OptionalDate): `?to=` is
    no `to`, so a form's empty field lists the default window."""
    create(api, books, "Rent", "FREQ=MONTHLY;BYMONTHDAY=1")
    assert listing(api, "?from=&to=") == listing(api)
    assert listing(api)


def test_the_longest_window_is_taken(api, books):
    assert api.get("/schedules/occurrences?from=2016-01-01&to=2026-01-08").status_code == 200


@pytest.mark.parametrize("schedule_id", ["999", str(2**31), str(2**63 - 1)])
def test_an_unknown_schedule_id_is_404(api, books, schedule_id):
    response = api.get(f"/schedules/occurrences?schedule_id={schedule_id}")
    assert response.status_code == 404
    assert response.get_json() == {"error": "no such schedule"}
