"""A schedule's occurrences (docs/schedules.md, "Occurrences"): the listing and the
actions on one (match, skip, post, reopen).

An occurrence is a rule date (`occurs_on`, its key) on or after the schedule's
`starts_on`; `due_on` is that date after the weekend rule. Only occurrences that are no
longer open are stored (schedule_occurrences: met, posted, skipped; `open` for one
reopened, which the service never posts again); every other one is open, and its status
is computed from today: `upcoming` (due_on after today), `due` (today is due_on or at
most window_days after it), `overdue` (later still). An inactive schedule's open
occurrences are not listed.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from operator import itemgetter

from sqlalchemy import select

from ...extensions import db
from ...models import Entry, Schedule, ScheduleOccurrence, Transaction
from ...store import dialect
from .. import clock
from ..errors import BadRequestError, ConflictError, NotFoundError
from . import audit, schedule_posting, schedule_rules, schedules, validate
from .schedule_rules import SHIFT_MAX

WINDOW_BEFORE = 366  # the listing's default window: from this many days before today
WINDOW_AFTER = 31  # to this many days after it
WINDOW_MAX = 3660  # days from `from` to `to` at most
OPEN_STATUSES = ("upcoming", "due", "overdue")
STATUSES = (*OPEN_STATUSES, "met", "posted", "skipped")


def open_status(due_on: date, window_days: int, today: date) -> str:
    """An open occurrence's status today."""
    if due_on > today:
        return "upcoming"
    if (today - due_on).days <= window_days:
        return "due"
    return "overdue"


def item(row, occurs_on: date, due_on: date, stored, today: date) -> dict:
    """One occurrence as served; `stored` its (status, transaction_id) row or None."""
    status, tx_id = (None, None) if stored is None else stored
    if status in (None, "open"):
        status, tx_id = open_status(due_on, row.window_days, today), None
    return {
        "schedule_id": int(row.id),
        "name": row.name,
        "occurs_on": occurs_on.isoformat(),
        "due_on": due_on.isoformat(),
        "amount_cents": int(row.amount_cents),
        "account_id": int(row.account_id),
        "counter_account_id": int(row.counter_account_id),
        "status": status,
        "transaction_id": None if tx_id is None else int(tx_id),
    }


def _window(args) -> tuple[date, date]:
    today = clock.today()
    first = validate.optional_date("from", args.get("from")) or today - timedelta(WINDOW_BEFORE)
    last = validate.optional_date("to", args.get("to")) or today + timedelta(WINDOW_AFTER)
    if last < first:
        raise BadRequestError("'to' must not be before 'from'")
    if (last - first).days > WINDOW_MAX:
        raise BadRequestError(f"'to' must be at most {WINDOW_MAX} days after 'from'")
    return first, last


_LISTED = (
    Schedule.id,
    Schedule.name,
    Schedule.amount_cents,
    Schedule.account_id,
    Schedule.counter_account_id,
    Schedule.window_days,
    Schedule.active,
    Schedule.rrule,
    Schedule.starts_on,
    Schedule.weekend,
)


