"""Meeting (docs/schedules.md, "Meeting") on both stores: a new transaction meets the
open occurrence it qualifies for (amount within tolerance with the same sign, the
counter account, the window, match_text), the earliest due first, then the lowest
schedule id; a schedule created after the payments is met by them, oldest first;
deleting a transaction opens again what it met or posted; a correction's replacement
takes the occurrence over. The test clock's today is Saturday 2026-11-21."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from sqlalchemy.exc import OperationalError

from app.services.ledger import schedule_meeting
from tests.testkit import events


@pytest.fixture
def books(club_books):
    return club_books  # tests/services/ledger/conftest.py


def schedule(api, books, name="Dues Anna", **extra) -> int:
    body = {
        "name": name,
        "account_id": books["bank"],
        "counter_account_id": books["dues"],
        "amount_cents": 2500,
        "rrule": "FREQ=MONTHLY;BYMONTHDAY=1",
        "starts_on": "2026-09-01",
        **extra,
    }
    response = api.post("/schedules", json=body)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def pay(post_tx, books, day, cents=2500, description="Dues", counter="dues") -> int:
    response = post_tx(day, description, (books["bank"], cents), (books[counter], -cents))
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def closed(api, schedule_id=None) -> list[tuple]:
    """(schedule_id, occurs_on, status, transaction_id) of the met and posted ones."""
    query = "?from=2026-01-01&to=2027-12-31" + (
        f"&schedule_id={schedule_id}" if schedule_id else ""
    )
    items = api.get("/schedules/occurrences" + query).get_json()["items"]
    return [
        (i["schedule_id"], i["occurs_on"], i["status"], i["transaction_id"])
        for i in items
        if i["status"] in ("met", "posted")
    ]


def test_a_new_transaction_meets_the_earliest_open_occurrence(api, books, post_tx):
    # window 40: a payment of 2026-10-28 is near both 2026-10-01 (27 days) and 2026-11-01
    # (4 days); it meets the earliest due, not the nearest.
    made = schedule(api, books, window_days=40)
    first = pay(post_tx, books, "2026-10-28")
    second = pay(post_tx, books, "2026-10-29")
    assert closed(api) == [
        (made, "2026-10-01", "met", first),
        (made, "2026-11-01", "met", second),
    ]
    (event,) = [
        e
        for e in events(api, "occurrence.met")
        if e["object"]["occurrence"]["transaction_id"] == first
    ]
    assert event["object"] == {
        "occurrence": {
            "schedule_id": made,
            "occurs_on": "2026-10-01",
            "status": "met",
            "transaction_id": first,
        }
    }


def test_the_window_counts_days_from_due_on(api, books, post_tx):
    made = schedule(api, books)  # window_days 10
    pay(post_tx, books, "2026-10-12")  # 11 days after 2026-10-01: meets nothing
    assert closed(api) == []
    tx = pay(post_tx, books, "2026-10-11")  # 10 days after
    assert closed(api) == [(made, "2026-10-01", "met", tx)]


def test_tolerance_and_sign(api, books, post_tx):
    made = schedule(api, books, tolerance_cents=100)
    pay(post_tx, books, "2026-10-01", cents=2601)
    pay(post_tx, books, "2026-10-01", cents=-2500)
    assert closed(api) == []
    tx = pay(post_tx, books, "2026-10-01", cents=2400)
    assert closed(api) == [(made, "2026-10-01", "met", tx)]


def test_the_counter_account_and_match_text(api, books, post_tx):
    made = schedule(api, books, match_text="  anna  BERG")
    pay(post_tx, books, "2026-10-01", counter="rent")  # not on the counter account
    pay(post_tx, books, "2026-10-01", description="Dues Bert")
    assert closed(api) == []
    tx = pay(post_tx, books, "2026-10-01", description="Dues ANNA   Berg, October")
    assert closed(api) == [(made, "2026-10-01", "met", tx)]


def test_a_tie_on_due_on_goes_to_the_lowest_schedule_id(api, books, post_tx):
    low = schedule(api, books, name="B first made")
    high = schedule(api, books, name="A made second")
    tx = pay(post_tx, books, "2026-10-01")
    assert closed(api) == [(low, "2026-10-01", "met", tx)]
    assert high > low


def test_an_inactive_schedule_is_met_by_nothing(api, books, post_tx):
    schedule(api, books, active=False)
    pay(post_tx, books, "2026-10-01")
    assert closed(api) == []


def test_a_schedule_made_after_the_payments_is_met_by_them_oldest_first(api, books, post_tx):
    early = pay(post_tx, books, "2026-10-02")
    late_october = pay(post_tx, books, "2026-10-30")
    pay(post_tx, books, "2026-11-02")
    # 2026-11-01 is met by the oldest qualifying payment (2026-10-30), not the nearest
    # (2026-11-02); 2026-12-01 is not due yet: nothing meets it now.
    made = schedule(api, books)
    assert closed(api) == [
        (made, "2026-10-01", "met", early),
        (made, "2026-11-01", "met", late_october),
    ]


def test_a_changed_schedule_is_met_by_existing_payments(api, books, post_tx):
    made = schedule(api, books, amount_cents=3000)
    tx = pay(post_tx, books, "2026-10-01")
    assert closed(api) == []
    assert api.put(f"/schedules/{made}", json={"amount_cents": 2500}).status_code == 200
    assert closed(api) == [(made, "2026-10-01", "met", tx)]


def test_deleting_a_transaction_opens_again_what_it_met(api, books, post_tx):
    made = schedule(api, books)
    tx = pay(post_tx, books, "2026-10-01")
    assert api.delete(f"/transactions/{tx}").status_code == 204
    assert closed(api) == []
    # Open again: the next qualifying payment meets it.
    again = pay(post_tx, books, "2026-10-02")
    assert closed(api) == [(made, "2026-10-01", "met", again)]


def test_deleting_a_posting_opens_it_again(api, books):
    made = schedule(api, books)
    posted = api.post(f"/schedules/{made}/occurrences/2026-11-01", json={"action": "post"})
    tx = posted.get_json()["transaction_id"]
    assert api.delete(f"/transactions/{tx}").status_code == 204
    items = api.get(f"/schedules/occurrences?schedule_id={made}&from=2026-11-01&to=2026-11-01")
    assert [i["status"] for i in items.get_json()["items"]] == ["overdue"]


def test_a_posting_for_a_schedule_meets_no_other(api, books):
    first = schedule(api, books)
    second = schedule(api, books, name="Dues twin")
    posted = api.post(f"/schedules/{second}/occurrences/2026-11-01", json={"action": "post"})
    assert posted.status_code == 200
    assert closed(api) == [(second, "2026-11-01", "posted", posted.get_json()["transaction_id"])]
    assert first < second


def _correct(api, books, tx, day, cents):
    body = {
        "occurred_on": day,
        "description": "Dues",
        "replaces": tx,
        "entries": [
            {"account_id": books["bank"], "amount_cents": cents},
            {"account_id": books["dues"], "amount_cents": -cents},
        ],
    }
    response = api.post("/transactions", json=body)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def test_a_correction_takes_the_occurrence_over_when_it_still_qualifies(api, books, post_tx):
    made = schedule(api, books)
    tx = pay(post_tx, books, "2026-10-01")
    fixed = _correct(api, books, tx, "2026-10-03", 2500)
    assert closed(api) == [(made, "2026-10-01", "met", fixed)]
    # A replacement that no longer qualifies leaves the occurrence open.
    _correct(api, books, fixed, "2026-10-03", 9999)
    assert closed(api) == []


def test_a_payment_that_meets_a_schedule_is_rerun_whole_when_the_database_asks(
    app, api, books, post_tx, dialect, monkeypatch
):
    """On PostgreSQL a plain posting is first sent as one statement of its own that
    writes only when no schedule may meet it (transactions.record_transaction).
    For a payment that meets one, that statement wrote nothing, so the unit (the
    posting and its meeting, one database transaction) is still re-run whole when the
    database asks for a retry: stored once, and met (on SQLite the unit is always
    re-run whole)."""
    made = schedule(api, books)
    real, calls = schedule_meeting.meet_new, []

    def deadlock_once(*args, **kwargs):
        calls.append(1)
        real(*args, **kwargs)
        if len(calls) == 1:
            cause = (
                psycopg.errors.DeadlockDetected("deadlock")
                if dialect == "postgresql"
                else sqlite3.OperationalError("database is locked")
            )
            raise OperationalError("INSERT ...", {}, cause)

    monkeypatch.setattr(schedule_meeting, "meet_new", deadlock_once)
    paid = pay(post_tx, books, "2026-11-02")
    assert len(calls) == 2
    assert closed(api, made) == [(made, "2026-11-01", "met", paid)]
    payments = api.get("/transactions", query_string={"q": "Dues"}).get_json()
    assert [t["id"] for t in payments] == [paid]
