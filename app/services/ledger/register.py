"""One account's register: its entries newest first, each with the running balance.

GET /accounts/{id}/register answers {account, balance_cents, cleared_balance_cents,
cleared_through_cents, items, next_cursor}. Entries count in (occurred_on, entry id)
order: an item's balance_cents is the account's balance after that entry. All figures are
sign-adjusted by reports.sign_for, the one sign rule, as reports are. The top-level
balance_cents is the account's whole balance (every entry, whatever from/to say);
cleared_balance_cents the same over its cleared entries; cleared_through_cents over
its cleared entries dated on or before `to` (all of them without `to`): what a
statement of that date is reconciled against, so a client need not read every entry
after the date to find it.

Paging is by key (occurred_on, entry id), as the transaction listing. Without
`limit` the first validate.PAGE_DEFAULT (100) entries come (the same shape; follow next_cursor).

Speed, at any depth and density (4 statements: account, active days, entries with
their transactions' document counts, figures; 3 on PostgreSQL for a page from the
newest entry, whose balances come with the days (_WHOLE); two more for each further
span only when deletions emptied days): the page's date range is bounded from the
account's active days (account_day_balances, by its (account_id, day) index), in
spans of growing size read in one statement that stops at the page's size, so the
entries read are those of a few days for a busy account and of no more days than the
page needs for a sparse one (_page_rows); the running balance of the page's newest
entry is the derived month and day balances before its day plus that day's earlier
entries, and
the whole and cleared balances come in the same statement (_figures), never a scan
of the account's history. The cleared balance costs what the account has cleared
(the partial index ix_entries_cleared). Each statement's text is compiled once per
process (store.FixedStatement, _execute), the account read as one of them too
(accounts.account_dict): about 0.4 ms a page less, served. Figures at 1M
transactions: docs/performance.md, "Books at scale: the register page (second round,
issue 20)" and "Pages of the listing and of a register" (its third round, issue 47).
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import Date, bindparam, select, text, union_all
from sqlalchemy.exc import OperationalError

from ... import store
from ...extensions import db
from ...models import AccountDayBalance, AccountMonthBalance, Entry, Transaction
from ...store import dialect
from . import accounts, cursors, documents, reports, validate

FIRST_DAYS = 3  # active days the first read of a page spans

# The register's statements as store.FixedStatement, by their SQL text: each text is
# compiled once per process instead of rebuilt (text(), its bind parameters, SQLAlchemy's
# cache key) on every page. A page's texts differ only by which bounds it has and how
# many spans it reads (at most _ranks' few ranks), so there are a few dozen; the bound
# is a guard, never reached by the service's own pages.
_STATEMENTS: dict[str, store.FixedStatement] = {}
_STATEMENTS_MAX = 256


def _execute(sql: str, params: dict, dates: tuple[str, ...] = ()):
    """The rows of sql run with params (by name) on the session's connection; the
    parameters named in dates are dates (bound by each store's Date type)."""
    statement = _STATEMENTS.get(sql)
    if statement is None:
        binds = [bindparam(name, type_=Date()) for name in dates]
        statement = store.FixedStatement(text(sql).bindparams(*binds))
        if len(_STATEMENTS) < _STATEMENTS_MAX:
            _STATEMENTS[sql] = statement
    return statement.execute(db.session.connection(), params)


def _kind(account_id: int) -> str:
    return f"register:{account_id}"


def _first_of_month(day: date) -> date:
    return day.replace(day=1)


def _is_sqlite() -> bool:
    return dialect.is_sqlite()


def _join() -> str:
    """SQLite is told the join order (CROSS JOIN): by its statistics one account looks
    selective, and starting from its entries means sorting all of them."""
    return "CROSS JOIN" if _is_sqlite() else "JOIN"


# --- the figures: one statement -------------------------------------------------------

# The cleared balance is written as the partial index ix_entries_cleared says it
# (WHERE cleared): SQLite uses that index only for this very term. (A Boolean-typed
# column rendered "entries.cleared = 1" on SQLite, which read every entry of the
# account: 23 ms of the 25 ms a page took at a million transactions.) The account's
# month rows are read once for both the whole balance and the months before the top
# entry's (:first is NULL when the page is empty).
_CLEARED = """
           (SELECT sum(entries.amount_cents) FROM entries
            WHERE entries.account_id = :account_id AND entries.cleared)"""
_FIGURES = (
    """
    SELECT m.total, m.before,"""
    + _CLEARED
    + """ {more}
    FROM (SELECT sum(cents) AS total,
                 sum(CASE WHEN month < :first THEN cents END) AS before
          FROM account_month_balances WHERE account_id = :account_id) AS m
"""
)
# PostgreSQL, a page from the register's newest entry (no `to`, no cursor): that
# entry's running balance is the whole balance, so no figure waits for the page's rows
# and the whole and cleared balances come with the days statement (_ranked_days), one
# round trip fewer. (PostgreSQL sums into numeric: no overflow to fall back from.)
_WHOLE = (
    ", (SELECT sum(cents) FROM account_month_balances WHERE account_id = :account_id)," + _CLEARED
)
# The cleared entries dated on or before `to`: what a statement of that date is
# reconciled against (the account's cleared entries, each probed for its date).
_CLEARED_THROUGH = """,
           (SELECT sum(entries.amount_cents)
            FROM entries {join} transactions AS ct ON ct.id = entries.transaction_id
            WHERE entries.account_id = :account_id AND entries.cleared AND ct.occurred_on <= :to)"""
_DAYS_BEFORE = """,
           (SELECT sum(d.cents) FROM account_day_balances AS d
            WHERE d.account_id = :account_id AND d.day >= :first AND d.day < :day)"""
_SAME_DAY = """,
           (SELECT sum(e.amount_cents)
            FROM transactions AS t {join} entries AS e ON e.transaction_id = t.id
            WHERE t.occurred_on = :day AND e.account_id = :account_id AND e.id <= :entry_id)"""


def _figures(
    account_id: int, top: tuple[date, int] | None, same_day: int | None, to: date | None = None
) -> tuple[int, int, int, int]:
    """(whole raw balance, cleared raw balance, raw balance after entry `top`, cleared
    raw balance of the entries dated on or before `to`) in one round trip; `top` is
    (day, entry id) of the page's newest entry (None: no items, 0); without `to` the
    last is the whole cleared balance.

    The balance after `top` is the derived month and day balances before its day plus
    that day's entries up to it (entries in (date, id) order): `same_day` when the
    caller has them all on its page, else read from the day's transactions (from the
    account's side it would probe all of its entries). Sums are SQL's; SQLite stops
    with "integer overflow" once a total leaves 64 bits (PostgreSQL sums into
    numeric), and then they are added in Python.
    """
    params: dict = {"account_id": account_id, "first": None}
    dates = ["first"]
    more = ""
    if to is not None:
        more = _CLEARED_THROUGH.format(join=_join())
        params["to"] = to
        dates.append("to")
    if top is not None:
        more += _DAYS_BEFORE
        params.update(first=_first_of_month(top[0]), day=top[0])
        dates.append("day")
        if same_day is None:
            more += _SAME_DAY.format(join=_join())
            params["entry_id"] = top[1]
    try:
        row = _execute(_FIGURES.format(more=more), params, tuple(dates)).one()
    except OperationalError as exc:
        if "integer overflow" not in str(exc.orig):
            raise
        return _figures_exact(account_id, top, to)
    sums = [int(v or 0) for v in row]
    cleared_to = sums[2]
    if to is not None:
        cleared_to = sums.pop(3)
    through = sum(sums[1:2] + sums[3:]) + (same_day or 0) if top is not None else 0
    return sums[0], sums[2], through, cleared_to


def _figures_exact(
    account_id: int, top: tuple[date, int] | None, to: date | None
) -> tuple[int, int, int, int]:
    """_figures() added up in Python, row by row: exact beyond 64 bits."""
    month, dayt = AccountMonthBalance, AccountDayBalance
    total = select(month.cents).where(month.account_id == account_id)
    cleared = select(Entry.amount_cents).where(Entry.account_id == account_id, text("cleared"))
    cleared_to = cleared
    if to is not None:
        cleared_to = cleared.join(Transaction, Transaction.id == Entry.transaction_id).where(
            Transaction.occurred_on <= to
        )
    through = 0
    if top is not None:
        day, entry_id = top
        first = _first_of_month(day)
        before = union_all(
            select(month.cents).where(month.account_id == account_id, month.month < first),
            select(dayt.cents).where(
                dayt.account_id == account_id, dayt.day >= first, dayt.day < day
            ),
            select(Entry.amount_cents)
            .join(Transaction, Transaction.id == Entry.transaction_id)
            .where(
                Transaction.occurred_on == day,
                Entry.account_id == account_id,
                Entry.id <= entry_id,
            ),
        )
        through = sum(db.session.execute(before).scalars())
    return (
        sum(db.session.execute(total).scalars()),
        sum(db.session.execute(cleared).scalars()),
        through,
        sum(db.session.execute(cleared_to).scalars()),
    )


# --- the page's rows -------------------------------------------------------------------

# PostgreSQL: for the rest of this read (set_config(..., true) is SET LOCAL: it ends
# with the transaction), asked in the same round trip as the days:
# - no parallel workers. Below a cursor the planner cannot tell how many of a span's
#   rows remain (it takes the date and id bounds as independent), expects a handful,
#   sorts the whole span and starts a worker to do it: 6-17 ms instead of 1 ms at a
#   million transactions.
# - no hash or merge join: a span's entries are its transactions, each probed for the
#   account's entries (_entries). Once a span holds a few hundred transactions (a
#   sparse account's, or any account's at 100,000 transactions) the planner prices
#   those probes above reading every entry of the account and hashing it against the
#   span: 6,847 entries from 2,184 heap pages, 4.5-5.2 ms where the probes take 0.6
#   (docs/performance.md, issue 39).
# - no JIT compilation. The spans' read (_spans_read) is priced as if every span were
#   read whole, and the spans' prices add up: below a deep cursor (June 2016 at a
#   million transactions) the sum passes jit_above_cost (100,000) although the read
#   takes 2 ms, and compiling its expressions took 14 ms of a 16.6 ms read (JIT:
#   Functions: 37), 18-69 ms under load. A server with jit off loses nothing.
_SERIAL = (
    ", set_config('max_parallel_workers_per_gather', '0', true)"
    ", set_config('enable_hashjoin', 'off', true)"
    ", set_config('enable_mergejoin', 'off', true)"
    ", set_config('jit', 'off', true)"
)


def _days(account_id: int, start, high, inclusive: bool, n: int) -> tuple[date | None, int]:
    """(oldest, how many) of the account's n newest active days in [start, high]
    (high excluded unless inclusive; None: no bound), by account_day_balances'
    (account_id, day) index. Fewer than n: these are all of its days left."""
    (oldest,), count, _ = _ranked_days(account_id, start, high, inclusive, [n])
    return oldest, count


# The oldest of the newest r days, for each rank r asked (the last is the most): the
# spans a page's entries are read in, taken in one statement.
_RANKED_DAYS = """
    SELECT {oldest}, count(*) {whole} {pg_setting} FROM (
        SELECT d.day, row_number() OVER (ORDER BY d.day DESC) AS rank
        FROM account_day_balances AS d
        WHERE d.account_id = :account_id {conditions}
        ORDER BY d.day DESC LIMIT :n
    ) AS newest
"""


def _ranked_days(
    account_id: int, start, high, inclusive: bool, ranks: list[int], whole: bool = False
) -> tuple[list[date | None], int, tuple[int, int] | None]:
    """([oldest of the newest r active days, for each r of ranks], how many days were
    read: at most ranks[-1], the account's (whole, cleared) raw balances if `whole`
    (PostgreSQL only: _WHOLE) else None) in [start, high] (high excluded unless
    inclusive; None: no bound), by account_day_balances' (account_id, day) index."""
    conditions = []
    params: dict = {"account_id": account_id, "n": ranks[-1]}
    dates = []
    if start is not None:
        conditions.append("AND d.day >= :start")
        params["start"] = start
        dates.append("start")
    if high is not None:
        conditions.append(f"AND d.day {'<=' if inclusive else '<'} :high")
        params["high"] = high
        dates.append("high")
    oldest = ", ".join(f"min(CASE WHEN rank <= {int(r)} THEN day END)" for r in ranks)
    sql = _RANKED_DAYS.format(
        oldest=oldest,
        conditions=" ".join(conditions),
        whole=_WHOLE if whole else "",
        pg_setting="" if _is_sqlite() else _SERIAL,
    )
    row = _execute(sql, params, tuple(dates)).one()
    days = [None if v is None else dialect.as_date(v) for v in row[: len(ranks)]]
    n = len(ranks)
    sums = (int(row[n + 1] or 0), int(row[n + 2] or 0)) if whole else None
    return days, int(row[n]), sums


_ENTRIES = """
    SELECT e.id, e.transaction_id, t.occurred_on, t.description, e.amount_cents,
           e.cleared, e.reconciled, {document_count} AS document_count
    FROM transactions AS t {join} entries AS e ON e.transaction_id = t.id
    WHERE e.account_id = :account_id AND t.occurred_on >= :lowest {conditions}
    ORDER BY t.occurred_on DESC, e.id DESC
    LIMIT :n
"""


def _entries_sql(conditions: str) -> str:
    return _ENTRIES.format(
        join=_join(),
        conditions=conditions,
        document_count=documents.COUNT_OF.format(transaction_id="t.id"),
    )


def _entries(account_id: int, lowest: date, high, inclusive: bool, after, n: int) -> list:
    """Up to n of the account's entries dated in [lowest, high] (high excluded unless
    inclusive; None: no bound) and before the cursor `after` (None: none), newest
    first: the transactions of those days, each probed for the account's entries
    through ix_entries_transaction_listing."""
    conditions: list[str] = []
    params: dict = {"account_id": account_id, "n": n, "lowest": lowest}
    dates = ["lowest"]
    if high is not None:
        conditions.append(f"AND t.occurred_on {'<=' if inclusive else '<'} :high")
        params["high"] = high
        dates.append("high")
    if after is not None:
        # Written out rather than as a row comparison: the span's dates are bounded by
        # :high already. PostgreSQL misjudges either form below a deep cursor (see
        # _SERIAL, which keeps that from costing a parallel worker).
        conditions.append("AND (t.occurred_on < :after_day OR e.id < :after_id)")
        params.update(after_day=after[0], after_id=after[1])
        dates.append("after_day")
    sql = _entries_sql(" ".join(conditions))
    return list(_execute(sql, params, tuple(dates)).all())


def _spans_read(
    account_id: int, spans: list[tuple[date, date | None, bool]], after, n: int
) -> list:
    """Up to n entries of the spans, newest first, in ONE statement: each span
    (lowest, high, inclusive) read as _entries reads one, newest span first, their
    reads concatenated (UNION ALL) under one LIMIT, so a span is read only while the
    spans before it have not given n entries (both stores stop a UNION ALL at its
    LIMIT)."""
    parts = []
    params: dict = {"account_id": account_id, "n": n}
    dates = []
    if after is not None:
        params.update(after_day=after[0], after_id=after[1])
        dates.append("after_day")
    for k, (lowest, high, inclusive) in enumerate(spans):
        conditions = [f"AND t.occurred_on >= :lowest{k}"]
        params[f"lowest{k}"] = lowest
        dates.append(f"lowest{k}")
        if high is not None:
            conditions.append(f"AND t.occurred_on {'<=' if inclusive else '<'} :high{k}")
            params[f"high{k}"] = high
            dates.append(f"high{k}")
        if after is not None:
            conditions.append("AND (t.occurred_on < :after_day OR e.id < :after_id)")
        part = _entries_sql(" ".join(conditions))
        part = part.replace("AND t.occurred_on >= :lowest ", " ", 1)
        parts.append(f"SELECT * FROM ({part}) AS span{k}")
    sql = " UNION ALL ".join(parts) + " LIMIT :n"
    rows = _execute(sql, params, tuple(dates)).all()
    # In the page's order whatever order the store returned the concatenation in.
    return sorted(rows, key=lambda r: (dialect.as_date(r.occurred_on), r.id), reverse=True)


def _ranks(first: int, wanted: int) -> list[int]:
    """The day ranks a page's spans end at: first, then four times more each, up to
    wanted (wanted active days hold at least wanted entries, unless deletions emptied
    some of them)."""
    ranks = [first]
    while ranks[-1] * 4 < wanted:
        ranks.append(ranks[-1] * 4)
    if ranks[-1] < wanted:
        ranks.append(wanted)
    return ranks


def _next_span(needed: int, days: int, got: int) -> int:
    """How many more active days to read for `needed` entries, after `days` active days
    gave `got`: by the density seen, a quarter more, at least two, at most `needed`
    (an active day holds at least one entry, unless deletions emptied it)."""
    estimate = -(-needed * days * 5 // (4 * max(got, 1))) + 1
    return max(2, min(estimate, needed))


def _page_rows(
    account_id: int, start, end, after, limit: int, whole: bool = False
) -> tuple[list, tuple[int, int] | None]:
    """limit + 1 entries (or all that are left), reading as few days as it can, and
    the account's (whole, cleared) raw balances read with its days if `whole` (_WHOLE).

    The page's top is `end` or the cursor's day, whichever is earlier. From there the
    account's newest limit + 1 active days (account_day_balances) are split into spans
    of FIRST_DAYS days, then four times more each (_ranks), all found by one statement;
    the spans' entries are read by date range in one more, newest span first, each span
    read only while the ones before it gave fewer than limit + 1 entries (_spans_read).
    limit + 1 active days hold at least limit + 1 entries unless deletions emptied some;
    then the days after them are taken a span at a time, as many as the entries seen so
    far say are needed. Each span starts where the last one ended, so no row is read
    twice. Every date on which the account has an entry
    has its row in account_day_balances (the triggers and `check --rebuild` never drop
    a row, even one that sums to 0), so when the account's days run out, so do its
    entries.
    """
    high, inclusive = end, True
    if after is not None and (high is None or after[0] < high):
        high = after[0]
    if after is not None and end is not None and after[0] > end:
        after = None  # the whole window lies before the cursor
    wanted = limit + 1
    first = FIRST_DAYS if after is None else FIRST_DAYS + 1  # the cursor's day is part read
    # First: the newest `wanted` active days in spans of growing size, their days in one
    # statement and their entries in one more, the spans after the first read only if
    # needed (a sparse account's page no longer costs a round trip per span).
    ranks = _ranks(first, wanted)
    oldest, count, sums = _ranked_days(account_id, start, high, inclusive, ranks, whole)
    if oldest[0] is None:
        return [], sums
    spans: list[tuple[date, date | None, bool]] = []
    top, top_inclusive = high, inclusive
    for day in oldest:
        assert day is not None
        if spans and day == spans[-1][0]:
            break  # fewer days than this rank: the spans so far hold them all
        spans.append((day, top, top_inclusive))
        top, top_inclusive = day, False
    rows: list = _spans_read(account_id, spans, after, wanted)
    if len(rows) >= wanted or count < ranks[-1]:
        return rows, sums
    return _after_emptied_days(account_id, start, spans[-1][0], rows, count, wanted), sums


def _after_emptied_days(account_id: int, start, high, rows: list, count: int, wanted: int) -> list:
    """rows and the entries after them, up to `wanted` in all, dated before `high`, once
    `count` active days gave only rows (deletions emptied some of them): on a span at a
    time, as many days as the entries seen say are needed."""
    inclusive, after = False, None
    span = _next_span(wanted - len(rows), count, len(rows))
    while True:
        lowest, count = _days(account_id, start, high, inclusive, span)
        if lowest is None:
            return rows
        got = _entries(account_id, lowest, high, inclusive, after, wanted - len(rows))
        rows += got
        if len(rows) >= wanted or count < span:
            return rows
        span = _next_span(wanted - len(rows), count, len(got))
        high, inclusive, after = lowest, False, None


def register(account_id: int, start, end, limit: int | None, cursor: str | None) -> dict:
    """One page of the account's register (see the module docstring)."""
    account = accounts.account_dict(account_id)
    limit = limit or validate.PAGE_DEFAULT
    kind = _kind(account_id)
    scope = cursors.scope_of(kind, start, end)
    after = cursors.decode(cursor, kind, scope) if cursor is not None else None
    whole = end is None and after is None and not _is_sqlite()
    rows, sums = _page_rows(account_id, start, end, after, limit, whole)
    more = len(rows) > limit
    rows = rows[:limit]
    sign = reports.sign_for(account["kind"])
    top = (dialect.as_date(rows[0].occurred_on), int(rows[0].id)) if rows else None
    same_day = None
    if top is not None and (not more or dialect.as_date(rows[-1].occurred_on) < top[0]):
        # Every entry of the top entry's day up to it is on this page.
        same_day = sum(r.amount_cents for r in rows if dialect.as_date(r.occurred_on) == top[0])
    if sums is not None:  # the newest entry's running balance is the whole balance
        total, cleared = sums
        running, cleared_to = total, cleared
    else:
        total, cleared, running, cleared_to = _figures(account_id, top, same_day, end)
    items = []
    for row in rows:
        items.append(
            {
                "entry_id": row.id,
                "transaction_id": row.transaction_id,
                "occurred_on": dialect.as_date(row.occurred_on).isoformat(),
                "description": row.description,
                "amount_cents": row.amount_cents,
                "balance_cents": sign * running,
                "cleared": bool(row.cleared),
                "reconciled": bool(row.reconciled),
                "document_count": int(row.document_count),
            }
        )
        running -= row.amount_cents
    next_cursor = None
    if more:
        last = rows[-1]
        next_cursor = cursors.encode(kind, scope, dialect.as_date(last.occurred_on), int(last.id))
    return {
        "account": account,
        "balance_cents": sign * total,
        "cleared_balance_cents": sign * cleared,
        "cleared_through_cents": sign * cleared_to,
        "items": items,
        "next_cursor": next_cursor,
    }
