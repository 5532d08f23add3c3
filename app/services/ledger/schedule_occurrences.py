"""A schedule's occurrences (docs/schedules.md, "Occurrences"): the listing.

An occurrence is a rule date (`occurs_on`, its key) on or after the schedule's
`starts_on`; `due_on` is that date after the weekend rule. Only occurrences that are no
longer open are stored (schedule_occurrences: met, posted, skipped; `open` for one
reopened, which the service never posts again); every other one is open, and its status
is computed from today: `upcoming` (due_on after today), `due` (today is due_on or at
most window_days after it), `overdue` (later still). An inactive schedule's open
occurrences are not listed.
"""

from __future__ import annotations

from datetime import date, timedelta

from sqlalchemy import select

from ...extensions import db
from ...models import Schedule, ScheduleOccurrence
from .. import clock
from ..errors import BadRequestError
from . import schedules, validate
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


def list_occurrences(args) -> dict:
    """GET /schedules/occurrences: {items} by due_on, then schedule_id (then occurs_on)."""
    first, last = _window(args)
    schedule_id = validate.query_integer("schedule_id", args.get("schedule_id"))
    wanted = args.get("status")
    if wanted is not None and wanted not in STATUSES:
        raise BadRequestError("'status' must be one of: " + ", ".join(STATUSES))
    query = select(Schedule).order_by(Schedule.id)
    stored_query = select(
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
        schedules.row(schedule_id)  # 404 when unknown
        query = query.where(Schedule.id == schedule_id)
        stored_query = stored_query.where(ScheduleOccurrence.schedule_id == schedule_id)
    stored = {(r[0], r[1]): (r[2], r[3]) for r in db.session.execute(stored_query)}
    today = clock.today()
    items = []
    for row in db.session.execute(query).scalars():
        for occurs_on, due in schedules.recurrence(row).due_between(first, last):
            kept = stored.get((row.id, occurs_on))
            if not row.active and (kept is None or kept[0] == "open"):
                continue
            one = item(row, occurs_on, due, kept, today)
            if wanted is None or one["status"] == wanted:
                items.append(one)
    items.sort(key=lambda i: (i["due_on"], i["schedule_id"], i["occurs_on"]))
    return {"items": items}
