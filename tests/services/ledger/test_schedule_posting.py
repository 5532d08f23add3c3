"""Posting by the service (docs/schedules.md, "Posting by the service") on both stores:
at a schedule's creation or change and by post_due(today), each due occurrence from
post_from posted once, dated due_on, named by the schedule; existing transactions meet
first; never on or before the lock date; never again once reopened or its posting
deleted; the 1,000 catch-up limit. The test clock's today is Saturday 2026-11-21."""

from __future__ import annotations

import threading
from datetime import date

import pytest
from sqlalchemy import func, select

from app import store
from app.extensions import db
from app.models import Schedule, Transaction
from app.services.ledger import schedule_posting
from tests.testkit import events, restored_backup


@pytest.fixture
def books(make_account):
    return {
        "bank": make_account("Bank", "asset"),
        "dues": make_account("Dues", "income"),
    }


def body(books, **extra) -> dict:
    return {
        "name": "Rent in",
        "account_id": books["bank"],
        "counter_account_id": books["dues"],
        "amount_cents": 2500,
        "rrule": "FREQ=MONTHLY;BYMONTHDAY=1",
        "starts_on": "2026-09-01",
        "mode": "post",
        "post_from": "2026-10-01",
        **extra,
    }


def create(api, books, **extra) -> int:
    response = api.post("/schedules", json=body(books, **extra))
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def listed(api, made) -> list[tuple]:
    query = f"?schedule_id={made}&from=2026-08-01&to=2027-01-31"
    items = api.get("/schedules/occurrences" + query).get_json()["items"]
    return [
        (i["occurs_on"], i["due_on"], i["status"], i["transaction_id"] is not None) for i in items
    ]


def postings(app) -> list[tuple]:
    """(occurred_on, description, created_by) of every transaction, by id."""
    with app.app_context():
        rows = db.session.execute(
            select(
                Transaction.occurred_on, Transaction.description, Transaction.created_by
            ).order_by(Transaction.id)
        )
        found = [(r[0].isoformat(), r[1], r[2]) for r in rows]
        db.session.rollback()
        return found


def post_due(app, day: date) -> int:
    with app.app_context(), store.writing():
        return store.run_unit(schedule_posting.post_due, day)


def test_created_in_mode_post_posts_what_is_due_from_post_from(app, api, books):
    made = create(api, books)
    assert listed(api, made) == [
        ("2026-09-01", "2026-09-01", "overdue", False),  # before post_from: never posted
        ("2026-10-01", "2026-10-01", "posted", True),
        ("2026-11-01", "2026-11-01", "posted", True),
        ("2026-12-01", "2026-12-01", "upcoming", False),
        ("2027-01-01", "2027-01-01", "upcoming", False),
    ]
    alice = postings(app)[0][2]
    assert alice is not None
    assert postings(app) == [("2026-10-01", "Rent in", alice), ("2026-11-01", "Rent in", alice)]
    named = [
        e["object"].get("schedule") for e in events(api, "transaction.posted", oldest_first=True)
    ]
    assert named == [
        {"id": made, "occurs_on": "2026-10-01"},
        {"id": made, "occurs_on": "2026-11-01"},
    ]


def test_posted_on_due_on_after_the_weekend_rule(app, api, books):
    # 2026-11-01 is a Sunday: due, and posted, Friday 2026-10-30.
    create(api, books, weekend="before", post_from="2026-10-15")
    assert [p[0] for p in postings(app)] == ["2026-10-30"]


def test_existing_transactions_meet_first(app, api, books, post_tx):
    paid = post_tx("2026-10-02", "Rent", (books["bank"], 2500), (books["dues"], -2500))
    made = create(api, books)
    assert listed(api, made)[1:3] == [
        ("2026-10-01", "2026-10-01", "met", True),
        ("2026-11-01", "2026-11-01", "posted", True),
    ]
    assert [p[0] for p in postings(app)] == ["2026-10-02", "2026-11-01"]
    assert paid.status_code == 201


def test_nothing_on_or_before_the_lock_date(app, api, books, session_client):
    person = session_client(mfa_complete=True)
    assert person.put("/books/lock", json={"locked_through": "2026-10-01"}).status_code == 200
    made = create(api, books)
    assert listed(api, made)[1:3] == [
        ("2026-10-01", "2026-10-01", "overdue", False),  # stays open for a person
        ("2026-11-01", "2026-11-01", "posted", True),
    ]


