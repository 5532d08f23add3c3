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
rule dates come from schedules.recurrence (dateutil), as the listing's do.
"""

from __future__ import annotations

from datetime import date, timedelta

from sqlalchemy import select

from ...extensions import db
from ...models import Account, Schedule, ScheduleOccurrence
from .. import clock
from ..errors import BadRequestError
from . import reports, schedules, validate
from .schedule_rules import SHIFT_MAX

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
    rows = list(
        db.session.execute(
            select(Schedule)
            .where(Schedule.account_id == account.id, Schedule.active.is_(True))
            .order_by(Schedule.id)
        ).scalars()
    )
    stored: dict[tuple[int, date], str] = {}
    if rows:
        latest = last + timedelta(SHIFT_MAX)
        found = db.session.execute(
            select(
                ScheduleOccurrence.schedule_id,
                ScheduleOccurrence.occurs_on,
                ScheduleOccurrence.status,
            )
            .join(Schedule, Schedule.id == ScheduleOccurrence.schedule_id)
            .where(
                Schedule.account_id == account.id,
                Schedule.active.is_(True),
                ScheduleOccurrence.occurs_on <= latest,
            )
        )
        stored = {(r[0], r[1]): r[2] for r in found}
    counted = []
    for row in rows:
        schedule_id, amount = int(row.id), sign * int(row.amount_cents)
        for occurs_on, due in schedules.recurrence(row).due_between(
            row.starts_on - timedelta(SHIFT_MAX), last
        ):
            if stored.get((schedule_id, occurs_on), "open") != "open":
                continue
            counted.append((max(due, today), schedule_id, occurs_on, due, row.name, amount))
    counted.sort(key=lambda c: (c[0], c[1], c[2]))
    balance = sign * _balance_today(account.id, today)
    running = balance
    lowest_on, lowest = today, balance
    items = []
    for on, schedule_id, occurs_on, due, name, amount in counted:
        running += amount
        items.append(
            {
                "due_on": due.isoformat(),
                "schedule_id": schedule_id,
                "name": name,
                "occurs_on": occurs_on.isoformat(),
                "amount_cents": amount,
                "balance_cents": running,
            }
        )
        if running < lowest:
            lowest_on, lowest = on, running
    return {
        "account_id": int(account.id),
        "from": today.isoformat(),
        "to": last.isoformat(),
        "balance_cents": balance,
        "items": items,
        "end_balance_cents": running,
        "lowest": {"on": lowest_on.isoformat(), "balance_cents": lowest},
    }
