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
read are those of a few days (_page_rows); the running balance of the page's newest entry is the
derived month and day balances before its day plus that day's earlier entries,
never a scan of the account's history.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import Boolean, ColumnElement, Date, bindparam, literal_column, select, text
from sqlalchemy.sql.elements import BindParameter

from ...extensions import db
from ...models import AccountDayBalance, AccountMonthBalance, Entry
from . import accounts, cursors, reports

DEFAULT_LIMIT = 100
# Written as the partial index ix_entries_cleared says it (WHERE cleared): SQLite uses
# that index only for this very term, not for SQLAlchemy's "cleared = 1".
CLEARED: ColumnElement[bool] = literal_column("entries.cleared", Boolean())


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
        select(dayt.cents).where(dayt.account_id == account_id, dayt.day >= first, dayt.day < day)
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
            select(Entry.amount_cents).where(Entry.account_id == account_id, CLEARED)
        ).scalars()
    )


_SAME_DAY = """
    SELECT e.amount_cents
    FROM transactions AS t {join} entries AS e ON e.transaction_id = t.id
    WHERE t.occurred_on = :day AND e.account_id = :account_id AND e.id <= :entry_id
"""


def _raw_through(account_id: int, day: date, entry_id: int) -> int:
    """The raw balance after entry `entry_id` dated `day` (entries in (date, id) order).

    That day's entries are found from the day's transactions (SQLite: CROSS JOIN, as
    in _entries; from the account's side it would probe all of its entries).
    """
    statement = text(_SAME_DAY.format(join=_join())).bindparams(bindparam("day", type_=Date()))
    same_day = db.session.execute(
        statement, {"day": day, "account_id": account_id, "entry_id": entry_id}
    ).scalars()
    return _raw_before(account_id, day) + sum(same_day)


def _join() -> str:
    return "CROSS JOIN" if db.session.get_bind().dialect.name == "sqlite" else "JOIN"


def _lowest_day(account_id: int, start, top: date | None, offset: int) -> date | None:
    """The account's active day `offset` days before its newest one at or before `top`
    (None: there are not that many), from account_day_balances' (account_id, day) index.
    """
    dayt = AccountDayBalance
    query = select(dayt.day).where(dayt.account_id == account_id)
    if start is not None:
        query = query.where(dayt.day >= start)
    if top is not None:
        query = query.where(dayt.day <= top)
    return db.session.execute(query.order_by(dayt.day.desc()).offset(offset).limit(1)).scalar()


def _page_rows(account_id: int, start, end, after, limit: int) -> list:
    """limit + 1 entries (or all that are left), reading as few days as it can.

    The date range read starts small (the newest 3 active days at or before the page's
    top) and widens fourfold while it holds too few entries. Every active day holds at
    least one entry (or held one: a row may be 0 after deletions), so a range of
    limit + 2 active days always suffices, except after such deletions, when the last
    attempt reads without a bound.
    """
    top = end
    if after is not None and (top is None or after[0] < top):
        top = after[0]
    offset = 2
    while True:
        offset = min(offset, limit + 1)
        lowest = _lowest_day(account_id, start, top, offset)
        rows = _entries(account_id, start, end, after, lowest, limit)
        if lowest is None or len(rows) > limit:
            return rows
        if offset == limit + 1:
            return _entries(account_id, start, end, after, None, limit)
        offset *= 4


_ENTRIES = """
    SELECT e.id, e.transaction_id, t.occurred_on, t.description, e.amount_cents,
           e.cleared, e.reconciled
    FROM transactions AS t {join} entries AS e ON e.transaction_id = t.id
    WHERE e.account_id = :account_id {conditions}
    ORDER BY t.occurred_on DESC, e.id DESC
    LIMIT :n
"""


def _entries(account_id: int, start, end, after, lowest, limit: int) -> list:
    """The page's entries: the transactions of the bounded date range, newest first,
    each probed for the account's entries through (account_id, transaction_id).

    SQLite is told the join order (CROSS JOIN): by its statistics one account looks
    selective, and starting from its entries means sorting all of them.
    """
    conditions: list[str] = []
    params: dict = {"account_id": account_id, "n": limit + 1}
    binds: list[BindParameter] = [bindparam("account_id"), bindparam("n")]
    for name, op, value in (("start", ">=", start), ("end", "<=", end), ("lowest", ">=", lowest)):
        if value is not None:
            conditions.append(f"AND t.occurred_on {op} :{name}")
            params[name] = value
            binds.append(bindparam(name, type_=Date()))
    if after is not None:
        # The plain bound on the date lets PostgreSQL start its index scan at the cursor's
        # day (the row comparison spans two tables, so it cannot bound the scan itself).
        conditions.append("AND t.occurred_on <= :after_day")
        conditions.append("AND (t.occurred_on, e.id) < (:after_day, :after_id)")
        params.update(after_day=after[0], after_id=after[1])
        binds += [bindparam("after_day", type_=Date()), bindparam("after_id")]
    statement = text(_ENTRIES.format(join=_join(), conditions=" ".join(conditions))).bindparams(
        *binds
    )
    return list(db.session.execute(statement, params).all())


def register(account_id: int, start, end, limit: int | None, cursor: str | None) -> dict:
    """One page of the account's register (see the module docstring)."""
    account = accounts.get_account(account_id)
    limit = limit or DEFAULT_LIMIT
    kind = _kind(account.id)
    scope = cursors.scope_of(kind, start, end)
    after = cursors.decode(cursor, kind, scope) if cursor is not None else None
    rows = _page_rows(account.id, start, end, after, limit)
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