def test_post_due_posts_each_occurrence_once(app, api, books, clock):
    made = create(api, books)
    clock.advance(days=11)  # 2026-12-02
    assert post_due(app, date(2026, 12, 2)) == 1
    assert post_due(app, date(2026, 12, 2)) == 0
    assert [p[0] for p in postings(app)] == ["2026-10-01", "2026-11-01", "2026-12-01"]
    assert listed(api, made)[3] == ("2026-12-01", "2026-12-01", "posted", True)


def test_never_posted_again_once_reopened_or_its_posting_deleted(app, api, books):
    made = create(api, books)
    items = api.get(f"/schedules/occurrences?schedule_id={made}&status=posted").get_json()
    october, november = items["items"]
    assert (
        api.post(f"/schedules/{made}/occurrences/2026-10-01", json={"action": "reopen"}).status_code
        == 200
    )
    assert api.delete(f"/transactions/{november['transaction_id']}").status_code == 204
    assert post_due(app, date(2026, 11, 21)) == 0
    assert api.put(f"/schedules/{made}", json={"amount_cents": 2600}).status_code == 200
    assert [p[0] for p in postings(app)] == ["2026-10-01"]  # the reopened one's stays
    assert [i[2] for i in listed(api, made)[1:3]] == ["overdue", "overdue"]
    assert october["transaction_id"] is not None


def test_an_expecting_or_inactive_schedule_posts_nothing(app, api, books):
    create(api, books, mode="expect", post_from=None)
    create(api, books, name="Off", active=False)
    assert post_due(app, date(2026, 11, 21)) == 0
    assert postings(app) == []


def test_more_than_1000_at_once_is_refused_naming_post_from(app, api, books):
    # Daily from 2024-02-25: 1,001 occurrences due up to 2026-11-21.
    assert (date(2026, 11, 21) - date(2024, 2, 25)).days + 1 == 1001
    response = api.post(
        "/schedules",
        json=body(books, rrule="FREQ=DAILY", starts_on="2024-01-01", post_from="2024-02-25"),
    )
    assert response.status_code == 400
    assert response.get_json()["error"].startswith("'post_from'")
    with app.app_context():
        assert db.session.execute(select(func.count()).select_from(Schedule)).scalar_one() == 0
        db.session.rollback()
    assert postings(app) == []


@pytest.mark.slow
def test_exactly_1000_at_once_are_posted(app, api, books):
    create(api, books, rrule="FREQ=DAILY", starts_on="2024-01-01", post_from="2024-02-26")
    assert len(postings(app)) == 1000


@pytest.mark.parametrize("target", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_backup_and_restore_carry_schedules_and_occurrences(
    app, api, books, runner, app_config, tmp_path, target
):
    made = create(api, books)
    assert (
        api.post(f"/schedules/{made}/occurrences/2026-12-01", json={"action": "skip"}).status_code
        == 200
    )
    schedules = api.get("/schedules").get_json()
    occurrences = api.get(f"/schedules/occurrences?schedule_id={made}").get_json()
    with restored_backup(runner, app_config, tmp_path, target, "ledger_schedules_restore_") as (
        restored,
        _,
        _,
    ):
        client = restored.test_client()
        headers = {"Authorization": f"Bearer {api.token}"}
        assert client.get("/schedules", headers=headers).get_json() == schedules
        query = f"/schedules/occurrences?schedule_id={made}"
        assert client.get(query, headers=headers).get_json() == occurrences
        with restored.app_context():
            db.session.remove()
            db.engine.dispose()


def test_two_at_once_post_an_occurrence_once(app, api, books, clock, dialect, monkeypatch):
    """Two processes' post_due at the same moment (two threads, two connections). On
    PostgreSQL both have read that 2026-12-01 is not stored before either claims it
    (a barrier in front of the claim): the key lets one claim it, the other waits for
    its commit and then claims, and posts, nothing. SQLite's writer lock runs the two
    units one after the other."""
    create(api, books)
    clock.advance(days=11)  # 2026-12-02: 2026-12-01 is due
    start = threading.Barrier(2, timeout=10)
    claim = schedule_posting._claim
    if dialect == "postgresql":
        both_read = threading.Barrier(2, timeout=10)

        def claim_together(schedule_id, occurs_on):
            both_read.wait()
            return claim(schedule_id, occurs_on)

        monkeypatch.setattr(schedule_posting, "_claim", claim_together)
    counts: list[int] = []

    def run():
        with app.app_context(), store.writing():
            start.wait()
            counts.append(store.run_unit(schedule_posting.post_due, date(2026, 12, 2)))
            db.session.remove()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(counts) == [0, 1]
    assert [p[0] for p in postings(app)] == ["2026-10-01", "2026-11-01", "2026-12-01"]
