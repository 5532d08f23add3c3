"""The transaction listing with filters and keyset paging (GET /transactions, the
list_transactions tool): the one place its arguments become a query.

Without `limit` the answer is the plain array (docs/ledger.md "Listing, filters and
paging"; transactions.transaction_listing when only a date window is given, so the plain
listing keeps its speed). With `limit` it is {items, next_cursor}: a page in the
listing's order (occurred_on descending, then id descending) that starts after the row
its cursor names. The position is a key (occurred_on, id), never an offset, so a
transaction posted or deleted between two pages cannot make another one appear twice or
vanish; each page is one index range read, however deep it lies.

Filters, combined with AND: from/to (inclusive dates), q (a case-insensitive
substring of the description), account_id (the transaction has an entry there),
min_cents/max_cents (inclusive bounds on the amount: the sum of the positive entries).

A page with q first walks WALK_ROWS transactions in order; when they hold too few
matches, the description's trigram index (search.py, migration 0010) narrows the rows
the same exact filters are applied to, so a rare word no longer reads every row.
"""

from __future__ import annotations

from datetime import date

import orjson
from sqlalchemy import exists, false, func, select, tuple_
from sqlalchemy.orm import aliased

from ...extensions import db
from ...models import Entry, Transaction, User
from ..errors import BadRequest
from . import cursors, documents, search, transactions
from .validate import ListingQuery

KIND = "transactions"
ACCOUNT_ID_MAX = 2**31 - 1
# A page with q first walks this many transactions in the listing's order (cheap, and
# enough for a common word); when they hold too few matches, the description index
# names the candidates instead (search.py).
WALK_ROWS = 1000
SAMPLE_ROWS = 200  # PostgreSQL: the newest descriptions that tell which word of q is rare


class Page:
    """One page as JSON text (HTTP sends it as it is) or Python data (MCP, tests)."""

    __slots__ = ("_listing", "next_cursor")

    def __init__(self, listing: transactions.Listing, next_cursor: str | None):
        self._listing = listing
        self.next_cursor = next_cursor

    def json(self) -> bytes:
        return (
            b'{"items":'
            + self._listing.json()
            + b',"next_cursor":'
            + orjson.dumps(self.next_cursor)
            + b"}"
        )

    def data(self) -> dict:
        return {"items": self._listing.rows(), "next_cursor": self.next_cursor}


def fold(column):
    """A text column lowercased for q, beyond ASCII on both stores.

    PostgreSQL's lower() follows the database's character type (any UTF-8 locale folds
    every letter); SQLite's lower() folds ASCII only, so the store registers
    ledger_lower (Python's str.lower) on every connection (store.sqlite).
    """
    if db.session.get_bind().dialect.name == "postgresql":
        return func.lower(column)
    return func.ledger_lower(column)


def _contains(column, needle: str):
    if db.session.get_bind().dialect.name == "postgresql":
        return func.strpos(fold(column), needle) > 0
    return func.instr(fold(column), needle) > 0


def amount_of(tx_id_column):
    """A transaction's amount: the sum of its positive entries."""
    return (
        select(func.coalesce(func.sum(Entry.amount_cents), 0))
        .where(Entry.transaction_id == tx_id_column, Entry.amount_cents > 0)
        .scalar_subquery()
    )


def _conditions(query: ListingQuery, t=Transaction) -> list:
    conditions = []
    if query.start is not None:
        conditions.append(t.occurred_on >= query.start)
    if query.end is not None:
        conditions.append(t.occurred_on <= query.end)
    if query.q is not None:
        conditions.append(_contains(t.description, query.q.lower()))
    if query.account_id is not None:
        if not 0 < query.account_id <= ACCOUNT_ID_MAX:
            conditions.append(false())  # no such account: nothing matches
        else:
            conditions.append(
                exists().where(Entry.transaction_id == t.id, Entry.account_id == query.account_id)
            )
    if query.min_cents is not None or query.max_cents is not None:
        amount = amount_of(t.id)
        if query.min_cents is not None:
            conditions.append(amount >= query.min_cents)
        if query.max_cents is not None:
            conditions.append(amount <= query.max_cents)
    return conditions


