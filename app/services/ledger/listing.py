"""The transaction listing with filters and keyset paging (GET /transactions, the
list_transactions tool): the one place its arguments become a query.

Without `limit` the answer is the plain array (docs/ledger.md "Listing, filters and
paging"; transaction_listing when only a date window is given, so the plain
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

Rendering (the second half): transaction_listing and render_listing write header rows
and their entries straight into the listing's JSON text (Listing), for the plain array
and for a page alike; list_transactions is the same as Python data.
"""

from __future__ import annotations

from datetime import date

import orjson
from sqlalchemy import (
    BigInteger,
    any_,
    bindparam,
    cast,
    exists,
    false,
    func,
    or_,
    select,
    text,
    tuple_,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import aliased

from ...extensions import db
from ...models import Account, Entry, Transaction, User
from ...store import dialect
from ..errors import BadRequestError
from . import cursors, documents, search
from .transactions import _tuples
from .validate import ListingQuery, id_in_range

KIND = "transactions"
# A page with q first walks this many transactions in the listing's order (cheap, and
# enough for a common word); when they hold too few matches, the description index
# names the candidates instead (search.py).
WALK_ROWS = 1000
SAMPLE_ROWS = 200  # PostgreSQL: the newest descriptions that tell which word of q is rare


class Page:
    """One page as JSON text (HTTP sends it as it is) or Python data (MCP, tests)."""

    __slots__ = ("_listing", "next_cursor")

    def __init__(self, listing: Listing, next_cursor: str | None):
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
    if dialect.is_postgresql():
        return func.lower(column)
    return func.ledger_lower(column)


def _contains(column, needle: str):
    if dialect.is_postgresql():
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
        if not id_in_range(query.account_id):
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


def listing(query: ListingQuery) -> Listing | Page:
    """The plain array without a limit, else one page ({items, next_cursor})."""
    if query.limit is None:
        if query.cursor is not None:
            raise BadRequestError("'cursor' needs 'limit'")
        if not query.filtered():
            return transaction_listing(query.start, query.end)
        connection = db.session.connection()
        return render_listing(connection, _tuples(connection, _headers(query)))
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
        next_cursor = cursors.encode(KIND, scope, dialect.as_date(last_day), int(last_id))
    ids = [int(r[0]) for r in rows]
    counts = documents.counts(connection, ids)
    return Page(
        render_listing(connection, rows, counts, reconciled_accounts(connection, ids)), next_cursor
    )


def reconciled_accounts(connection, tx_ids: list[int]) -> dict[int, list[int]]:
    """The accounts whose entry in each of these transactions is reconciled (absent:
    none), ascending: a page's reconciled_account_ids, so a client knows which rows a
    statement has fixed without reading any register (one statement, by the entries'
    transaction index)."""
    if not tx_ids:
        return {}
    found: dict[int, list[int]] = {}
    rows = _tuples(
        connection,
        select(Entry.transaction_id, Entry.account_id)
        .where(Entry.transaction_id.in_(tx_ids), text("entries.reconciled"))
        .order_by(Entry.transaction_id, Entry.account_id),
    )
    for tx_id, account_id in rows:
        accounts = found.setdefault(int(tx_id), [])
        if not accounts or accounts[-1] != int(account_id):
            accounts.append(int(account_id))
    return found


def _page_rows(connection, query: ListingQuery, after: tuple[date, int] | None) -> list[tuple]:
    """The first limit + 1 matching header rows after the key `after`, in order."""
    assert query.limit is not None
    wanted = query.limit + 1

    def keyset(t=Transaction) -> list:
        return [] if after is None else [tuple_(t.occurred_on, t.id) < after]

    statement = _headers(query).where(*keyset())
    if query.q is None or not search.indexable(dialect.name(connection), query.q.lower()):
        return _tuples(connection, statement.limit(wanted))
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
    rows = _tuples(connection, _headers(query, walked).limit(wanted))
    if len(rows) == wanted:
        return rows
    # 2. a rare word: the description index narrows the rows the exact filter reads.
    narrowing = _narrowing(connection, query.q.lower(), keyset())
    if narrowing is None:
        return _tuples(connection, statement.limit(wanted))
    return _tuples(connection, statement.where(narrowing).limit(wanted))


def _narrowing(connection, needle: str, keyset: list):
    if dialect.is_postgresql(connection):
        sample = select(func.lower(Transaction.description)).where(*keyset)
        sample = sample.order_by(Transaction.occurred_on.desc(), Transaction.id.desc())
        rows = _tuples(connection, sample.limit(SAMPLE_ROWS))
        return search.postgresql_condition(needle, [r[0] for r in rows])
    return search.sqlite_condition(connection, needle)


# --- rendering: header rows -> the listing's JSON text (plain or paged) -----------


class Listing:
    """A listing of transactions as its JSON text (docs/openapi.yaml Transaction objects, in order).

    HTTP sends json() as it is; callers that need Python data (the MCP tool, the
    CLI, tests) call rows(), which parses that same text: both read one query.
    """

    __slots__ = ("_text",)

    def __init__(self, text: str):
        self._text = text

    def json(self) -> bytes:
        return self._text.encode()

    def rows(self) -> list[dict]:
        return orjson.loads(self._text)


def _json_text(value) -> str:
    """A str (or None) as a JSON value, escaped exactly as the app's encoder does."""
    return orjson.dumps(value).decode()


def transaction_listing(start: date | None, end: date | None) -> Listing:
    """Transactions in an inclusive window, newest first, each with its entries by id.

    The one query behind GET /transactions and the list_transactions tool. A busy
    month at a million postings is ~8,500 headers and ~23,000 entries: the rows are
    fetched as the driver's plain tuples (_tuples) and written straight into JSON
    text (integers as they are, text through orjson, the same encoder and escaping
    as every other response), without building a dict per transaction and entry:
    those dicts, and the garbage collections they set off, cost more than the query.
    """
    query = (
        select(Transaction.id, Transaction.occurred_on, Transaction.description, User.email)
        .outerjoin(User, User.id == Transaction.created_by)
        .order_by(Transaction.occurred_on.desc(), Transaction.id.desc())
    )
    if start is not None:
        query = query.where(Transaction.occurred_on >= start)
    if end is not None:
        query = query.where(Transaction.occurred_on <= end)
    connection = db.session.connection()
    return render_listing(connection, _tuples(connection, query))


def render_listing(
    connection,
    headers: list[tuple],
    document_counts: dict[int, int] | None = None,
    reconciled: dict[int, list[int]] | None = None,
) -> Listing:
    """The Listing of (id, occurred_on, description, email) header rows, entries added;
    with document_counts (the paged listing), each item's document_count too, and its
    reconciled_account_ids (from `reconciled`)."""
    if not headers:
        return Listing("[]")
    # Each account's entry prefix, written once: an entry is then prefix + cents + "}".
    prefix = {
        account_id: f'{{"account_id":{int(account_id)},"account_name":{_json_text(name)},'
        '"amount_cents":'
        for account_id, name in _tuples(connection, select(Account.id, Account.name))
    }
    by_tx: dict[int, list[str]] = {h[0]: [] for h in headers}
    for tx_id, account_id, amount in _entries_of(connection, list(by_tx)):
        by_tx[tx_id].append(f"{prefix[account_id]}{int(amount)}}}")
    days: dict = {}  # a window has few distinct days and authors: each written once
    emails: dict = {}
    parts = []
    for tx_id, occurred_on, description, email in headers:
        day = days.get(occurred_on)
        if day is None:
            day = days[occurred_on] = f'"occurred_on":"{_iso_day(occurred_on)}"'
        author = emails.get(email)
        if author is None:
            author = emails[email] = f'"created_by_email":{_json_text(email)}'
        documents = ""
        if document_counts is not None:
            marked = ",".join(str(a) for a in (reconciled or {}).get(tx_id, ()))
            documents = (
                f',"document_count":{document_counts.get(tx_id, 0)}'
                f',"reconciled_account_ids":[{marked}]'
            )
        parts.append(
            f'{{"id":{int(tx_id)},{day},"description":{_json_text(description)},{author},'
            f'"entries":[{",".join(by_tx[tx_id])}]{documents}}}'
        )
    return Listing("[" + ",".join(parts) + "]")


def list_transactions(start: date | None, end: date | None) -> list[dict]:
    """The same listing as Python data (see transaction_listing)."""
    return transaction_listing(start, end).rows()


def _iso_day(value) -> str:
    """A Date column as fetched raw: psycopg gives a date, sqlite3 the stored ISO text."""
    if isinstance(value, str):
        return date.fromisoformat(value).isoformat()  # validated, same form as the ORM gives
    return value.isoformat()


RUN_GAP = 8  # ids this close are read as one range (the few in between are dropped)
MAX_RUNS = 32  # at most this many ranges per query; the rest are looked up by id
MIN_RUN = 16  # a run of fewer transactions than this is looked up by id


def _runs(ids: list[int]) -> list[list[int]]:
    """The ids, sorted, cut into runs whose neighbours are at most RUN_GAP apart."""
    ordered = sorted(ids)
    runs, current = [], [ordered[0]]
    for tx_id in ordered[1:]:
        if tx_id - current[-1] > RUN_GAP:
            runs.append(current)
            current = []
        current.append(tx_id)
    runs.append(current)
    return runs


def _entries_of(connection, tx_ids: list[int]):
    """(transaction_id, account_id, amount_cents) of the given transactions.

    Each transaction's entries come out together and by entry id (the caller groups
    them by transaction). Read through ix_entries_transaction_listing (index-only), so
    a listing costs what it returns, not the size of the ledger (a join on the date window lets
    PostgreSQL's planner scan every entry instead). Books grow in date order, so a
    window's ids mostly form a few long runs, each read as one index range (rows of
    transactions not asked for, in gaps inside a run, are dropped here); the ids
    outside the MAX_RUNS longest runs (postings back-dated into the window, short
    runs) are looked up by id in a second query.
    """
    runs = sorted(_runs(tx_ids), key=len, reverse=True)
    ranged = [run for run in runs[:MAX_RUNS] if len(run) >= MIN_RUN]
    singles = [tx_id for run in runs[len(ranged) :] for tx_id in run]
    columns = select(Entry.transaction_id, Entry.account_id, Entry.amount_cents).order_by(
        Entry.transaction_id, Entry.id
    )
    rows = []
    if ranged:
        wanted = {tx_id for run in ranged for tx_id in run}
        ranges = or_(*(Entry.transaction_id.between(run[0], run[-1]) for run in ranged))
        rows = [row for row in _tuples(connection, columns.where(ranges)) if row[0] in wanted]
    if not singles:
        return rows
    if dialect.is_postgresql(connection):
        # The array travels as one text literal: psycopg's per-element dumping of
        # thousands of ints costs more than the query.
        ids = cast(bindparam("ids", dialect.int_array(singles)), postgresql.ARRAY(BigInteger))
        rows.extend(_tuples(connection, columns.where(Entry.transaction_id == any_(ids))))
        return rows
    for chunk in dialect.in_chunks(singles):
        rows.extend(_tuples(connection, columns.where(Entry.transaction_id.in_(chunk))))
    return rows
