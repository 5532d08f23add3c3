"""The transaction listing with filters and keyset paging (GET /transactions, the
list_transactions tool): the one place its arguments become a query.

Without `limit` the answer is SPEC's array (transactions.transaction_listing when
only a date window is given, so the plain listing keeps its speed). With `limit` it is
{items, next_cursor}: a page in the listing's order (occurred_on descending, then id
descending) that starts after the row its cursor names. The position is a key
(occurred_on, id), never an offset, so a transaction posted or deleted between two
pages cannot make another one appear twice or vanish; each page is one index range
read, however deep it lies.

Filters, combined with AND: from/to (inclusive dates), q (a case-insensitive
substring of the description), account_id (the transaction has an entry there),
min_cents/max_cents (inclusive bounds on the amount: the sum of the positive entries).
"""

from __future__ import annotations

from datetime import date

import orjson
from sqlalchemy import exists, false, func, select, tuple_

from ...extensions import db
from ...models import Entry, Transaction, User
from ..errors import BadRequest
from . import cursors, transactions
from .validate import ListingQuery

KIND = "transactions"
ACCOUNT_ID_MAX = 2**31 - 1


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


def _conditions(query: ListingQuery) -> list:
    conditions = []
    if query.start is not None:
        conditions.append(Transaction.occurred_on >= query.start)
    if query.end is not None:
        conditions.append(Transaction.occurred_on <= query.end)
    if query.q is not None:
        conditions.append(_contains(Transaction.description, query.q.lower()))
    if query.account_id is not None:
        if not 0 < query.account_id <= ACCOUNT_ID_MAX:
            conditions.append(false())  # no such account: nothing matches
        else:
            conditions.append(
                exists().where(
                    Entry.transaction_id == Transaction.id, Entry.account_id == query.account_id
                )
            )
    if query.min_cents is not None or query.max_cents is not None:
        amount = amount_of(Transaction.id)
        if query.min_cents is not None:
            conditions.append(amount >= query.min_cents)
        if query.max_cents is not None:
            conditions.append(amount <= query.max_cents)
    return conditions


def _headers(query: ListingQuery):
    return (
        select(Transaction.id, Transaction.occurred_on, Transaction.description, User.email)
        .outerjoin(User, User.id == Transaction.created_by)
        .where(*_conditions(query))
        .order_by(Transaction.occurred_on.desc(), Transaction.id.desc())
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
    """SPEC's array without a limit, else one page ({items, next_cursor})."""
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
    statement = _headers(query)
    if query.cursor is not None:
        day, tx_id = cursors.decode(query.cursor, KIND, scope)
        statement = statement.where(tuple_(Transaction.occurred_on, Transaction.id) < (day, tx_id))
    connection = db.session.connection()
    rows = transactions._tuples(connection, statement.limit(query.limit + 1))
    more = len(rows) > query.limit
    rows = rows[: query.limit]
    next_cursor = None
    if more:
        last_id, last_day = rows[-1][0], rows[-1][1]
        next_cursor = cursors.encode(KIND, scope, _as_date(last_day), int(last_id))
    return Page(transactions.render_listing(connection, rows), next_cursor)


def _as_date(value) -> date:
    return value if isinstance(value, date) else date.fromisoformat(value)
