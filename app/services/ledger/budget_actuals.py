"""Budgets against actuals: the twelve months a budget plans, the actual figures it is
compared with, and the income statement against a budget (docs/ledger.md, "Budgets").
The plan itself (budgets, lines, approval) is budgets.py, which builds on this module.

- the calendar: a budget's twelve months run from `starts_on` (the first day of a
  month) to ends_on() (the last day of the twelfth month); add_months, month_index;
- actual_months: last year's sign-adjusted actuals (reports.sign_for) per income and
  expense account, month by month, for a budget based on actuals;
- approved: the budget an assistant means without an id is the approved budget
  with the latest approved_at (then the highest id) whose twelve months contain
  the whole window;
- income_statement: the statement of reports.income_statement with each line's
  budget_cents (the budget's months inside the window, summed) and variance_cents,
  positive when better than the plan (income: actual - budget; expenses:
  budget - actual);
- requested_income_statement: the one dispatch between the two statements, for
  GET /reports/income-statement, the income_statement tool and the audit pack.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from sqlalchemy import bindparam, select

from ...extensions import db
from ...models import MONTH_COLUMNS, Account, AccountDayBalance, AccountMonthBalance, Budget
from ...models import BudgetLine as Line
from ..errors import BadRequestError
from . import reports, validate

MONTHS = 12
BUDGET_KINDS = ("income", "expense")
APPROVED = "approved"
_ID_TEXT = re.compile(r"^[0-9]{1,19}$")
_BUDGETS = Budget.__table__
_BUDGET_LINES = Line.__table__
_ACCOUNTS = Account.__table__
_MONTH_BALANCES = AccountMonthBalance.__table__

_ACTUALS = (
    select(
        _MONTH_BALANCES.c.account_id,
        _ACCOUNTS.c.name,
        _ACCOUNTS.c.kind,
        _MONTH_BALANCES.c.month,
        _MONTH_BALANCES.c.cents,
    )
    .join(_ACCOUNTS, _ACCOUNTS.c.id == _MONTH_BALANCES.c.account_id)
    .where(
        _ACCOUNTS.c.kind.in_(BUDGET_KINDS),
        _MONTH_BALANCES.c.month >= bindparam("first"),
        _MONTH_BALANCES.c.month < bindparam("starts_on"),
    )
    .order_by(_ACCOUNTS.c.kind, _ACCOUNTS.c.name, _MONTH_BALANCES.c.month)
)


# --- the twelve months -----------------------------------------------------------------


def add_months(day: date, months: int) -> date:
    """The first day of the month `months` after day's month (day is a first of month)."""
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def ends_on(starts_on: date) -> date:
    """The last day of the twelfth month from starts_on."""
    return add_months(starts_on, MONTHS) - timedelta(days=1)


def month_index(starts_on: date, day: date) -> int:
    """0 for the month starting on starts_on, 11 for the twelfth."""
    return (day.year - starts_on.year) * 12 + day.month - starts_on.month


def _is_month_end(day: date) -> bool:
    return (day + timedelta(days=1)).day == 1


# --- last year's actuals ----------------------------------------------------------------


def actual_months(starts_on: date) -> list[dict]:
    """A line {account_id, account_name, months} for every income and expense account
    with any entry in the twelve months that end the day before starts_on, each month
    that month's sign-adjusted actual; ordered as GET /accounts orders accounts.

    Read from account_month_balances (twelve rows per account at most), never the
    entries. A month row may hold 0 after a deletion, so an account whose rows in the
    year are all 0 is kept only when an entry of it really lies on one of its days.
    """
    first = add_months(starts_on, -MONTHS)
    rows = db.session.connection().execute(_ACTUALS, {"first": first, "starts_on": starts_on})
    lines: dict[int, dict] = {}  # in the query's (GET /accounts') order
    active: set[int] = set()
    for account_id, name, kind, first_day, cents in rows:
        line = lines.setdefault(
            account_id, {"account_id": account_id, "account_name": name, "months": [0] * MONTHS}
        )
        shown = reports.sign_for(kind) * int(cents)
        if not validate.INT64_MIN <= shown <= validate.INT64_MAX:
            raise BadRequestError(
                "'based_on': an actual monthly figure is out of range for a signed 64-bit integer"
            )
        line["months"][month_index(first, first_day)] = shown
        if cents:
            active.add(account_id)
    undecided = set(lines) - active
    if undecided:
        active |= _with_entries(undecided, first, starts_on - timedelta(days=1))
    return [line for account_id, line in lines.items() if account_id in active]


def _with_entries(account_ids: set[int], first: date, last: date) -> set[int]:
    """Those of account_ids with an entry dated in [first, last] (through the days
    account_day_balances holds for them, so no account's whole history is scanned)."""
    from ...models import Entry, Transaction

    day = AccountDayBalance
    has_entry = (
        select(Entry.id)
        .join(Transaction, Transaction.id == Entry.transaction_id)
        .where(Entry.account_id == day.account_id, Transaction.occurred_on == day.day)
        .exists()
    )
    rows = db.session.execute(
        select(day.account_id)
        .where(day.account_id.in_(account_ids), day.day >= first, day.day <= last, has_entry)
        .distinct()
    )
    return {row[0] for row in rows}


