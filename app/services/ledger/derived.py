"""Exactness of the derived balance tables: recompute from the entries, compare, rebuild.

The triggers of migration 0002 keep account_day_balances and account_month_balances
equal to plain aggregates over the entries. differences() proves it (or names every
figure that is off); rebuild() restores them from the entries in one statement per
table. `ledger-service check` is the administrative front end for both, and
`ledger-service verify` runs the same comparison (balance_table_differences(), in
bounded memory) after proving the entries equal the audit trail.

On SQLite the description search (FTS5 table transaction_search, migration 0010) is
derived too, and so is the words' table beside it (transaction_words, migration 0026,
kept under the same mark): search_index_differences() runs FTS5's own integrity check
of each against the descriptions, rebuild_search_index() rebuilds both. Both need a
write unit (the check is an INSERT of a command row, which SQLite runs as a write).
The newest (up to 15) transactions wait above search_indexed.upto until their batch
(migration 0017_search_batches): the check indexes them first (search.index_tail),
else FTS5 would read the unindexed tail as a corrupt index; the rebuild raises the
mark.
PostgreSQL's trigram index is an index: the server keeps it.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator

from sqlalchemy import Date, cast, delete, func, insert, literal, select, text
from sqlalchemy.exc import DatabaseError

from ...extensions import db
from ...models import Account, AccountDayBalance, AccountMonthBalance, Entry, Transaction
from ...store import dialect
from . import search


def month_of(day_column):
    """The first day of the month of a date column, in the store's own dialect."""
    if dialect.is_postgresql():
        return cast(func.date_trunc("month", day_column), Date)
    return func.substr(day_column, 1, 8) + literal("01")


def _from_entries(by_month: bool):
    key = month_of(Transaction.occurred_on) if by_month else Transaction.occurred_on
    return (
        select(key.label("key"), Entry.account_id, func.sum(Entry.amount_cents).label("cents"))
        .join(Transaction, Transaction.id == Entry.transaction_id)
        .group_by(key, Entry.account_id)
    )


BATCH = 5000  # rows fetched at a time by each of the two streams compared


def _figures(rows) -> Iterator[tuple[tuple[str, int], int]]:
    """((date text, account id), cents) of rows in key order, zeros dropped (a
    missing row means 0)."""
    for key, account_id, cents in rows:
        if int(cents) != 0:
            yield (str(key)[:10], int(account_id)), int(cents)


def _merge(expected, stored) -> Iterator[tuple[tuple[str, int], int, int]]:
    """(key, want, have) for every key where two key-ordered streams of figures differ."""
    want, have = next(expected, None), next(stored, None)
    while want is not None or have is not None:
        if have is None or (want is not None and want[0] < have[0]):
            assert want is not None
            yield want[0], want[1], 0
            want = next(expected, None)
        elif want is None or have[0] < want[0]:
            yield have[0], 0, have[1]
            have = next(stored, None)
        else:
            if want[1] != have[1]:
                yield want[0], want[1], have[1]
            want, have = next(expected, None), next(stored, None)


def _unbalanced() -> list[str]:
    query = (
        select(Transaction.id, func.count(Entry.id), func.coalesce(func.sum(Entry.amount_cents), 0))
        .outerjoin(Entry, Entry.transaction_id == Transaction.id)
        .group_by(Transaction.id)
        .having((func.count(Entry.id) < 2) | (func.coalesce(func.sum(Entry.amount_cents), 0) != 0))
        .order_by(Transaction.id)
    )
    return [
        f"transactions {tx_id}: {n} entries summing to {int(total)} (must be >= 2 summing to 0)"
        for tx_id, n, total in db.session.execute(query)
    ]


def differences() -> list[str]:
    """One line per derived figure that differs from the entries (empty: all exact)."""
    return _unbalanced() + list(balance_table_differences())


def balance_table_differences() -> Generator[str, None, None]:
    """One line per figure of account_day_balances and account_month_balances that
    differs from the aggregate of the entries, in table, date and account order.

    Both sides are read in key order as two streams (BATCH rows at a time, the
    database sorting) and merged, so memory stays flat however many days and
    accounts the books hold. `ledger-service check` lists every line; `verify` stops
    at the first (close the generator to end the reads early)."""
    names = dict(db.session.execute(select(Account.id, Account.name)).all())
    for model, key_column, by_month in (
        (AccountDayBalance, AccountDayBalance.day, False),
        (AccountMonthBalance, AccountMonthBalance.month, True),
    ):
        expected = _from_entries(by_month).order_by("key", Entry.account_id)
        stored = select(key_column, model.account_id, model.cents).order_by(
            key_column, model.account_id
        )
        with _stream(expected) as want, _stream(stored) as have:
            for (day, account_id), cents, stored_cents in _merge(_figures(want), _figures(have)):
                yield (
                    f"{model.__tablename__} {day} account {account_id}"
                    f" ({names.get(account_id, 'unknown')}):"
                    f" stored {stored_cents}, entries give {cents}"
                )


def _stream(query):
    """The rows of query, fetched BATCH at a time (PostgreSQL: a server-side cursor)."""
    return db.session.execute(query.execution_options(yield_per=BATCH))


def rebuild() -> None:
    """Replace both derived tables by fresh aggregates over the entries (flush only)."""
    db.session.execute(delete(AccountMonthBalance))
    db.session.execute(delete(AccountDayBalance))
    # Inserted in key order, so each date's rows sit together on disk, as they do
    # when the triggers build the tables day by day.
    day = _from_entries(by_month=False).order_by("key", Entry.account_id)
    db.session.execute(insert(AccountDayBalance).from_select(["day", "account_id", "cents"], day))
    month_key = month_of(AccountDayBalance.day)
    db.session.execute(
        insert(AccountMonthBalance).from_select(
            ["month", "account_id", "cents"],
            select(month_key, AccountDayBalance.account_id, func.sum(AccountDayBalance.cents))
            .group_by(month_key, AccountDayBalance.account_id)
            .order_by(month_key, AccountDayBalance.account_id),
        )
    )


SEARCH_TABLE = search.FTS_TABLE
SEARCH_DIFFERS = (
    f"{SEARCH_TABLE}: the description search index differs from the descriptions"
    " (repair rebuilds it)"
)


def _has_search_table() -> bool:
    if not dialect.is_sqlite():
        return False
    return search.has_sqlite_table(db.session.connection())


def search_index_differences() -> list[str]:
    """SQLite: one line when the FTS5 index disagrees with transactions.description.

    The tail goes into the index first, in this write unit and committed with it (the
    trigger's next batch then starts above the new mark); on a difference both roll
    back to the savepoint (an index FTS5 finds corrupt may also refuse the tail)."""
    if not _has_search_table():
        return []
    try:
        with db.session.begin_nested():
            search.index_tail(db.session.connection())
            for table in _search_tables():
                db.session.execute(
                    text(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
                )
    except DatabaseError:
        return [SEARCH_DIFFERS]
    return []


def _search_tables() -> list[str]:
    """The FTS5 tables kept under the mark: the trigram one, and the words' (migration
    0026) when present. Both are checked and rebuilt together (one line, one repair)."""
    words = search.has_words_table(db.session.connection())
    return [SEARCH_TABLE, *([search.WORDS_TABLE] if words else [])]


def rebuild_search_index() -> None:
    """SQLite: rebuild the FTS5 indexes from the descriptions, every one, so the mark
    goes to the newest id (flush only)."""
    if _has_search_table():
        for table in _search_tables():
            db.session.execute(text(f"INSERT INTO {table} ({table}) VALUES ('rebuild')"))
        search.mark_all_indexed(db.session.connection())
