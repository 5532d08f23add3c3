"""POST /schedules/{id}/occurrences/{occurs_on} (docs/schedules.md, "Acting on an
occurrence") on both stores: match, skip, post and reopen with the statuses they give,
the posting through record_transaction (the lock date holds, its event names the
schedule), and every refusal (400 naming the field, 404, 409; nothing changed). The
test clock's today is Saturday 2026-11-21."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Entry, ScheduleOccurrence, Transaction
from tests.testkit import events


@pytest.fixture
def books(club_books):
    return club_books  # tests/services/ledger/conftest.py


@pytest.fixture
def dues(api, books) -> int:
    body = {
        "name": "Dues Anna",
        "account_id": books["bank"],
        "counter_account_id": books["dues"],
        "amount_cents": 2500,
        "rrule": "FREQ=MONTHLY;BYMONTHDAY=1",
        "starts_on": "2026-09-01",
    }
    response = api.post("/schedules", json=body)
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def act(api, schedule_id, occurs_on, body, status=200):
    response = api.post(f"/schedules/{schedule_id}/occurrences/{occurs_on}", json=body)
    assert response.status_code == status, response.get_json()
    return response.get_json()


def stored(app) -> tuple[list, list]:
    with app.app_context():
        rows = (
            [tuple(r) for r in db.session.execute(select(ScheduleOccurrence.__table__))],
            [tuple(r) for r in db.session.execute(select(Transaction.id))],
        )
        db.session.rollback()
        return rows


def transaction(app, tx_id) -> dict | None:
    """The transaction as stored: {occurred_on, description, entries: sorted pairs}."""
    with app.app_context():
        header = db.session.get(Transaction, tx_id)
        if header is None:
            db.session.rollback()
            return None
        pairs = db.session.execute(
            select(Entry.account_id, Entry.amount_cents).where(Entry.transaction_id == tx_id)
        )
        found = {
            "occurred_on": header.occurred_on.isoformat(),
            "description": header.description,
            "entries": sorted(tuple(p) for p in pairs),
        }
        db.session.rollback()
        return found


def occurrence(schedule_id, occurs_on, status, tx_id=None, books=None) -> dict:
    return {
        "schedule_id": schedule_id,
        "name": "Dues Anna",
        "occurs_on": occurs_on,
        "due_on": occurs_on,
        "amount_cents": 2500,
        "account_id": books["bank"],
        "counter_account_id": books["dues"],
        "status": status,
        "transaction_id": tx_id,
    }


def test_post_dated_due_on_then_reopen_keeps_the_transaction(app, api, books, dues):
    posted = act(api, dues, "2026-11-01", {"action": "post"})
    tx_id = posted["transaction_id"]
    assert posted == occurrence(dues, "2026-11-01", "posted", tx_id, books)
    assert transaction(app, tx_id) == {
        "occurred_on": "2026-11-01",
        "description": "Dues Anna",
        "entries": sorted([(books["bank"], 2500), (books["dues"], -2500)]),
    }
    # Its posting event names the schedule and the occurrence.
    (event,) = events(api, "transaction.posted")
    assert event["object"]["schedule"] == {"id": dues, "occurs_on": "2026-11-01"}
    reopened = act(api, dues, "2026-11-01", {"action": "reopen"})
    assert reopened == occurrence(dues, "2026-11-01", "overdue", None, books)
    assert transaction(app, tx_id) is not None  # stays in the books


def test_verify_accepts_a_schedule_posting(api, books, dues, runner):
    act(api, dues, "2026-11-01", {"action": "post"})
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 0, result.output


def test_post_on_another_date(app, api, books, dues):
    posted = act(api, dues, "2026-10-01", {"action": "post", "occurred_on": "2026-10-03"})
    assert transaction(app, posted["transaction_id"])["occurred_on"] == "2026-10-03"


def test_post_respects_the_lock_date(app, api, books, dues, session_client):
    person = session_client(mfa_complete=True)
    assert person.put("/books/lock", json={"locked_through": "2026-10-31"}).status_code == 200
    before = stored(app)
    response = api.post(f"/schedules/{dues}/occurrences/2026-10-01", json={"action": "post"})
    assert response.status_code == 409, response.get_json()
    assert stored(app) == before
    # Posted on a later, open date it goes through.
    act(api, dues, "2026-10-01", {"action": "post", "occurred_on": "2026-11-02"})


def test_skip_and_reopen(api, books, dues):
    assert act(api, dues, "2026-12-01", {"action": "skip"}) == occurrence(
        dues, "2026-12-01", "skipped", None, books
    )
    act(api, dues, "2026-12-01", {"action": "skip"}, status=409)
    assert act(api, dues, "2026-12-01", {"action": "reopen"})["status"] == "upcoming"
    act(api, dues, "2026-12-01", {"action": "reopen"}, status=409)
    trail = [(e["action"], e["object"]) for e in events(api, oldest_first=True)]
    assert trail[-2:] == [
        (
            "occurrence.skipped",
            {
                "occurrence": {
                    "schedule_id": dues,
                    "occurs_on": "2026-12-01",
                    "status": "skipped",
                    "transaction_id": None,
                }
            },
        ),
        (
            "occurrence.reopened",
            {
                "occurrence": {
                    "schedule_id": dues,
                    "occurs_on": "2026-12-01",
                    "status": "open",
                    "transaction_id": None,
                }
            },
        ),
    ]


def test_match_any_transaction_on_the_account(app, api, books, dues, post_tx):
    # A person's word: another amount, another date, another description.
    tx_id = post_tx("2026-08-15", "cash", (books["bank"], 999), (books["rent"], -999)).get_json()[
        "id"
    ]
    assert act(api, dues, "2026-10-01", {"action": "match", "transaction_id": tx_id}) == (
        occurrence(dues, "2026-10-01", "met", tx_id, books)
    )
    assert events(api, "occurrence.matched")[0]["object"]["occurrence"]["transaction_id"] == tx_id
    other = post_tx("2026-10-01", "x", (books["bank"], 5), (books["dues"], -5)).get_json()["id"]
    before = stored(app)
    # It meets one occurrence already: 409, nothing changed.
    act(api, dues, "2026-11-01", {"action": "match", "transaction_id": tx_id}, status=409)
    # The occurrence is met already: 409.
    act(api, dues, "2026-10-01", {"action": "match", "transaction_id": other}, status=409)
    assert stored(app) == before


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "action"),
        ({"action": "pay"}, "action"),
        ({"action": "match"}, "transaction_id"),
        ({"action": "match", "transaction_id": "7"}, "transaction_id"),
        ({"action": "match", "transaction_id": 987654}, "transaction_id"),
        ({"action": "match", "transaction_id": 2**63}, "transaction_id"),
        ({"action": "match", "transaction_id": "off_account"}, "transaction_id"),
        ({"action": "post", "occurred_on": "2026-02-30"}, "occurred_on"),
    ],
)
def test_refusals_name_the_field(app, api, books, dues, post_tx, body, field):
    if body.get("transaction_id") == "off_account":
        tx = post_tx("2026-10-01", "rent", (books["dues"], 5), (books["rent"], -5)).get_json()
        body = {**body, "transaction_id": tx["id"]}
    before = stored(app)
    response = api.post(f"/schedules/{dues}/occurrences/2026-10-01", json=body)
    assert response.status_code == 400, response.get_json()
    assert f"'{field}'" in response.get_json()["error"]
    assert stored(app) == before


@pytest.mark.parametrize(
    "occurs_on", ["2026-10-02", "2026-08-01", "2026-02-30", "01-10-2026", "2300-01-01"]
)
def test_a_date_the_rule_does_not_give_is_404(api, books, dues, occurs_on):
    # 2026-08-01 is a rule date, but before starts_on (2026-09-01).
    response = api.post(f"/schedules/{dues}/occurrences/{occurs_on}", json={"action": "skip"})
    assert response.status_code == 404


def test_an_unknown_schedule_is_404(api, books):
    response = api.post("/schedules/999/occurrences/2026-10-01", json={"action": "skip"})
    assert response.status_code == 404
    assert response.get_json() == {"error": "no such schedule"}


def test_an_inactive_schedule_has_nothing_open(api, books, dues):
    act(api, dues, "2026-10-01", {"action": "skip"})
    assert api.put(f"/schedules/{dues}", json={"active": False}).status_code == 200
    act(api, dues, "2026-11-01", {"action": "post"}, status=409)
    # What was skipped stays, and may be reopened.
    act(api, dues, "2026-10-01", {"action": "reopen"})