def list_occurrences(args) -> dict:
    """GET /schedules/occurrences: {items} by due_on, then schedule_id (then occurs_on)."""
    first, last = _window(args)
    schedule_id = validate.query_integer("schedule_id", args.get("schedule_id"))
    wanted = args.get("status")
    if wanted is not None and wanted not in STATUSES:
        raise BadRequestError("'status' must be one of: " + ", ".join(STATUSES))
    query = select(*_LISTED).order_by(Schedule.id)
    if schedule_id is not None:
        schedules.row(schedule_id)  # 404 when unknown
        query = query.where(Schedule.id == schedule_id)
    stored = _stored(first, last, schedule_id)
    today = clock.today()
    # Speed (docs/schedules.md, "Speed"): each date's text and day number made once (the
    # schedules share dates), each item sorted by one integer: due_on's day number,
    # then the schedule id, then occurs_on (at most SHIFT_MAX days from due_on).
    texts = schedule_rules.DayTexts()
    found: list[tuple[int, dict]] = []
    for row in db.session.connection().execute(query):
        sid, window, active = int(row.id), int(row.window_days), bool(row.active)
        kept_here = stored.get(sid)
        for occurs_on, due in schedule_rules.due_in(row, first, last):
            kept = None if kept_here is None else kept_here.get(occurs_on)
            if kept is None or kept[0] == "open":
                if not active:
                    continue
                status, tx_id = open_status(due, window, today), None
            else:
                status, tx_id = kept[0], int(kept[1]) if kept[1] is not None else None
            if wanted is not None and status != wanted:
                continue
            due_text, due_day = texts[due]
            occurs_text, occurs_day = texts[occurs_on]
            key = (due_day << 40) | (sid << 4) | (occurs_day - due_day + SHIFT_MAX)
            found.append((key, _listed(row, sid, occurs_text, due_text, status, tx_id)))
    found.sort(key=itemgetter(0))
    items = [one for _, one in found]
    return {"items": items}


def _stored(first: date, last: date, schedule_id: int | None) -> dict[int, dict[date, tuple]]:
    """schedule id -> occurs_on -> (status, transaction_id) of the stored occurrences
    near the window (of one schedule, when given): one query."""
    query = select(
        ScheduleOccurrence.schedule_id,
        ScheduleOccurrence.occurs_on,
        ScheduleOccurrence.status,
        ScheduleOccurrence.transaction_id,
    ).where(
        ScheduleOccurrence.occurs_on.between(
            first - timedelta(SHIFT_MAX), last + timedelta(SHIFT_MAX)
        )
    )
    if schedule_id is not None:
        query = query.where(ScheduleOccurrence.schedule_id == schedule_id)
    stored: dict[int, dict[date, tuple]] = {}
    for r in db.session.connection().execute(query):
        stored.setdefault(r[0], {})[r[1]] = (r[2], r[3])
    return stored


def _listed(row, sid: int, occurs_text: str, due_text: str, status: str, tx_id) -> dict:
    """One item of the listing."""
    return {
        "schedule_id": sid,
        "name": row.name,
        "occurs_on": occurs_text,
        "due_on": due_text,
        "amount_cents": int(row.amount_cents),
        "account_id": int(row.account_id),
        "counter_account_id": int(row.counter_account_id),
        "status": status,
        "transaction_id": tx_id,
    }


# --- one occurrence and the actions on it ---------------------------------------------

ACTIONS = ("match", "skip", "post", "reopen")
CLOSED = ("met", "posted", "skipped")
_DAY = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


def stored_row(schedule_id: int, occurs_on: date) -> tuple | None:
    """The occurrence's stored (status, transaction_id), or None (never stored: open)."""
    found = db.session.execute(
        select(ScheduleOccurrence.status, ScheduleOccurrence.transaction_id).where(
            ScheduleOccurrence.schedule_id == schedule_id,
            ScheduleOccurrence.occurs_on == occurs_on,
        )
    ).first()
    return None if found is None else (found[0], found[1])


def keep(schedule_id: int, occurs_on: date, status: str, tx_id: int | None) -> None:
    """Store the occurrence's status (an INSERT, or an UPDATE of the row kept)."""
    values = {
        "schedule_id": schedule_id,
        "occurs_on": occurs_on,
        "status": status,
        "transaction_id": tx_id,
    }
    db.session.execute(
        dialect.upsert(ScheduleOccurrence, values, set_={"status": status, "transaction_id": tx_id})
    )


def occurrence_object(schedule_id: int, occurs_on: date, status: str, tx_id) -> dict:
    """The object of an occurrence's audit event: the occurrence as stored afterwards."""
    return {
        "occurrence": {
            "schedule_id": int(schedule_id),
            "occurs_on": occurs_on.isoformat(),
            "status": status,
            "transaction_id": None if tx_id is None else int(tx_id),
        }
    }


