"""Posting by the service (docs/schedules.md, "Posting by the service"): every open
occurrence of an active schedule in mode `post`, due on or after `post_from` and on or
before today, is posted exactly once through record_transaction: dated `due_on`,
described by the schedule's name, `amount_cents` on `account_id` and the opposite on
`counter_account_id`, attributed to the person who created the schedule; its
transaction.posted event carries `schedule: {id, occurs_on}`.

Exactly once, across processes and crashes: before posting, the occurrence's row is
claimed (INSERT ... ON CONFLICT DO NOTHING on the key (schedule_id, occurs_on)) in the
same unit as the posting. A second process claiming the same occurrence waits on the
key until the first commits and then claims nothing (so posts nothing); a crash rolls
the claim back with the posting. An occurrence with any stored row (met, posted,
skipped, or `open`: reopened, or its posting deleted) is never posted by the service.
An occurrence due on or before the lock date is not posted: it stays open.

- `post_schedule(row, today)`: one schedule, when it is created or changed (after
  existing transactions met it: schedule_meeting.meet_existing), before the answer;
  more than POST_MAX occurrences to post at once is 400 naming `post_from`.
- `post_due(today)`: every such schedule, in the caller's unit (app/cli/serve.py
  post_due runs it through store.run_unit under write intent, when serving starts and
  hourly: serving.Ticker); at most POST_MAX occurrences per schedule per call, the rest
  on the next call.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import select, update

from ...extensions import db
from ...models import Account, Schedule, ScheduleOccurrence
from ...store import dialect
from ..errors import BadRequestError
from . import lock, schedule_rules, transactions, validate

POST_MAX = 1000


def post_occurrence(row, occurs_on: date, occurred_on: date, created_by: int | None) -> int:
    """Post the schedule's two entries for one occurrence through record_transaction
    (every rule of POST /transactions, the lock date included): described by the
    schedule's name, amount_cents on account_id and the opposite on counter_account_id;
    its posting event names the schedule and the occurrence. Its id."""
    return transactions.record_transaction(
        occurred_on.isoformat(),
        row.name,
        [
            {"account_id": row.account_id, "amount_cents": row.amount_cents},
            {"account_id": row.counter_account_id, "amount_cents": -row.amount_cents},
        ],
        created_by,
        schedule={"id": int(row.id), "occurs_on": occurs_on.isoformat()},
    )


def to_post(row, today: date, most: int) -> list[tuple[date, date]]:
    """(occurs_on, due_on) of the occurrences the service would post today, never a
    stored one; at most `most` + 1 (one more tells there are too many)."""
    if row.mode != "post" or not row.active or row.post_from is None or row.post_from > today:
        return []
    stored = {
        r.occurs_on
        for r in db.session.execute(
            select(ScheduleOccurrence.occurs_on).where(ScheduleOccurrence.schedule_id == row.id)
        )
    }
    found = []
    for occurs_on, due in schedule_rules.of(row).due_between(row.post_from, today):
        if occurs_on in stored:
            continue
        found.append((occurs_on, due))
        if len(found) > most:
            break
    return found


def _claim(schedule_id: int, occurs_on: date) -> bool:
    """Take the occurrence for posting: its row inserted as posted (no transaction yet),
    or nothing when a row is there already (another process posted it)."""
    values = {
        "schedule_id": schedule_id,
        "occurs_on": occurs_on,
        "status": "posted",
        "transaction_id": None,
    }
    statement = dialect.upsert(ScheduleOccurrence, values).returning(ScheduleOccurrence.schedule_id)
    return db.session.execute(statement).first() is not None


def _postable(row) -> bool:
    """Both accounts are open and the opposite amount fits in 64 bits."""
    if -row.amount_cents > validate.INT64_MAX:
        return False
    archived = db.session.execute(
        select(Account.archived).where(Account.id.in_((row.account_id, row.counter_account_id)))
    ).scalars()
    return not any(archived)


def _post(row, occurrences: list[tuple[date, date]]) -> int:
    locked = lock.locked_through()
    posted = 0
    for occurs_on, due in occurrences:
        if locked is not None and due <= locked:
            continue  # stays open, for a person to post on another date or skip
        if not _claim(row.id, occurs_on):
            continue
        tx_id = post_occurrence(row, occurs_on, due, row.created_by)
        db.session.execute(
            update(ScheduleOccurrence)
            .where(
                ScheduleOccurrence.schedule_id == row.id,
                ScheduleOccurrence.occurs_on == occurs_on,
            )
            .values(transaction_id=tx_id)
        )
        posted += 1
    return posted


def post_schedule(row, today: date) -> int:
    """A schedule just created or changed: post what is due (400 naming post_from when
    that is more than POST_MAX occurrences); how many were posted."""
    occurrences = to_post(row, today, POST_MAX)
    if len(occurrences) > POST_MAX:
        raise BadRequestError(
            f"'post_from': the schedule would post more than {POST_MAX} occurrences at "
            "once; choose a later post_from"
        )
    if not occurrences or not _postable(row):
        return 0
    return _post(row, occurrences)


def post_due(today: date) -> int:
    """Post every due occurrence of every active schedule in mode `post` (at most
    POST_MAX per schedule per call), in the caller's unit; how many were posted."""
    query = (
        select(Schedule)
        .where(Schedule.active.is_(True), Schedule.mode == "post")
        .order_by(Schedule.id)
    )
    posted = 0
    for row in db.session.execute(query).scalars().all():
        occurrences = to_post(row, today, POST_MAX)[:POST_MAX]
        if occurrences and _postable(row):
            posted += _post(row, occurrences)
    return posted
