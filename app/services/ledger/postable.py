"""What a posting must pass before the store takes it: ONE set of checks, used by
record_transaction (transactions.py: one posting, then the store) and by the
browser's statement import (interchange/importer.py: a file's rows, all checked
before any is posted, and the preview, which checks them and posts nothing), so the
preview's refusals are the import's, word for word.

In the order record_transaction meets them (the first that fails is the answer):

1. checked(): the posting itself (the date, the description, the entries, the
   double-entry rule); nothing read.
2. refuse_at_post(): the books at post time, as _post names them when the store's
   checked insert wrote nothing: the lock date, then each account by id (unknown,
   else archived).
3. Balances.take(): the derived balance tables (migration 0002) stay 64-bit. The
   store refuses a posting whose per-day or per-month balance of an account would
   leave the range (RANGE_MESSAGE through store.refusals); record_transaction
   leaves that to the store, an import checks it here first (Books).

Nothing else a posting meets can refuse one that passed these, so the preview need
not post to know:
- the entries' foreign key to accounts is 2; `created_by` is the signed-in caller;
  every other column is filled by the service (the header's created_at, the entries'
  cleared and reconciled false, bank_ref null: no unique bank reference is touched);
- the balance trigger (PostgreSQL at commit, SQLite just before it) holds 1's rule;
- the description index (FTS5, pg_trgm) takes any text 1 allows (no NUL), and the
  text is valid Unicode (a request body holding a lone surrogate is refused whole,
  before any service runs);
- the audit event is a pending row no posting's content can make fail;
- schedule meeting (schedule_meeting.py) only marks an open occurrence met after the
  posting and raises nothing; ids come from 64-bit sequences.
What these read can change between the check and a later posting (a PUT /books/lock,
an archive, another posting near the 64-bit edge): record_transaction meets the
store's own checks then, and names the same refusal (refuse_at_post, store.refusals).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import NamedTuple

from sqlalchemy import BigInteger, bindparam, cast, select

from ...extensions import db
from ...models import Account, AccountDayBalance, AccountMonthBalance
from ...store import dialect
from ..errors import RANGE_MESSAGE, BadRequestError, ServiceError
from . import lock, validate

DESCRIPTION_MAX = 2000
ENTRY_CHUNK = 1000  # entries per INSERT: x3 parameters stays under both stores' limits


class Posting(NamedTuple):
    day: date
    description: str
    entries: list[tuple[int, int]]


def check_balanced(entries: list[tuple[int, int]]) -> None:
    """The double-entry rule: at least two entries, summing to zero."""
    if len(entries) < 2:
        raise BadRequestError(f"a transaction needs at least 2 entries; got {len(entries)}")
    total = sum(amount for _, amount in entries)
    if total != 0:
        raise BadRequestError(f"entries must sum to 0; the {len(entries)} entries sum to {total}")


def checked(occurred_on, description, entries) -> Posting:
    """The posting's own checks, in record_transaction's order; 400 naming the first."""
    if occurred_on is None:
        raise BadRequestError("occurred_on is required")
    day = validate.date_value("occurred_on", occurred_on)
    description = validate.text("description", description, max_length=DESCRIPTION_MAX)
    parsed = validate.entries(entries)
    check_balanced(parsed)
    return Posting(day, description, parsed)


# Compared as BIGINT: an id beyond PostgreSQL's 32-bit INTEGER is simply unknown
# (not an "integer out of range" error). The accounts table is small. Built once
# (an expanding IN): constructing the statement per request cost more than running it.
_EXISTING_ACCOUNTS = select(Account.id, Account.archived).where(
    cast(Account.id, BigInteger).in_(bindparam("ids", expanding=True))
)


def accounts_found(account_ids) -> dict[int, bool]:
    """Archived or not, by id, of those of `account_ids` that exist."""
    connection = db.session.connection()
    return dict(connection.execute(_EXISTING_ACCOUNTS, {"ids": sorted(account_ids)}).all())


def refuse_at_post(day: date, account_ids, locked: date | None, found: dict[int, bool]) -> None:
    """The store's refusals of a checked posting dated `day` on `account_ids`, given
    the lock date `locked` and `found` (accounts_found): BooksLocked (409) when the
    day is locked, else 400 naming the lowest account id that is unknown or archived
    (an archived account takes no new entries)."""
    lock.refuse_locked(day, locked)
    for account_id in sorted(account_ids):
        if account_id not in found:
            raise BadRequestError(f"unknown account_id {account_id}")
        if found[account_id]:
            raise BadRequestError(f"account_id {account_id} is archived and takes no new entries")


def _in_range(cents: int) -> bool:
    return validate.INT64_MIN <= cents <= validate.INT64_MAX


class Balances:
    """The day and month balances (account_day_balances, account_month_balances) that
    some postings touch, read once, then moved posting by posting as the store's
    triggers move them (migrations 0002, 0003, 0018), so take() refuses exactly the
    postings the store would refuse as out of range when they are posted in turn."""

    def __init__(self, postings: list[Posting], known: set[int]):
        """`known`: the accounts that exist (accounts_found); only theirs are read (a
        posting naming another is refused before its balances matter, and an id
        beyond the accounts' INTEGER column is no key of these tables)."""
        self.sqlite = dialect.is_sqlite()
        self.day: dict[tuple[date, int], int] = {}
        self.month: dict[tuple[date, int], int] = {}
        accounts = sorted({a for p in postings for a, _ in p.entries} & known)
        if not accounts:
            return
        for table, key, into, days in (
            (AccountDayBalance, AccountDayBalance.day, self.day, {p.day for p in postings}),
            (AccountMonthBalance, AccountMonthBalance.month, self.month, _months(postings)),
        ):
            rows = db.session.execute(
                select(key, table.account_id, table.cents).where(
                    key.in_(sorted(days)), table.account_id.in_(accounts)
                )
            )
            into.update(((when, account_id), cents) for when, account_id, cents in rows)

    def take(self, posting: Posting) -> bool:
        """Whether the store keeps every balance the posting moves in 64 bits; if so,
        the posting is counted in (the next posting meets the balances after it)."""
        month = posting.day.replace(day=1)
        moved: dict[tuple[str, int], int] = {}
        if self.sqlite:
            # Row triggers: each entry, in the posting's order, adds to its day's and
            # its month's row; a sum that leaves 64 bits aborts (0003's range check).
            steps = [(a, c) for a, c in posting.entries]
        else:
            # One statement per ENTRY_CHUNK entries: the trigger sums each account's
            # entries of the statement (NUMERIC, stored as BIGINT), then adds the sum.
            steps = []
            for i in range(0, len(posting.entries), ENTRY_CHUNK):
                sums: dict[int, int] = defaultdict(int)
                for account_id, cents in posting.entries[i : i + ENTRY_CHUNK]:
                    sums[account_id] += cents
                if not all(_in_range(s) for s in sums.values()):
                    return False
                steps.extend(sums.items())
        for account_id, cents in steps:
            for name, table, when in (("day", self.day, posting.day), ("month", self.month, month)):
                key = (name, account_id)
                moved[key] = moved.get(key, table.get((when, account_id), 0)) + cents
                if not _in_range(moved[key]):
                    return False
        for (name, account_id), cents in moved.items():
            if name == "day":
                self.day[(posting.day, account_id)] = cents
            else:
                self.month[(month, account_id)] = cents
        return True


def _months(postings: list[Posting]) -> set[date]:
    return {p.day.replace(day=1) for p in postings}


class Books:
    """The books as a batch of postings meets them: the lock date, the accounts and the
    balances they touch, each read once (three queries however many postings)."""

    def __init__(self, postings: list[Posting]):
        self.locked = lock.locked_through()
        self.found = accounts_found({a for p in postings for a, _ in p.entries})
        self.balances = Balances(postings, set(self.found))

    def refusal(self, posting: Posting) -> ServiceError | None:
        """What the store would answer to this posting, posted after the earlier ones it
        took (refused ones are not counted in): its refusal, or None when taken."""
        try:
            refuse_at_post(posting.day, {a for a, _ in posting.entries}, self.locked, self.found)
        except ServiceError as err:
            return err
        if not self.balances.take(posting):
            return BadRequestError(RANGE_MESSAGE)
        return None
