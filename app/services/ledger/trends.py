"""The books at a glance: GET /reports/series, every account's change per period
(docs/ledger.md, "Trends and comparisons").

A window [from, to] (default: the twelve whole months that end with the current
month, from the app's clock) is cut into the calendar months, quarters or years it
touches, the first and the last cut to `from` and `to`. Per period: each account's
change, sign-adjusted as reports sign it (reports.sign_for); the income statement's
three totals of that period; and the net worth (the balance sheet's assets minus
liabilities) as of the period's last day.

Speed: two statements, whatever the number of periods. reports.account_sums before
`from` (the opening balances, and the accounts in GET /accounts order), then the
window's pieces exactly as account_sums reads them (reports.window_pieces): the
whole months from account_month_balances, the days of the partial months at the
window's two ends from account_day_balances, packed one row per month or day
(_PIECES). Each figure (one account, one month or one day) is added into its period
here, so no entry is read and the statement does not grow with the number of periods.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import date, timedelta
from itertools import accumulate
from operator import add, itemgetter, neg, sub

import orjson
from sqlalchemy import Date, bindparam, text

from ...extensions import db
from ...store import dialect
from .. import clock
from ..errors import BadRequestError
from . import reports, validate

# Months per period of each interval.
INTERVALS = {"month": 1, "quarter": 3, "year": 12}
DEFAULT_INTERVAL = "month"
MAX_PERIODS = 600
_WORTH = frozenset({"asset", "liability"})  # assets minus liabilities: their raw sums added

# The window's pieces, packed: one row per month (per day in the partial months) with
# the ids of the accounts that have a row then and their cents, as two comma-separated
# lists in the same order. Both drivers hand rows (and PostgreSQL arrays) to Python at a
# cost that dwarfs the scan, so 40 accounts over 120 months come back as 120 rows of
# text, not 4,800 rows. Not summed: no SQLite integer overflow to fall back from;
# Python adds each figure into its period.
_PACKED = """
    SELECT month AS at, {ids}, {cents} FROM account_month_balances
    WHERE month >= :month_lo AND month < :month_hi GROUP BY month
    UNION ALL
    SELECT day, {ids}, {cents} FROM account_day_balances
    WHERE day >= :head_lo AND day < :head_hi GROUP BY day
    UNION ALL
    SELECT day, {ids}, {cents} FROM account_day_balances
    WHERE day >= :tail_lo AND day <= :tail_hi GROUP BY day
"""
_LISTS = {
    "sqlite": {"ids": "group_concat(account_id)", "cents": "group_concat(cents)"},
    # One aggregation step feeds each row to both aggregates in turn: the lists align.
    "postgresql": {
        "ids": "string_agg(account_id::text, ',')",
        "cents": "string_agg(cents::text, ',')",
    },
}
_PIECES = {
    name: text(_PACKED.format(**lists)).bindparams(
        *(
            bindparam(bound, type_=Date())
            for bound in ("month_lo", "month_hi", "head_lo", "head_hi", "tail_lo", "tail_hi")
        )
    )
    for name, lists in _LISTS.items()
}


def _month_index(day: date) -> int:
    return day.year * 12 + day.month - 1


def _first_of(index: int) -> date:
    """The first day of the month with _month_index() index."""
    return date(index // 12, index % 12 + 1, 1)


def interval_of(value) -> str:
    """The `interval` argument: month (also when absent or empty), quarter or year."""
    if value is None or value == "":
        return DEFAULT_INTERVAL
    if value not in INTERVALS:
        raise BadRequestError("'interval' must be one of month, quarter or year")
    return value


def window_of(from_, to) -> tuple[date, date]:
    """The series' window: `to` left out is the last day of the current month, `from`
    left out the first day of the eleventh month before `to`'s month."""
    start = validate.optional_date("from", from_)
    end = validate.optional_date("to", to)
    if end is None:
        end = _first_of(_month_index(clock.today()) + 1) - timedelta(days=1)
    if start is None:
        start = _first_of(_month_index(end) - 11)
    if end < start:
        raise BadRequestError("'to' must not be before 'from'")
    return start, end


def periods_of(start: date, end: date, interval: str) -> list[tuple[date, date]]:
    """The calendar periods [start, end] touches, the first and last cut to the window;
    more than MAX_PERIODS: 400 naming `interval`."""
    step = INTERVALS[interval]
    first = _month_index(start) // step
    last = _month_index(end) // step
    count = last - first + 1
    if count > MAX_PERIODS:
        raise BadRequestError(
            f"'interval': {start.isoformat()} to {end.isoformat()} is {count} periods of a "
            f"{interval}; at most {MAX_PERIODS} (choose a longer interval or a shorter window)"
        )
    periods = []
    for number in range(first, last + 1):
        lo = _first_of(number * step)
        hi = _first_of((number + 1) * step) - timedelta(days=1)
        periods.append((max(lo, start), min(hi, end)))
    return periods