# --- the income statement against a budget ----------------------------------------------


def selector(value) -> int | str | None:
    """The `budget` argument: None when absent, "approved", or a budget id (decimal text,
    or a JSON integer from the tool)."""
    if value is None or value == "":
        return None
    if value == APPROVED:
        return APPROVED
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _ID_TEXT.match(value):
        return int(value)
    raise BadRequestError("'budget' must be a budget's id or \"approved\"")


def _month_window(from_, to) -> tuple[date, date]:
    start, end = validate.required_window(from_, to)
    if start.day != 1:
        raise BadRequestError(
            "'from' must be a first day (YYYY-MM-01) when comparing with a budget: a "
            "budget plans whole months"
        )
    if not _is_month_end(end):
        raise BadRequestError(
            "'to' must be a last day (like 2027-03-31 or 2027-02-28) when comparing with a "
            "budget, which plans whole months"
        )
    return start, end


# The comparison's one read, run without the ORM: the budget (by id, or the approved
# one covering the window) with its lines, one indexed row and one index range
# (budget_lines' primary key) in one round trip beside the statement's own.
# A row: the budget's id, name and starts_on, a line's account_id (None when the
# budget has no line), then that line's twelve months.
_LEADING = (_BUDGETS.c.id, _BUDGETS.c.name, _BUDGETS.c.starts_on, _BUDGET_LINES.c.account_id)
_FIRST_MONTH = len(_LEADING)  # a row's index of its first month's figure
_WITH_LINES = select(*_LEADING, *[_BUDGET_LINES.c[n] for n in MONTH_COLUMNS]).outerjoin(
    _BUDGET_LINES, _BUDGET_LINES.c.budget_id == _BUDGETS.c.id
)
_BUDGET_BY_ID = _WITH_LINES.where(_BUDGETS.c.id == bindparam("id"))
_APPROVED_COVERING = _WITH_LINES.where(
    _BUDGETS.c.id
    == (
        select(_BUDGETS.c.id)
        .where(
            _BUDGETS.c.approved_at.is_not(None),
            _BUDGETS.c.starts_on <= bindparam("start"),
            _BUDGETS.c.starts_on >= bindparam("earliest"),
        )
        .order_by(_BUDGETS.c.approved_at.desc(), _BUDGETS.c.id.desc())
        .limit(1)
        .scalar_subquery()
    )
)


def _chosen(choice: int | str, start: date, end: date) -> tuple[dict, dict[int, int]]:
    """The budget the statement is compared with ({id, name}) and its figures for the
    window: {account_id: the budget's months inside [start, end], summed}."""
    connection = db.session.connection()
    if choice == APPROVED:
        # The approved budget with the latest approved_at, then the highest id, whose
        # twelve months contain [start, end].
        earliest = add_months(end.replace(day=1), -(MONTHS - 1))
        rows = connection.execute(_APPROVED_COVERING, {"start": start, "earliest": earliest}).all()
        if not rows:
            raise BadRequestError(
                f"'budget': no approved budget covers {start.isoformat()} to {end.isoformat()}"
            )
    else:
        assert isinstance(choice, int)
        rows = []
        if validate.id_in_range(choice):
            rows = connection.execute(_BUDGET_BY_ID, {"id": choice}).all()
        if not rows:
            raise BadRequestError(f"'budget': no such budget ({choice})")
    budget_id, name, starts_on = rows[0].id, rows[0].name, rows[0].starts_on
    last = ends_on(starts_on)
    for key, day in (("from", start), ("to", end)):
        if not starts_on <= day <= last:
            raise BadRequestError(
                f"'{key}' must lie inside budget {budget_id}'s months "
                f"({starts_on.isoformat()} to {last.isoformat()})"
            )
    first_month = _FIRST_MONTH + month_index(starts_on, start)
    last_month = _FIRST_MONTH + month_index(starts_on, end)
    figures = {
        row.account_id: sum(row[first_month : last_month + 1])
        for row in rows
        if row.account_id is not None
    }
    return {"id": budget_id, "name": name}, figures


def income_statement(from_, to, choice: int | str) -> dict:
    """The income statement against a budget (choice: selector()'s id or "approved"):
    each line and total gains its budget and variance, positive when better than plan."""
    start, end = _month_window(from_, to)
    budget, figures = _chosen(choice, start, end)
    return reports.income_statement(start, end, budget=budget, budget_cents=figures)


def requested_income_statement(
    from_,
    to,
    budget,
    *,
    window: Callable[[Any, Any], tuple[date | None, date | None]] = validate.window,
    plain_if_refused: bool = False,
) -> dict:
    """The income statement of [from_, to]: against the budget `budget` names (selector:
    an id or "approved"), else the plain statement of window(from_, to) (the tool asks
    validate.required_window). plain_if_refused (the audit pack): a budget that cannot
    be compared (none approved covers the window, not whole months) gives the plain
    statement instead of its 400."""
    choice = selector(budget)
    if choice is not None:
        try:
            return income_statement(from_, to, choice)
        except BadRequestError:
            if not plain_if_refused:
                raise
    start, end = window(from_, to)
    return reports.income_statement(start, end)