def _headers(query: ListingQuery, t=Transaction):
    return (
        select(t.id, t.occurred_on, t.description, User.email)
        .outerjoin(User, User.id == t.created_by)
        .where(*_conditions(query, t))
        .order_by(t.occurred_on.desc(), t.id.desc())
    )


def _scope(query: ListingQuery) -> str:
    return cursors.scope_of(
        KIND,
        query.start,
        query.end,
        query.q,
        query.account_id,
        query.min_cents,
        query.max_cents,
    )


def listing(query: ListingQuery) -> transactions.Listing | Page:
    """The plain array without a limit, else one page ({items, next_cursor})."""
    if query.limit is None:
        if query.cursor is not None:
            raise BadRequest("'cursor' needs 'limit'")
        if not query.filtered():
            return transactions.transaction_listing(query.start, query.end)
        connection = db.session.connection()
        return transactions.render_listing(
            connection, transactions._tuples(connection, _headers(query))
        )
    return page(query)


def page(query: ListingQuery) -> Page:
    assert query.limit is not None
    scope = _scope(query)
    after = None
    if query.cursor is not None:
        after = cursors.decode(query.cursor, KIND, scope)
    connection = db.session.connection()
    rows = _page_rows(connection, query, after)
    more = len(rows) > query.limit
    rows = rows[: query.limit]
    next_cursor = None
    if more:
        last_id, last_day = rows[-1][0], rows[-1][1]
        next_cursor = cursors.encode(KIND, scope, _as_date(last_day), int(last_id))
    counts = documents.counts(connection, [int(r[0]) for r in rows])
    return Page(transactions.render_listing(connection, rows, counts), next_cursor)


def _page_rows(connection, query: ListingQuery, after: tuple[date, int] | None) -> list[tuple]:
    """The first limit + 1 matching header rows after the key `after`, in order."""
    assert query.limit is not None
    wanted = query.limit + 1

    def keyset(t=Transaction) -> list:
        return [] if after is None else [tuple_(t.occurred_on, t.id) < after]

    statement = _headers(query).where(*keyset())
    if query.q is None or not search.indexable(connection.dialect.name, query.q.lower()):
        return transactions._tuples(connection, statement.limit(wanted))
    # 1. the ordered walk, bounded: the first WALK_ROWS transactions after the cursor,
    #    filtered. Enough matches there (a common word): that is the page.
    window = (
        select(Transaction)
        .where(*keyset())
        .order_by(Transaction.occurred_on.desc(), Transaction.id.desc())
        .limit(WALK_ROWS)
        .subquery()
    )
    walked = aliased(Transaction, window)
    rows = transactions._tuples(connection, _headers(query, walked).limit(wanted))
    if len(rows) == wanted:
        return rows
    # 2. a rare word: the description index narrows the rows the exact filter reads.
    narrowing = _narrowing(connection, query.q.lower(), keyset())
    if narrowing is None:
        return transactions._tuples(connection, statement.limit(wanted))
    return transactions._tuples(connection, statement.where(narrowing).limit(wanted))


def _narrowing(connection, needle: str, keyset: list):
    if connection.dialect.name == "postgresql":
        sample = select(func.lower(Transaction.description)).where(*keyset)
        sample = sample.order_by(Transaction.occurred_on.desc(), Transaction.id.desc())
        rows = transactions._tuples(connection, sample.limit(SAMPLE_ROWS))
        return search.postgresql_condition(needle, [r[0] for r in rows])
    return search.sqlite_condition(connection, needle)


def _as_date(value) -> date:
    return value if isinstance(value, date) else date.fromisoformat(value)
