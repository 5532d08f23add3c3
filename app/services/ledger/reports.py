"""Reports: balances, income statement, balance sheet.

All three are built on account_sums(), THE one per-account SUM of amount_cents
over an optional inclusive date window, and sign_for(), THE one sign rule:
asset and expense balances are shown as the raw sum; liability, equity and
income balances are shown negated. Figures leave here already sign-adjusted;
clients must not flip them again.

Speed: account_sums() never scans the entries. It reads the derived tables
account_day_balances and account_month_balances (models/derived.py), which the
triggers of migration 0002 keep equal to the entries inside every write's own
database transaction; `ledger-service check` proves the equality on demand.

Balance sheet identity: the raw sums of all accounts total zero (every posting
balances), so assets = liabilities + equity + retained, where retained is
income minus expenses up to the date (profit is never closed into equity).
"""

from __future__ import annotations

from datetime import MAXYEAR, date, timedelta

from sqlalchemy import Date, bindparam, select, text
from sqlalchemy.exc import OperationalError

from ...extensions import db
from ...models import Account, Entry, Transaction
from .. import clock

_NEGATED = frozenset({"liability", "equity", "income"})


def sign_for(kind: str) -> int:
    """+1 for asset and expense, -1 for liability, equity and income."""
    return -1 if kind in _NEGATED else 1


def account_sums(start: date | None = None, end: date | None = None) -> list[tuple]:
    """(id, name, kind, raw_cents) for every account, ordered by kind then name.

    Accounts without activity in the window appear with 0. Read from the derived
    tables, never from the entries: whole months inside the window come from
    account_month_balances, the partial months at either edge day by day from
    account_day_balances, so a report reads at most 12 rows per account per year
    plus 62 days per account, whatever the size of the ledger. One statement, built
    once per process (_ACCOUNT_SUMS): only its six bounds change per call, so no
    query is constructed, cached or compiled per request (docs/performance.md,
    issue 39: building the union per call cost more than running it).
    """
    try:
        rows = db.session.connection().execute(_ACCOUNT_SUMS, _bounds(start, end))
        return [(r[0], r[1], r[2], int(r[3])) for r in rows]
    except OperationalError as exc:
        # SQLite's SUM() stops with "integer overflow" once a running total leaves the
        # 64-bit range (each amount fits, a balance need not). PostgreSQL sums bigint
        # into numeric and never gets here. Add up the entries exactly in Python instead.
        if "integer overflow" not in str(exc.orig):
            raise
        return _account_sums_exact(start, end)


def _account_sums_exact(start: date | None, end: date | None) -> list[tuple]:
    """account_sums() the slow, exact way: every entry in the window, added in Python."""
    entries = select(Entry.account_id, Entry.amount_cents)
    if start is not None or end is not None:
        entries = entries.join(Transaction, Transaction.id == Entry.transaction_id)
        entries = entries.where(*_range(Transaction.occurred_on, start, end, hi_inclusive=True))
    totals: dict[int, int] = {}
    for account_id, cents in db.session.execute(entries):
        totals[account_id] = totals.get(account_id, 0) + cents
    accounts = select(Account.id, Account.name, Account.kind).order_by(Account.kind, Account.name)
    return [(i, name, kind, totals.get(i, 0)) for i, name, kind in db.session.execute(accounts)]


def _first_of_next_month(day: date) -> date:
    return date(day.year + 1, 1, 1) if day.month == 12 else date(day.year, day.month + 1, 1)


def _month_bounds(start: date | None, end: date | None) -> tuple[date | None, date | None]:
    """[lo, hi): the first days of the whole months lying inside [start, end].

    Callers keep start <= 9999-12-01 and end < 9999-12-31 so nothing overflows.
    """
    lo = start if start is None or start.day == 1 else _first_of_next_month(start)
    if end is None:
        return lo, None
    following = end + timedelta(days=1)
    return lo, following if following.day == 1 else end.replace(day=1)


def _range(column, lo: date | None, hi: date | None, *, hi_inclusive: bool) -> list:
    conditions = []
    if lo is not None:
        conditions.append(column >= lo)
    if hi is not None:
        conditions.append(column <= hi if hi_inclusive else column < hi)
    return conditions


# The three pieces whose union covers exactly [start, end]: whole months [month_lo,
# month_hi), the ragged days at the start [head_lo, head_hi) and at the end
# [tail_lo, tail_hi]; an absent piece gets bounds no date lies within ([min, min) or
# [max, min]), and an open end of the window is date.min or date.max.
_ACCOUNT_SUMS = text(
    """
    SELECT accounts.id, accounts.name, accounts.kind, coalesce(sums.cents, 0)
    FROM accounts LEFT OUTER JOIN (
        SELECT pieces.account_id, sum(pieces.cents) AS cents FROM (
            SELECT account_id, cents FROM account_month_balances
            WHERE month >= :month_lo AND month < :month_hi
            UNION ALL
            SELECT account_id, cents FROM account_day_balances
            WHERE day >= :head_lo AND day < :head_hi
            UNION ALL
            SELECT account_id, cents FROM account_day_balances
            WHERE day >= :tail_lo AND day <= :tail_hi
        ) AS pieces GROUP BY pieces.account_id
    ) AS sums ON sums.account_id = accounts.id
    ORDER BY accounts.kind, accounts.name
    """
).bindparams(
    *(
        bindparam(name, type_=Date())
        for name in ("month_lo", "month_hi", "head_lo", "head_hi", "tail_lo", "tail_hi")
    )
)
_NO_MONTHS = {"month_lo": date.min, "month_hi": date.min}
_NO_HEAD = {"head_lo": date.min, "head_hi": date.min}
_NO_TAIL = {"tail_lo": date.max, "tail_hi": date.min}


