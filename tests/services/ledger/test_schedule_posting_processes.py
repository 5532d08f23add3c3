"""Posting by the service across processes and crashes (docs/schedules.md, "Posting by
the service"), in real separate processes (tests/services/ledger/posting_processes.py:
each spawned with its own app and connections, running schedule_posting.post_due as
serve's tick does), on both stores: two processes posting the same due occurrences at
once never post one twice (on PostgreSQL both read before either claims; on SQLite the
writer lock orders them); a process killed between posting and marking leaves nothing
posted and nothing lost: the next run posts each occurrence exactly once. The books
verify afterwards. The test clock's today is 2026-11-21; the processes post what is
due on 2027-03-01."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import ScheduleOccurrence, Transaction
from app.services.ledger import schedule_posting
from tests.services.ledger import posting_processes

pytestmark = pytest.mark.slow  # spawned processes (README, "Test it")

DAY = "2027-03-01"
DUE = ["2026-12-01", "2027-01-01", "2027-02-01", "2027-03-01"]


@pytest.fixture
def books(club_books):
    return club_books  # tests/services/ledger/conftest.py


def make(api, books, count: int) -> list[int]:
    """Schedules in mode post from 2026-11-22: nothing due yet, four due on DAY each."""
    made = []
    for n in range(count):
        body = {
            "name": f"Rent {n}",
            "account_id": books["bank"],
            "counter_account_id": books["rent"],
            "amount_cents": -(1000 + n),
            "rrule": "FREQ=MONTHLY;BYMONTHDAY=1",
            "starts_on": "2026-09-01",
            "mode": "post",
            "post_from": "2026-11-22",
        }
        response = api.post("/schedules", json=body)
        assert response.status_code == 201, response.get_json()
        made.append(response.get_json()["id"])
    return made


def stored(app) -> tuple[list[tuple], list[tuple]]:
    """(schedule_id, occurs_on, status, transaction_id) of every occurrence row, and
    (id, occurred_on, description) of every transaction."""
    with app.app_context():
        rows = db.session.execute(
            select(
                ScheduleOccurrence.schedule_id,
                ScheduleOccurrence.occurs_on,
                ScheduleOccurrence.status,
                ScheduleOccurrence.transaction_id,
            ).order_by(ScheduleOccurrence.schedule_id, ScheduleOccurrence.occurs_on)
        ).all()
        txs = db.session.execute(
            select(Transaction.id, Transaction.occurred_on, Transaction.description).order_by(
                Transaction.id
            )
        ).all()
        db.session.rollback()
        return [tuple(r) for r in rows], [tuple(t) for t in txs]


def posted_once(app, made: list[int]) -> None:
    """Every due occurrence of every schedule posted by exactly one transaction, dated
    its due date and named by the schedule; no other transaction."""
    rows, txs = stored(app)
    assert [(r[0], r[1].isoformat(), r[2]) for r in rows] == [
        (s, day, "posted") for s in made for day in DUE
    ]
    by_id = {t[0]: t for t in txs}
    assert len(txs) == len(rows) == len({r[3] for r in rows})
    for schedule_id, occurs_on, _, tx_id in rows:
        _, occurred_on, description = by_id[tx_id]
        assert occurred_on == occurs_on
        assert description == f"Rent {made.index(schedule_id)}"


def verify_passes(runner) -> None:
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 0, result.output


def test_two_processes_at_once_post_each_occurrence_once(app, api, books, runner, database_url):
    made = make(api, books, 10)
    assert stored(app) == ([], [])
    codes, posted = posting_processes.run(database_url, DAY, count=2)
    assert codes == [0, 0]
    assert sum(posted) == 40, posted  # between them, each once
    posted_once(app, made)
    # A third run finds nothing left to post.
    assert posting_processes.run(database_url, DAY) == [[0], [0]]
    posted_once(app, made)
    api.get("/audit/head")  # seals what waits (PostgreSQL)
    verify_passes(runner)


def test_a_crash_between_posting_and_marking_loses_nothing_and_doubles_nothing(
    app, api, books, runner, database_url
):
    made = make(api, books, 3)
    codes, posted = posting_processes.run(database_url, DAY, crash_after=2)
    assert codes == [-9] and posted == []  # killed after its second posting
    # The posting and its claim went with the process: nothing stored, all still open.
    assert stored(app) == ([], [])
    items = api.get(
        f"/schedules/occurrences?schedule_id={made[0]}&from=2026-12-01&to={DAY}"
    ).get_json()
    assert [i["status"] for i in items["items"]] == ["upcoming"] * 4
    # The next run posts each once.
    assert posting_processes.run(database_url, DAY) == [[0], [12]]
    posted_once(app, made)
    api.get("/audit/head")
    verify_passes(runner)


def test_a_failure_after_posting_rolls_the_claim_back_with_it(
    app, api, books, runner, database_url, monkeypatch
):
    """The same in this process: a posting that raises after it was written (before its
    mark) ends the unit; the next run posts each occurrence once."""
    made = make(api, books, 2)
    posting = schedule_posting.post_occurrence

    def post_then_fail(*args, **kwargs):
        posting(*args, **kwargs)
        raise RuntimeError("the process failed between posting and marking")

    monkeypatch.setattr(schedule_posting, "post_occurrence", post_then_fail)
    with pytest.raises(RuntimeError):
        posting_processes.post_here(app, DAY)
    assert stored(app) == ([], [])
    monkeypatch.setattr(schedule_posting, "post_occurrence", posting)
    assert posting_processes.post_here(app, DAY) == 8
    posted_once(app, made)
    api.get("/audit/head")
    verify_passes(runner)
