"""One account's register: its entries newest first, each with the running balance.

GET /accounts/{id}/register answers {account, balance_cents, cleared_balance_cents,
items, next_cursor}. Entries count in (occurred_on, entry id) order: an item's
balance_cents is the account's balance after that entry. All figures are
sign-adjusted by reports.sign_for, the one sign rule, as reports are. The top-level
balance_cents is the account's whole balance (every entry, whatever from/to say);
cleared_balance_cents the same over its cleared entries.

Paging is by key (occurred_on, entry id), as the transaction listing. Without
`limit` the first DEFAULT_LIMIT entries come (the same shape; follow next_cursor).

Speed, at any depth: the page's date range is bounded first from the account's
active days (account_day_balances, by its (account_id, day) index), so the entries
read are those of a few days; the running balance of the page's newest entry is the
derived month and day balances before its day plus that day's earlier entries,
never a scan of the account's history.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import select, tuple_

from ...extensions import db
from ...models import AccountDayBalance, AccountMonthBalance, Entry, Transaction
from . import accounts, cursors, reports

DEFAULT_LIMIT = 100


def _kind(account_id: int) -> str:
    return f"register:{account_id}"


def _first_of_month(day: date) -> date:
    return day.replace(day=1)


def _raw_before(account_id: int, day: date) -> int:
    """The account's raw balance over every entry dated before `day` (derived tables)."""
    month = AccountMonthBalance
    dayt = AccountDayBalance
    first = _first_of_month(day)
    months = db.session.execute(
        select(month.cents).where(month.account_id == account_id, month.month < first)
    ).scalars()
    days = db.session.execute(
        select(dayt.cents).where(
            dayt.account_id == account_id, dayt.day >= first, dayt.day < day
        )
    ).scalars()
    return sum(months) + sum(days)  # in Python: exact beyond 64 bits


def _raw_total(account_id: int) -> int:
    month = AccountMonthBalance
    return sum(
        db.session.execute(select(month.cents).where(month.account_id == account_id)).scalars()
    )


def _raw_cleared(account_id: int) -> int:
    return sum(
        db.session.execute(
            select(Entry.amount_cents).where(Entry.account_id == account_id, Entry.cleared)
        ).scalars()
    )


def _raw_through(account_id: int, day: date, entry_id: int) -> int:
    """The raw balance after entry `entry_id` dated `day` (entries in (date, id) order)."""
    same_day = db.session.execute(
        select(Entry.amount_cents)
        .join(Transaction, Transaction.id == Entry.transaction_id)
        .where(
            Transaction.occurred_on == day,
            Entry.account_id == account_id,
            Entry.id <= entry_id,
        )
    ).scalars()
    return _raw_before(account_id, day) + sum(same_day)


def _lowest_day(account_id: int, start, top: date | None, limit: int) -> date | None:
    """A day early enough that [it, top] holds the next limit + 1 entries, if known.

    The limit + 2nd newest active day at or before `top` (top itself may hold only
    entries of earlier pages): each active day holds at least one entry, or held one
    (a row may be 0 after deletions, so the caller reads again without the bound
    when it finds too few).
    """
    dayt = AccountDayBalance
    query = select(dayt.day).where(dayt.account_id == account_id)
    if start is not None:
        query = query.where(dayt.day >= start)
    if top is not None:
        query = query.where(dayt.day <= top)
    return db.session.execute(
        query.order_by(dayt.day.desc()).offset(limit + 1).limit(1)
    ).scalar()


def _entries(account_id: int, start, end, after, lowest, limit: int) -> list:
    query = (
        select(
            Entry.id,
            Entry.transaction_id,
            Transaction.occurred_on,
            Transaction.description,
            Entry.amount_cents,
            Entry.cleared,
            Entry.reconciled,
        )
        .select_from(Transaction)
        .join(Entry, Entry.transaction_id == Transaction.id)
        .where(Entry.account_id == account_id)
        .order_by(Transaction.occurred_on.desc(), Entry.id.desc())
        .limit(limit + 1)
    )
    if start is not None:
        query = query.where(Transaction.occurred_on >= start)
    if end is not None:
        query = query.where(Transaction.occurred_on <= end)
    if lowest is not None:
        query = query.where(Transaction.occurred_on >= lowest)
    if after is not None:
        query = query.where(tuple_(Transaction.occurred_on, Entry.id) < after)
    return db.session.execute(query).all()


def register(account_id: int, start, end, limit: int | None, cursor: str | None) -> dict:
    """One page of the account's register (see the module docstring)."""
    account = accounts.get_account(account_id)
    limit = limit or DEFAULT_LIMIT
    kind = _kind(account.id)
    scope = cursors.scope_of(kind, start, end)
    after = cursors.decode(cursor, kind, scope) if cursor is not None else None
    top = end
    if after is not None and (top is None or after[0] < top):
        top = after[0]
    lowest = _lowest_day(account.id, start, top, limit)
    rows = _entries(account.id, start, end, after, lowest, limit)
    if lowest is not None and len(rows) <= limit:
        rows = _entries(account.id, start, end, after, None, limit)
    more = len(rows) > limit
    rows = rows[:limit]
    sign = reports.sign_for(account.kind)
    items = []
    if rows:
        first = rows[0]
        running = _raw_through(account.id, _day(first.occurred_on), first.id)
        for row in rows:
            items.append(
                {
                    "entry_id": row.id,
                    "transaction_id": row.transaction_id,
                    "occurred_on": _day(row.occurred_on).isoformat(),
                    "description": row.description,
                    "amount_cents": row.amount_cents,
                    "balance_cents": sign * running,
                    "cleared": bool(row.cleared),
                    "reconciled": bool(row.reconciled),
                }
            )
            running -= row.amount_cents
    next_cursor = None
    if more:
        last = rows[-1]
        next_cursor = cursors.encode(kind, scope, _day(last.occurred_on), int(last.id))
    return {
        "account": accounts.as_dict(account),
        "balance_cents": sign * _raw_total(account.id),
        "cleared_balance_cents": sign * _raw_cleared(account.id),
        "items": items,
        "next_cursor": next_cursor,
    }


def _day(value) -> date:
    return value if isinstance(value, date) else date.fromisoformat(value)