def _occurs_on(row, text: str) -> date:
    """The path's date, when the rule gives it (on or after starts_on); 404 otherwise."""
    missing = NotFoundError("no such occurrence: the schedule's rule does not give this date")
    if not _DAY.match(text):
        raise missing
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise missing from None
    if not validate.FIRST_YEAR <= day.year <= validate.LAST_YEAR:
        raise missing
    if not schedules.recurrence(row).gives(day):
        raise missing
    return day


def met_or_posted_by(tx_id: int) -> bool:
    """Whether the transaction meets, or was posted for, an occurrence."""
    return (
        db.session.execute(
            select(ScheduleOccurrence.schedule_id)
            .where(
                ScheduleOccurrence.transaction_id == tx_id,
                ScheduleOccurrence.status.in_(("met", "posted")),
            )
            .limit(1)
        ).first()
        is not None
    )


def _matched_transaction(row, value) -> int:
    """A person's `match`: a transaction with an entry on the schedule's account_id,
    whatever its amount, date and description (400 naming transaction_id otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequestError("'transaction_id' must be an integer: the transaction's id")
    if not validate.INT64_MIN <= value <= validate.INT64_MAX or (
        db.session.execute(select(Transaction.id).where(Transaction.id == value)).first() is None
    ):
        raise BadRequestError(f"'transaction_id': there is no transaction {value}")
    on_account = db.session.execute(
        select(Entry.id)
        .where(Entry.transaction_id == value, Entry.account_id == row.account_id)
        .limit(1)
    ).first()
    if on_account is None:
        raise BadRequestError(
            f"'transaction_id': transaction {value} has no entry on account {row.account_id}"
        )
    return value


def act(schedule_id: int, occurs_on_text: str, body, acting_user: int | None) -> dict:
    """POST /schedules/{id}/occurrences/{occurs_on}: match, skip, post or reopen one
    occurrence; 200 the occurrence as listed."""
    row = schedules.row(schedule_id, for_update=True)
    day = _occurs_on(row, occurs_on_text)
    if not isinstance(body, dict):
        raise BadRequestError("the body must be a JSON object")
    action = body.get("action")
    if action not in ACTIONS:
        raise BadRequestError("'action' must be one of: " + ", ".join(ACTIONS))
    due = schedules.due_on_of(row, day)
    kept = stored_row(row.id, day)
    is_open = row.active and (kept is None or kept[0] == "open")
    if action == "reopen":
        if kept is None or kept[0] not in CLOSED:
            raise ConflictError(f"the occurrence of {day.isoformat()} is open already")
        keep(row.id, day, "open", None)
        audit.record("occurrence.reopened", occurrence_object(row.id, day, "open", None))
        return item(row, day, due, ("open", None), clock.today())
    tx_id = None
    if action == "match":
        tx_id = _matched_transaction(row, body.get("transaction_id"))
    occurred_on = None
    if action == "post":
        occurred_on = validate.optional_date("occurred_on", body.get("occurred_on")) or due
    if not is_open:
        raise ConflictError(f"the occurrence of {day.isoformat()} is not open")
    if action == "match":
        assert tx_id is not None
        if met_or_posted_by(tx_id):
            raise ConflictError(
                f"transaction {tx_id} already meets, or was posted for, an occurrence"
            )
        keep(row.id, day, "met", tx_id)
        audit.record("occurrence.matched", occurrence_object(row.id, day, "met", tx_id))
        return item(row, day, due, ("met", tx_id), clock.today())
    if action == "skip":
        keep(row.id, day, "skipped", None)
        audit.record("occurrence.skipped", occurrence_object(row.id, day, "skipped", None))
        return item(row, day, due, ("skipped", None), clock.today())
    tx_id = schedule_posting.post_occurrence(row, day, occurred_on or due, acting_user)
    keep(row.id, day, "posted", tx_id)
    return item(row, day, due, ("posted", tx_id), clock.today())
