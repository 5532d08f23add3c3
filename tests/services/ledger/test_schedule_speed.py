"""What the schedules' speed work must not change (docs/schedules.md, "Speed"), on both
stores: the kept rule dates equal dateutil's, over a short window (kept) and a long one
(computed each time); the posting's narrowed read of the schedules still finds one met
within its tolerance, also a tolerance beyond 64 bits once added to the amount; GET
/schedules' next_due_on, read for every schedule at once, is each schedule's own."""

from __future__ import annotations

from datetime import date
from types import SimpleNamespace

import pytest

from app.services.ledger import schedule_rules
from app.services.ledger.schedule_rules import Recurrence


@pytest.mark.parametrize(
    ("rule", "weekend", "first", "last"),
    [
        ("FREQ=MONTHLY;BYMONTHDAY=1", "none", date(2026, 1, 1), date(2026, 12, 31)),
        ("FREQ=MONTHLY;BYDAY=-1FR", "after", date(2026, 1, 1), date(2027, 6, 30)),
        ("FREQ=DAILY", "before", date(2026, 1, 1), date(2028, 12, 31)),  # > CACHED_DATES
    ],
)
def test_kept_dates_are_dateutils(rule, weekend, first, last):
    row = SimpleNamespace(rrule=rule, starts_on=date(2025, 12, 20), weekend=weekend)
    expected = list(Recurrence(rule, row.starts_on, weekend).due_between(first, last))
    assert list(schedule_rules.due_in(row, first, last)) == expected
    assert list(schedule_rules.due_in(row, first, last)) == expected  # again, kept or not
    assert expected


def test_a_tolerance_beyond_64_bits_with_the_amount_still_meets(api, club_books, post_tx):
    big = 2**62
    made = api.post(
        "/schedules",
        json={
            "name": "Big",
            "account_id": club_books["bank"],
            "counter_account_id": club_books["dues"],
            "amount_cents": big,
            "tolerance_cents": 2**63 - 1,
            "rrule": "FREQ=MONTHLY;BYMONTHDAY=1",
            "starts_on": "2026-11-01",
        },
    )
    assert made.status_code == 201, made.get_json()
    paid = post_tx("2026-11-02", "dues", (club_books["bank"], 5), (club_books["dues"], -5))
    assert paid.status_code == 201
    items = api.get("/schedules/occurrences?status=met").get_json()["items"]
    assert [(i["occurs_on"], i["transaction_id"]) for i in items] == [
        ("2026-11-01", paid.get_json()["id"])
    ]


def test_next_due_on_of_each_schedule_in_the_listing(api, club_books):
    ids = []
    for n, day in enumerate((1, 25, 28)):
        made = api.post(
            "/schedules",
            json={
                "name": f"S{n}",
                "account_id": club_books["bank"],
                "counter_account_id": club_books["dues"],
                "amount_cents": 100,
                "rrule": f"FREQ=MONTHLY;BYMONTHDAY={day}",
                "starts_on": "2026-09-01",
            },
        )
        ids.append(made.get_json()["id"])
    # Today is 2026-11-21: S1's 2026-11-25 skipped, its next is 2026-12-25.
    skipped = api.post(f"/schedules/{ids[1]}/occurrences/2026-11-25", json={"action": "skip"})
    assert skipped.status_code == 200
    listed = {s["id"]: s["next_due_on"] for s in api.get("/schedules").get_json()}
    assert listed == {ids[0]: "2026-12-01", ids[1]: "2026-12-25", ids[2]: "2026-11-28"}
    for schedule_id, due in listed.items():
        assert api.get(f"/schedules/{schedule_id}").get_json()["next_due_on"] == due