def _period_at(periods: list[tuple[date, date]], pieces: dict) -> dict:
    """Every month and day a row of _PIECES can carry, mapped to its period's index: the
    months in [month_lo, month_hi) and the days of the two partial pieces. Keyed by the
    date and by its ISO text (SQLite hands the column back as text, PostgreSQL as a
    date), so no row's date is parsed or compared, only looked up."""
    starts = [lo for lo, _ in periods]
    keys: list[date] = []
    month, month_hi = pieces["month_lo"], pieces["month_hi"]
    while month < month_hi:
        keys.append(month)
        month = _first_of(_month_index(month) + 1)
    day, head_hi = pieces["head_lo"], pieces["head_hi"]
    while day < head_hi:
        keys.append(day)
        day += timedelta(days=1)
    day, tail_hi = pieces["tail_lo"], pieces["tail_hi"]
    while day <= tail_hi:
        keys.append(day)
        day += timedelta(days=1)
    found: dict[date | str, int] = {}
    for key in keys:
        found[key] = found[key.isoformat()] = bisect_right(starts, key) - 1
    return found


def _changes(opening: list[tuple], periods: list, pieces: dict) -> list[list[int]]:
    """Each account's raw change per period (rows in opening's order), from _PIECES.

    A row of _PIECES lists the accounts with a figure that month or day. The usual
    row (on big books, every month) lists every account: its figures are then put in
    account order by one itemgetter built once per list of ids, and added to the
    period's column at C speed; any other row is added figure by figure."""
    count = len(opening)
    row_of = {str(account_id): row for row, (account_id, *_rest) in enumerate(opening)}
    columns = [[0] * count for _ in periods]  # per period, per account
    period_at = _period_at(periods, pieces)
    in_order: dict[str, itemgetter | None] = {}  # a row's ids (the text) -> its gatherer
    connection = db.session.connection()
    for at, ids_text, cents_text in connection.execute(_PIECES[dialect.name(connection)], pieces):
        if ids_text not in in_order:
            ids = ids_text.split(",")
            in_order[ids_text] = _gatherer([row_of.get(i) for i in ids], count)
        gather = in_order[ids_text]
        period = period_at[at]
        column = columns[period]
        if gather is not None:
            figures = gather(_integers(cents_text))
            columns[period] = list(map(add, column, figures)) if any(column) else list(figures)
            continue
        ids, cents = ids_text.split(","), cents_text.split(",")
        for account_id, figure in zip(ids, cents, strict=True):
            target = row_of.get(account_id)
            if target is not None:  # an account made after the first statement: not here
                column[target] += int(figure)
    return [list(changes) for changes in zip(*columns, strict=True)] if count else []


def _integers(listed: str) -> list[int]:
    """The integers of a comma-separated list, parsed at C speed by orjson (each is a
    BIGINT column's value, so it fits the 64 bits orjson reads)."""
    return orjson.loads(f"[{listed}]")


def _gatherer(rows: list[int | None], count: int) -> itemgetter | None:
    """itemgetter putting a row's figures in account order when its ids are every
    account once (rows: each figure's account row); None otherwise."""
    known = [row for row in rows if row is not None]
    if count < 2 or len(rows) != count or len(known) != count or len(set(known)) != count:
        return None
    return itemgetter(*sorted(range(count), key=known.__getitem__))


def series(from_, to, interval) -> dict:
    """GET /reports/series: every account's change per period and the per-period totals."""
    interval = interval_of(interval)
    start, end = window_of(from_, to)
    periods = periods_of(start, end, interval)
    opening = reports.account_sums(None, start - timedelta(days=1))
    raw = _changes(opening, periods, reports.window_pieces(start, end))
    accounts = []
    zero = [0] * len(periods)
    income, expenses, worth_changes = [zero], [zero], [zero]
    worth = 0
    for (account_id, name, kind, before), changes in zip(opening, raw, strict=True):
        shown = changes if reports.sign_for(kind) == 1 else list(map(neg, changes))
        accounts.append({"account_id": account_id, "name": name, "kind": kind, "cents": shown})
        if kind == "income":
            income.append(shown)
        elif kind == "expense":
            expenses.append(shown)
        elif kind in _WORTH:
            worth += before
            worth_changes.append(changes)
    total_income = list(map(sum, zip(*income, strict=True)))
    total_expenses = list(map(sum, zip(*expenses, strict=True)))
    return {
        "interval": interval,
        "periods": [{"from": lo.isoformat(), "to": hi.isoformat()} for lo, hi in periods],
        "accounts": accounts,
        "total_income_cents": total_income,
        "total_expenses_cents": total_expenses,
        "net_cents": list(map(sub, total_income, total_expenses)),
        "net_worth_cents": list(
            accumulate(map(sum, zip(*worth_changes, strict=True)), initial=worth)
        )[1:],
    }
