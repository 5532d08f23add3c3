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
window's two ends from account_day_balances. Each row (one account, one month or
one day) is added into its period here, so no entry is read and the statement does
not grow with the number of periods.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import date, timedelta

from sqlalchemy import Date, bindparam, text

from ...extensions import db
from .. import clock
from ..errors import BadRequestError
from . import reports, validate

# Months per period of each interval.
INTERVALS = {"month": 1, "quarter": 3, "year": 12}
DEFAULT_INTERVAL = "month"
MAX_PERIODS = 600
_WORTH = frozenset({"asset", "liability"})  # assets minus liabilities: their raw sums added

# The window's pieces, row by row (not summed: each row goes into its own period).
_PIECES = text(
    """
        SELECT account_id, month AS at, cents FROM account_month_balances
        WHERE month >= :month_lo AND month < :month_hi
        UNION ALL
        SELECT account_id, day AS at, cents FROM account_day_balances
        WHERE day >= :head_lo AND day < :head_hi
        UNION ALL
        SELECT account_id, day AS at, cents FROM account_day_balances
        WHERE day >= :tail_lo AND day <= :tail_hi
        """
).bindparams(
    *(
        bindparam(name, type_=Date())
        for name in ("month_lo", "month_hi", "head_lo", "head_hi", "tail_lo", "tail_hi")
    )
)


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


def series(from_, to, interval) -> dict:
    """GET /reports/series: every account's change per period and the per-period totals."""
    interval = interval_of(interval)
    start, end = window_of(from_, to)
    periods = periods_of(start, end, interval)
    opening = reports.account_sums(None, start - timedelta(days=1))
    row_of = {account_id: i for i, (account_id, *_rest) in enumerate(opening)}
    raw = [[0] * len(periods) for _ in opening]
    pieces = reports.window_pieces(start, end)
    period_at = _period_at(periods, pieces)
    rows = db.session.connection().execute(_PIECES, pieces).all()
    for account_id, at, cents in rows:
        i = row_of.get(account_id)
        if i is not None:  # an account made after the first statement: not in this answer
            raw[i][period_at[at]] += cents
    accounts = []
    income = [0] * len(periods)
    expenses = [0] * len(periods)
    worth_change = [0] * len(periods)
    worth = 0
    for (account_id, name, kind, before), changes in zip(opening, raw, strict=True):
        sign = reports.sign_for(kind)
        shown = [sign * cents for cents in changes]
        accounts.append({"account_id": account_id, "name": name, "kind": kind, "cents": shown})
        if kind == "income":
            income = [a + b for a, b in zip(income, shown, strict=True)]
        elif kind == "expense":
            expenses = [a + b for a, b in zip(expenses, shown, strict=True)]
        elif kind in _WORTH:
            worth += before
            worth_change = [a + b for a, b in zip(worth_change, changes, strict=True)]
    net_worth = []
    for change in worth_change:
        worth += change
        net_worth.append(worth)
    return {
        "interval": interval,
        "periods": [{"from": lo.isoformat(), "to": hi.isoformat()} for lo, hi in periods],
        "accounts": accounts,
        "total_income_cents": income,
        "total_expenses_cents": expenses,
        "net_cents": [a - b for a, b in zip(income, expenses, strict=True)],
        "net_worth_cents": net_worth,
    }