def _days_only(start: date | None, end: date | None) -> dict:
    return {**_NO_MONTHS, **_NO_HEAD, "tail_lo": start or date.min, "tail_hi": end or date.max}


def _bounds(start: date | None, end: date | None) -> dict:
    """_ACCOUNT_SUMS's bounds for the inclusive window [start, end] (None: open)."""
    if end == date.max:  # every date is <= date.max: no upper bound at all
        end = None
    if start is not None and end is not None and end < start:
        return {**_NO_MONTHS, **_NO_HEAD, **_NO_TAIL}
    if start is not None and start > date(MAXYEAR, 12, 1):
        return _days_only(start, end)
    lo, hi = _month_bounds(start, end)
    if lo is not None and hi is not None and lo >= hi:  # no whole month inside
        return _days_only(start, end)
    bounds = {"month_lo": lo or date.min, "month_hi": hi or date.max, **_NO_HEAD, **_NO_TAIL}
    if start is not None and lo is not None and start != lo:  # the partial month at the start
        bounds.update(head_lo=start, head_hi=lo)
    # The partial month at the end (hi is set whenever end is).
    if end is not None and hi is not None and hi <= end:
        bounds.update(tail_lo=hi, tail_hi=end)
    return bounds


def window_pieces(start: date, end: date) -> dict:
    """The six bounds of the pieces a report over [start, end] reads (whole months, and
    the days of the partial months at either end): the series reads the same pieces,
    one row per month or day (services/ledger/trends.py)."""
    return _bounds(start, end)


def _line(name: str, kind: str, raw: int) -> dict:
    return {"account": name, "cents": sign_for(kind) * raw}


def balances(start: date | None, end: date | None) -> list[dict]:
    """One sign-adjusted line per account over the window (all time without one)."""
    return [_line(name, kind, raw) for _, name, kind, raw in account_sums(start, end)]


def income_statement(
    start: date | None,
    end: date | None,
    *,
    budget: dict | None = None,
    budget_cents: dict[int, int] | None = None,
) -> dict:
    """Income and expenses over the window. With a budget ({id, name}) and its figures
    per account id (services/ledger/budget_actuals.py), every line also carries budget_cents
    and variance_cents, and the statement its budget totals; without one it is exactly
    the plain statement."""
    income, expenses = [], []
    for account_id, name, kind, raw in account_sums(start, end):
        if kind == "income":
            income.append(_line(name, kind, raw))
        elif kind == "expense":
            expenses.append(_line(name, kind, raw))
        else:
            continue
        if budget is not None:
            _add_budget(
                income[-1] if kind == "income" else expenses[-1],
                kind,
                account_id,
                budget_cents or {},
            )
    total_income = sum(line["cents"] for line in income)
    total_expenses = sum(line["cents"] for line in expenses)
    statement = {
        "from": start.isoformat() if start else None,
        "to": end.isoformat() if end else None,
        "income": income,
        "total_income_cents": total_income,
        "expenses": expenses,
        "total_expenses_cents": total_expenses,
        "net_cents": total_income - total_expenses,
    }
    if budget is not None:
        income_budget = sum(line["budget_cents"] for line in income)
        expenses_budget = sum(line["budget_cents"] for line in expenses)
        statement.update(
            {
                "budget": budget,
                "total_income_budget_cents": income_budget,
                "total_expenses_budget_cents": expenses_budget,
                "net_budget_cents": income_budget - expenses_budget,
            }
        )
    return statement


def _add_budget(line: dict, kind: str, account_id: int, budget_cents: dict[int, int]) -> None:
    """budget_cents and variance_cents on a line: positive variance is always better than
    plan (more income than budgeted, less spending)."""
    planned = budget_cents.get(account_id, 0)
    line["budget_cents"] = planned
    line["variance_cents"] = (
        line["cents"] - planned if kind == "income" else planned - line["cents"]
    )


def balance_sheet(as_of: date | None) -> dict:
    """All activity up to and including as_of (today when not given); never a window."""
    as_of = as_of or clock.today()
    groups: dict[str, list[dict]] = {k: [] for k in ("asset", "liability", "equity")}
    retained = 0
    for _, name, kind, raw in account_sums(None, as_of):
        if kind in groups:
            groups[kind].append(_line(name, kind, raw))
        else:  # income and expense: profit not closed into equity
            retained -= raw
    total_assets = sum(line["cents"] for line in groups["asset"])
    total_liabilities = sum(line["cents"] for line in groups["liability"])
    total_equity = sum(line["cents"] for line in groups["equity"]) + retained
    return {
        "as_of": as_of.isoformat(),
        "assets": groups["asset"],
        "total_assets_cents": total_assets,
        "liabilities": groups["liability"],
        "total_liabilities_cents": total_liabilities,
        "equity": groups["equity"],
        "retained_cents": retained,
        "total_equity_cents": total_equity,
    }
