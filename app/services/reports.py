"""Reports: balances, income statement, balance sheet.

All three are built on account_sums(), THE one per-account SUM of amount_cents
over an optional inclusive date window, and sign_for(), THE one sign rule:
asset and expense balances are shown as the raw sum; liability, equity and
income balances are shown negated. Figures leave here already sign-adjusted;
clients must not flip them again.

Balance sheet identity: the raw sums of all accounts total zero (every posting
balances), so assets = liabilities + equity + retained, where retained is
income minus expenses up to the date (profit is never closed into equity).
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from ..extensions import db
from ..models import Account, Entry, Transaction
from . import clock

_NEGATED = frozenset({"liability", "equity", "income"})


def sign_for(kind: str) -> int:
    """+1 for asset and expense, -1 for liability, equity and income."""
    return -1 if kind in _NEGATED else 1


def account_sums(start: date | None = None, end: date | None = None) -> list[tuple]:
    """(id, name, kind, raw_cents) for every account, ordered by kind then name.

    Accounts without activity in the window appear with 0.
    """
    sums = select(Entry.account_id, func.sum(Entry.amount_cents).label("cents")).group_by(
        Entry.account_id
    )
    sums = _in_window(sums, start, end).subquery()
    query = (
        select(Account.id, Account.name, Account.kind, func.coalesce(sums.c.cents, 0))
        .outerjoin(sums, sums.c.account_id == Account.id)
        .order_by(Account.kind, Account.name)
    )
    try:
        return [(r[0], r[1], r[2], int(r[3])) for r in db.session.execute(query)]
    except OperationalError as exc:
        # SQLite's SUM() stops with "integer overflow" once a running total leaves the
        # 64-bit range (each amount fits, a balance need not). PostgreSQL sums bigint
        # into numeric and never gets here. Add up exactly in Python instead.
        if "integer overflow" not in str(exc.orig):
            raise
        return _account_sums_exact(start, end)


def _in_window(query, start: date | None, end: date | None):
    if start is None and end is None:
        return query
    query = query.join(Transaction, Transaction.id == Entry.transaction_id)
    if start is not None:
        query = query.where(Transaction.occurred_on >= start)
    if end is not None:
        query = query.where(Transaction.occurred_on <= end)
    return query


def _account_sums_exact(start: date | None, end: date | None) -> list[tuple]:
    totals: dict[int, int] = {}
    entries = _in_window(select(Entry.account_id, Entry.amount_cents), start, end)
    for account_id, cents in db.session.execute(entries):
        totals[account_id] = totals.get(account_id, 0) + cents
    accounts = select(Account.id, Account.name, Account.kind).order_by(Account.kind, Account.name)
    return [(i, name, kind, totals.get(i, 0)) for i, name, kind in db.session.execute(accounts)]


def _line(name: str, kind: str, raw: int) -> dict:
    return {"account": name, "cents": sign_for(kind) * raw}


def balances(start: date | None, end: date | None) -> list[dict]:
    """One sign-adjusted line per account over the window (all time without one)."""
    return [_line(name, kind, raw) for _, name, kind, raw in account_sums(start, end)]


def income_statement(start: date | None, end: date | None) -> dict:
    income, expenses = [], []
    for _, name, kind, raw in account_sums(start, end):
        if kind == "income":
            income.append(_line(name, kind, raw))
        elif kind == "expense":
            expenses.append(_line(name, kind, raw))
    total_income = sum(line["cents"] for line in income)
    total_expenses = sum(line["cents"] for line in expenses)
    return {
        "from": start.isoformat() if start else None,
        "to": end.isoformat() if end else None,
        "income": income,
        "total_income_cents": total_income,
        "expenses": expenses,
        "total_expenses_cents": total_expenses,
        "net_cents": total_income - total_expenses,
    }


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
