"""The forecast (docs/schedules.md, "The forecast"): an asset or liability account's
balance today and what its schedules' open occurrences will make of it, up to `to`.

`balance_cents` is the account's balance today, sign-adjusted as the balance sheet signs
it (reports.sign_for). `items` are the open occurrences of the active schedules whose
`account_id` is the account, due up to `to`; one overdue or due (due_on today or
earlier) is counted today, its `due_on` kept as it is. They come in the order of the
date counted, then `schedule_id` (then `occurs_on`), each `amount_cents` sign-adjusted
likewise and followed by the running balance. `lowest` is the least of today's balance
and the running balances, the earliest on a tie.

One query for the schedules, one for their stored occurrences, one for the balance; the
rule dates come from schedule_rules.due_in (dateutil, kept), as the listing's do.
"""

from __future__ import annotations

from datetime import date, timedelta
from operator import itemgetter

from sqlalchemy import select

from ...extensions import db
from ...models import Account, Schedule, ScheduleOccurrence
from .. import clock
from ..errors import BadRequestError
from . import reports, schedule_rules, schedules, validate
from .schedule_rules import SHIFT_MAX

_COLUMNS = (
    Schedule.id,
    Schedule.name,
    Schedule.amount_cents,
    Schedule.rrule,
    Schedule.starts_on,
    Schedule.weekend,
)
DEFAULT_DAYS = 90  # `to` left out: this many days after today
MAX_DAYS = 1830  # `to` at most this many days after today


def _account(value) -> Account:
    """The asked account: required, an existing asset or liability account (400 naming
    account_id otherwise)."""
    if value is None or value == "":
        raise BadRequestError("'account_id' is required: an asset or liability account")
    account_id = validate.query_integer("account_id", value)
    assert account_id is not None
    account = validate.get_row(Account, account_id)
    if account is None:
        raise BadRequestError(f"'account_id': there is no account {account_id}")
    if account.kind not in schedules.SEEN_KINDS:
        raise BadRequestError(
            f"'account_id' must be an asset or liability account; account {account_id}"
            f" is {account.kind}"
        )
    return account


def _to(value, today: date) -> date:
    last = validate.optional_date("to", value)
    if last is None:
        return today + timedelta(DEFAULT_DAYS)
    if last < today:
        raise BadRequestError(f"'to' must not be before today ({today.isoformat()})")
    if (last - today).days > MAX_DAYS:
        raise BadRequestError(f"'to' must be at most {MAX_DAYS} days after today")
    return last


def _balance_today(account_id: int, today: date) -> int:
    """The account's raw balance up to and including today (the derived tables)."""
    for found_id, _, _, raw in reports.account_sums(None, today):
        if found_id == account_id:
            return raw
    return 0


def forecast(args) -> dict:
    """GET /reports/forecast?account_id=&to=: the account's balance over its schedules."""
    account = _account(args.get("account_id"))
    today = clock.today()
    last = _to(args.get("to"), today)
    sign = reports.sign_for(account.kind)
    rows = (
        db.session.connection()
        .execute(
            select(*_COLUMNS)
            .where(Schedule.account_id == account.id, Schedule.active.is_(True))
            .order_by(Schedule.id)
        )
        .all()
    )
    stored = _closed(account.id, last) if rows else {}
    counted = _counted(rows, stored, sign, today, last)
    balance = sign * _balance_today(account.id, today)
    running = balance
    lowest_key, lowest = None, balance
    items = []
    for key, due_text, schedule_id, occurs_text, name, amount in counted:
        running += amount
        items.append(
            {
                "due_on": due_text,
                "schedule_id": schedule_id,
                "name": name,
                "occurs_on": occurs_text,
                "amount_cents": amount,
                "balance_cents": running,
            }
        )
        if running < lowest:
            lowest_key, lowest = key, running
    lowest_on = today if lowest_key is None else date.fromordinal(lowest_key >> 51)
    return {
        "account_id": int(account.id),
        "from": today.isoformat(),
        "to": last.isoformat(),
        "balance_cents": balance,
        "items": items,
        "end_balance_cents": running,
        "lowest": {"on": lowest_on.isoformat(), "balance_cents": lowest},
    }


def _closed(account_id: int, last: date) -> dict[int, set[date]]:
    """schedule id -> its occurrences up to `last` (and the weekend shift) that are not
    open, of the account's active schedules: one query."""
    stored: dict[int, set[date]] = {}
    found = db.session.connection().execute(
        select(ScheduleOccurrence.schedule_id, ScheduleOccurrence.occurs_on)
        .join(Schedule, Schedule.id == ScheduleOccurrence.schedule_id)
        .where(
            Schedule.account_id == account_id,
            Schedule.active.is_(True),
            ScheduleOccurrence.occurs_on <= last + timedelta(SHIFT_MAX),
            ScheduleOccurrence.status != "open",
        )
    )
    for schedule_id, occurs_on in found:
        stored.setdefault(schedule_id, set()).add(occurs_on)
    return stored


def _counted(rows, stored: dict[int, set[date]], sign: int, today: date, last: date) -> list:
    """The open occurrences of the schedules (rows) due up to `last`, as (sort key, due_on
    text, schedule id, occurs_on text, name, signed amount), in the order they count.

    Speed (docs/schedules.md, "Speed"): each date's text and day number made once (the
    schedules share dates); each item sorted by one integer: the day counted, then the
    schedule id, then occurs_on's day number (below 2**20 until the year 2200)."""
    texts = schedule_rules.DayTexts()
    today_day = today.toordinal()
    counted: list[tuple[int, str, int, str, str, int]] = []
    for row in rows:
        schedule_id, amount, name = int(row.id), sign * int(row.amount_cents), row.name
        closed = stored.get(schedule_id, ())
        first = row.starts_on - timedelta(SHIFT_MAX)
        for occurs_on, due in schedule_rules.due_in(row, first, last):
            if occurs_on in closed:
                continue
            due_text, due_day = texts[due]
            occurs_text, occurs_day = texts[occurs_on]
            on = max(due_day, today_day)
            key = (on << 51) | (schedule_id << 20) | occurs_day
            counted.append((key, due_text, schedule_id, occurs_text, name, amount))
    counted.sort(key=itemgetter(0))
    return counted
