"""A statement line's status and candidates (docs/statements.md, "What each line's
status means"), worked out at upload and again on every read of the statement.

A line whose stored status is `duplicate`, `posted`, `matched` or `ignored` keeps it.
A waiting line (`new` or `match`, or a line being uploaded) is worked out, in order:

- `duplicate`: a transaction of the statement's account holds the line's bank
  reference with the same amount (`transaction_id` = the lowest such id); or an
  earlier statement of the account had a line of that reference and amount that was
  ignored (`transaction_id` null); or, for a line without a reference, earlier
  statements of the account had at least k lines of the same booked_on, amount_cents,
  payee and memo that were posted, matched or ignored, the line being the k-th such
  line of its file (`transaction_id` null).
- `match`: else its first candidate when that one is certain (see `certain`).
- `new`: anything else, keeping its candidates for a person to choose.

Words (`words`): a text's runs of letters and digits, case-folded, of at least three
characters; a line's are its payee's, memo's and bank_ref's, a transaction's its
description's. Candidates: the transactions with an entry in the account of exactly
the line's amount that holds no bank reference and is not reconciled, dated from
BACK_DAYS before the line to FORWARD_DAYS after it; ranked by the words shared (more
first), then the distance in days, then the lowest id. The transaction of a posted or
matched line of the account's statements, or the `match` of an earlier waiting line
of the same statement, is none.

Every question is one pass over the whole statement, never one per line: the
duplicates through the partial unique index on entries (account_id, bank_ref,
amount_cents) (migration 0021) and one read of the earlier statements' lines, the
candidates from the transactions dated inside the statement's window (the listing's
date index) and their entries in the account; the ranking per line is made in memory
(the window's candidates of each amount sorted by day and indexed by word once,
each line bisecting its own days and reading only the candidates sharing a word with
it, then the nearest others: `Ranking`).
"""

from __future__ import annotations

import bisect
import functools
import heapq
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

import orjson
from sqlalchemy import Date, bindparam, select, text

from ...extensions import db
from ...models import Entry, Statement, StatementLine, Transaction
from ...store import dialect
from ..errors import BadRequestError, ConflictError
from ..ledger import lock, validate

BACK_DAYS = 60  # a candidate is dated at most this many days before the line
FORWARD_DAYS = 7  # ... and at most this many after it
WORDLESS_DAYS = 3  # a line without words: its only candidate, at most this far
SHOWN = 5  # the candidates served with each line
KEPT = ("duplicate", "posted", "matched", "ignored")  # stored statuses never worked out
DONE = ("posted", "matched", "ignored")  # a person acted on the line
_WORD = re.compile(r"[^\W_]+")

# SQLite: every reference in one statement too (one JSON array), not a chunked IN list,
# so a read sends as many statements for one line as for thousands.
_HOLDERS_SQLITE = text(
    "SELECT bank_ref, amount_cents, transaction_id FROM entries"
    " WHERE account_id = :account_id AND bank_ref IS NOT NULL"
    " AND bank_ref IN (SELECT value FROM json_each(:refs))"
    " ORDER BY transaction_id"
)


# PostgreSQL: every reference in one statement (one array), not a chunked IN list.
_HOLDERS_POSTGRESQL = text(
    "SELECT bank_ref, amount_cents, transaction_id FROM entries"
    " WHERE account_id = :account_id AND bank_ref = ANY (CAST(:refs AS text[]))"
    " ORDER BY transaction_id"
)


def holders(account_id: int, refs: Iterable[str]) -> dict[tuple[str, int], int]:
    """(bank_ref, amount_cents) -> the lowest id of a transaction whose entry in the
    account holds that reference with that amount."""
    found: dict[tuple[str, int], int] = {}
    wanted = sorted(set(refs))
    if not wanted:
        return found
    if dialect.is_postgresql():
        rows = db.session.execute(_HOLDERS_POSTGRESQL, {"account_id": account_id, "refs": wanted})
    else:
        refs = orjson.dumps(wanted).decode()
        rows = db.session.execute(_HOLDERS_SQLITE, {"account_id": account_id, "refs": refs})
    for ref, cents, tx_id in rows:
        found.setdefault((str(ref), int(cents)), int(tx_id))
    return found


# PostgreSQL: the window's transaction ids first (the date index), then the account's
# entries among them (ix_entries_account_id_amount, one probe each). Joined the plain
# way, the planner read every entry of the account (a busy bank account's whole
# history) and hashed it against the window.
_CANDIDATES_POSTGRESQL = text(
    """
    SELECT t.occurred_on, t.id, e.amount_cents, t.description
    FROM entries e JOIN transactions t ON t.id = e.transaction_id
    WHERE e.account_id = :account_id
      AND e.transaction_id = ANY (ARRAY(
          SELECT id FROM transactions WHERE occurred_on BETWEEN :start AND :end))
      AND e.bank_ref IS NULL AND NOT e.reconciled
    """
).bindparams(bindparam("start", type_=Date()), bindparam("end", type_=Date()))


def words(*texts: str | None) -> frozenset[str]:
    """The words of the texts: runs of letters and digits, case-folded, of at least
    three characters."""
    found: frozenset[str] = frozenset()
    for said in texts:
        if said:
            found |= _words_of(said)
    return found


@functools.lru_cache(maxsize=65536)
def _words_of(said: str) -> frozenset[str]:
    """One text's words; kept for the texts met again (every read of a statement works
    its waiting lines out again, over the same payees and descriptions)."""
    return frozenset(w for w in _WORD.findall(said.casefold()) if len(w) >= 3)


def line_words(line) -> frozenset[str]:
    return words(line.payee, line.memo, line.bank_ref)


@dataclass(frozen=True)
class Candidate:
    transaction_id: int
    occurred_on: date
    description: str
    words: frozenset[str] = field(repr=False)


@dataclass
class Decision:
    """A line's status, transaction and candidates as served."""

    status: str
    transaction_id: int | None
    candidates: list[dict] = field(default_factory=list)


def _pool(account_id: int, start: date, end: date) -> dict[int, list[Candidate]]:
    """amount_cents -> the entries' transactions in the account dated start..end that
    hold no bank reference and are not reconciled, by day then id."""
    if dialect.is_postgresql():
        rows = db.session.execute(
            _CANDIDATES_POSTGRESQL, {"account_id": account_id, "start": start, "end": end}
        )
    else:
        rows = db.session.execute(
            select(
                Transaction.occurred_on, Transaction.id, Entry.amount_cents, Transaction.description
            )
            .select_from(Transaction)
            .join(Entry, Entry.transaction_id == Transaction.id)
            .where(
                Transaction.occurred_on.between(start, end),
                Entry.account_id == account_id,
                Entry.bank_ref.is_(None),
                Entry.reconciled.is_(False),
            )
        )
    by_amount: dict[int, dict[int, Candidate]] = {}
    for day, tx_id, cents, description in rows:
        same = by_amount.setdefault(int(cents), {})
        if int(tx_id) not in same:  # two entries of one amount: one candidate
            same[int(tx_id)] = Candidate(int(tx_id), day, description, words(description))
    spoken = lines_taking(account_id, start, end)
    return {
        cents: sorted(
            (c for c in same.values() if c.transaction_id not in spoken),
            key=lambda c: (c.occurred_on, c.transaction_id),
        )
        for cents, same in by_amount.items()
    }


def lines_taking(account_id: int, start: date, end: date) -> set[int]:
    """The transactions dated start..end of the posted or matched lines of the
    account's statements (one query, whatever the window holds)."""
    rows = db.session.execute(
        select(StatementLine.transaction_id)
        .join(Statement, Statement.id == StatementLine.statement_id)
        .join(Transaction, Transaction.id == StatementLine.transaction_id)
        .where(
            Statement.account_id == account_id,
            StatementLine.status.in_(("posted", "matched")),
            Transaction.occurred_on.between(start, end),
        )
    )
    return {int(t) for t in rows.scalars() if t is not None}


def _earlier(account_id: int, before: int | None):
    """The conditions naming the lines of the account's statements before `before`
    (all of them: None)."""
    where = [Statement.account_id == account_id]
    if before is not None:
        where.append(Statement.id < before)
    return where


REF_SLACK_DAYS = 7  # an ignored line's reference is looked for this far around


def _done_before(account_id: int, before: int | None, start: date, end: date):
    """The acted-on lines (posted, matched, ignored) of the account's statements before
    `before`, dated start - REF_SLACK_DAYS .. end + REF_SLACK_DAYS: (alike, ignored).
    alike: (booked_on, amount_cents, payee, memo) -> how many of those dated start..end;
    ignored: (bank_ref, amount_cents) of the ignored ones holding a reference."""
    slack = timedelta(days=REF_SLACK_DAYS)
    rows = db.session.execute(
        select(
            StatementLine.booked_on,
            StatementLine.amount_cents,
            StatementLine.payee,
            StatementLine.memo,
            StatementLine.bank_ref,
            StatementLine.status,
        )
        .join(Statement, Statement.id == StatementLine.statement_id)
        .where(
            *_earlier(account_id, before),
            StatementLine.status.in_(DONE),
            StatementLine.booked_on.between(start - slack, end + slack),
        )
    )
    alike: Counter = Counter()
    ignored: set[tuple[str, int]] = set()
    for day, cents, payee, memo, ref, state in rows:
        if start <= day <= end:
            alike[(day, int(cents), payee, memo)] += 1
        if state == "ignored" and ref:
            ignored.add((str(ref), int(cents)))
    return alike, ignored


class _Amount:
    """The window's candidates of one amount, indexed once per read: their days (as
    ordinals, for bisection), ids, a word index (word -> sorted positions), and the
    positions taken by an earlier line's `match` (sorted, and two skip lists that find
    the nearest position not taken either side in amortized near-constant time)."""

    def __init__(self, pool: list[Candidate]):
        self.pool = pool
        self.days = [c.occurred_on.toordinal() for c in pool]
        self.ids = [c.transaction_id for c in pool]
        index: dict[str, list[int]] = {}
        for position, c in enumerate(pool):
            for word in c.words:
                index.setdefault(word, []).append(position)
        self.index = index
        self.taken: list[int] = []  # sorted positions
        self.heavy: dict[tuple, tuple[dict[int, int], _Order]] = {}  # Ranking._heavy
        n = len(pool)
        self._right = list(range(n + 1))  # p -> a position >= p not taken (n: none)
        self._left = list(range(n + 1))  # p + 1 -> (a position <= p not taken) + 1

    def take(self, position: int) -> None:
        bisect.insort(self.taken, position)
        self._right[position] = position + 1
        self._left[position + 1] = position

    def free_right(self, p: int) -> int:
        """The first position >= p not taken (len(pool): none)."""
        right = self._right
        root = p
        while right[root] != root:
            root = right[root]
        while right[p] != root:
            right[p], p = root, right[p]
        return root

    def free_left(self, p: int) -> int:
        """The last position <= p not taken (-1: none)."""
        left = self._left
        root = p + 1
        while left[root] != root:
            root = left[root]
        q = p + 1
        while left[q] != root:
            left[q], q = root, left[q]
        return root - 1


class _Order:
    """Candidates ranked, read from `start` (those before it all taken)."""

    def __init__(self, ranked: list[tuple[int, int, int, int]]):
        self.ranked = ranked
        self.start = 0


class _Both:
    """`p in` either of two dicts."""

    def __init__(self, one: dict, other: dict):
        self.one, self.other = one, other

    def __contains__(self, p: object) -> bool:
        return p in self.one or p in self.other


class Ranking:
    """The candidates of a statement's waiting lines, in file order (`decide`): each
    line's first SHOWN ranked and how many there are, the ones taken by an earlier
    line's `match` left out. Per line it costs O(log n) bisections, plus the positions
    in its window of each light word it shares with some but not all of the window's
    candidates (at most HEAVY each), plus the few nearest candidates walked to fill
    SHOWN. A word that every candidate in the window holds adds one to each of them and
    is counted once. The heavy words (more than HEAVY candidates in the window hold
    them, not all) are counted and ranked once per day, window and set of heavy words
    of the amount: the lines of a day sharing the same common word read them once.
    Left expensive: lines each with a different set of heavy words (the positions of
    those words in the window, read per line; docs/statements.md)."""

    HEAVY = 64  # a word more candidates in a line's window hold: counted once per day
    KEPT_HEAVY = 16  # the heavy words' counts kept per amount (each up to the window)

    def __init__(self, pool: dict[int, list[Candidate]]):
        self.pool = pool
        self._amounts: dict[int, _Amount] = {}
        self._where: dict[int, list[tuple[int, int]]] | None = None  # id -> (cents, pos)
        self.taken: set[int] = set()

    def _amount(self, cents: int) -> _Amount | None:
        found = self._amounts.get(cents)
        if found is None and self.pool.get(cents):
            found = self._amounts[cents] = _Amount(self.pool[cents])
            for tx_id in self.taken:  # taken before this amount was first ranked
                for other, position in self._positions(tx_id):
                    if other == cents:
                        found.take(position)
        return found

    def _positions(self, tx_id: int) -> list[tuple[int, int]]:
        if self._where is None:
            self._where = {}
            for cents, same in self.pool.items():
                for position, c in enumerate(same):
                    self._where.setdefault(c.transaction_id, []).append((cents, position))
        return self._where.get(tx_id, [])

    def take(self, tx_id: int) -> None:
        """An earlier line's `match`: no candidate of the later lines, of any amount."""
        if tx_id in self.taken:
            return
        self.taken.add(tx_id)
        for cents, position in self._positions(tx_id):
            same = self._amounts.get(cents)
            if same is not None:
                same.take(position)

    def rank(self, line, said: frozenset[str]) -> tuple[list[tuple], int]:
        """The line's first SHOWN candidates, best first, as (-shared, distance, id,
        candidate), and how many candidates it has."""
        same = self._amount(int(line.amount_cents))
        if same is None:
            return [], 0
        day = line.booked_on.toordinal()
        days, ids, pool = same.days, same.ids, same.pool
        low = bisect.bisect_left(days, day - BACK_DAYS)
        high = bisect.bisect_right(days, day + FORWARD_DAYS)
        taken_inside = bisect.bisect_left(same.taken, high) - bisect.bisect_left(same.taken, low)
        count = high - low - taken_inside
        if count <= 0:
            return [], 0
        everyone = 0  # the words every candidate in the window holds
        heavy: list[str] = []  # those many but not all of them hold
        shared: dict[int, int] = {}  # position -> the light words it holds
        for word in sorted(said):
            postings = same.index.get(word)
            if not postings:
                continue
            first = bisect.bisect_left(postings, low)
            last = bisect.bisect_left(postings, high)
            if last - first == high - low:
                everyone += 1
            elif last - first > self.HEAVY:
                heavy.append(word)
            else:
                for position in postings[first:last]:
                    shared[position] = shared.get(position, 0) + 1
        taken = self.taken
        held: dict[int, int] = {}  # position -> the heavy words it holds
        hits = []
        if heavy:
            held, order = self._heavy(same, day, low, high, tuple(heavy))
            got = 0
            for i in range(order.start, len(order.ranked)):
                r = order.ranked[i]
                if r[2] in taken:
                    if i == order.start:
                        order.start += 1  # taken for good: never read again
                    continue
                if r[3] in shared:
                    continue
                hits.append((r[0] - everyone, r[1], r[2], pool[r[3]]))
                got += 1
                if got == SHOWN:
                    break
        hits.extend(
            (-(everyone + k + held.get(p, 0)), abs(days[p] - day), ids[p], pool[p])
            for p, k in shared.items()
            if ids[p] not in taken
        )
        best = heapq.nsmallest(SHOWN, hits, key=lambda r: r[:3])
        if len(best) < SHOWN:
            skip = _Both(shared, held)
            for p in self._nearest(same, day, low, high, skip, SHOWN - len(best)):
                best.append((-everyone, abs(days[p] - day), ids[p], pool[p]))
        return best, count

    def _heavy(self, same: _Amount, day: int, low: int, high: int, heavy: tuple[str, ...]):
        """The window's candidates holding some of the heavy words: position -> how
        many, and those ranked by (-how many, distance, id), worked out once per day,
        window and heavy words of the amount (lines alike read them again)."""
        key = (day, low, high, heavy)
        found = same.heavy.get(key)
        if found is None:
            held: dict[int, int] = {}
            for word in heavy:
                postings = same.index[word]
                first = bisect.bisect_left(postings, low)
                last = bisect.bisect_left(postings, high)
                for position in postings[first:last]:
                    held[position] = held.get(position, 0) + 1
            days, ids = same.days, same.ids
            ranked = sorted((-k, abs(days[p] - day), ids[p], p) for p, k in held.items())
            if len(same.heavy) >= self.KEPT_HEAVY:  # bounded: lines each alike to none
                same.heavy.clear()
            found = same.heavy[key] = (held, _Order(ranked))
        return found

    @staticmethod
    def _nearest(same: _Amount, day: int, low: int, high: int, skip, need: int) -> list[int]:
        """Up to `need` positions in [low, high) neither taken nor in `skip`, nearest
        the day first (equal distance: the lower id first)."""
        days, ids = same.days, same.ids
        found: list[int] = []
        left = bisect.bisect_left(days, day) - 1  # days before: left of here
        right = left + 1  # the day itself and after
        while len(found) < need:
            lp = same.free_left(left) if left >= low else -1
            rp = same.free_right(right) if right < high else high
            has_left, has_right = lp >= low, rp < high
            if not has_left and not has_right:
                break
            d_left = day - days[lp] if has_left else None
            d_right = days[rp] - day if has_right else None
            if d_right is None or (d_left is not None and d_left < d_right):
                d_right = None
            elif d_left is None or d_right < d_left:
                d_left = None
            runs = []  # [head, end): one day's positions each side, ids ascending
            if d_left is not None:
                start = bisect.bisect_left(days, days[lp], low)
                runs.append([same.free_right(start), lp + 1])
                left = start - 1
            if d_right is not None:
                right = bisect.bisect_right(days, days[rp], rp, high)
                runs.append([rp, right])
            while len(found) < need:  # the day's (or two days') positions in id order
                heads = [(ids[head], run) for run in runs if (head := run[0]) < run[1]]
                if not heads:
                    break
                run = min(heads, key=lambda h: h[0])[1]
                p = run[0]
                run[0] = same.free_right(p + 1)
                if p not in skip:
                    found.append(p)
        return found


def certain(said: frozenset[str], best: list[tuple], count: int) -> bool:
    """Whether the first of the line's candidates (`best`: the first ones ranked,
    `count`: how many there are) is its `match`: it shares a word with the line and
    more than the second does; or the line has no words and it is the only candidate,
    at most WORDLESS_DAYS from the line."""
    if not best:
        return False
    first = best[0]
    if first[0] < 0:
        return count == 1 or first[0] < best[1][0]
    return not said and count == 1 and first[1] <= WORDLESS_DAYS


def served_candidate(ranked: tuple) -> dict:
    shared, _, tx_id, c = ranked
    return {
        "transaction_id": tx_id,
        "occurred_on": c.occurred_on.isoformat(),
        "description": c.description,
        "shared_words": -shared,
    }


def decide(account_id: int, lines: Sequence, before: int | None = None) -> list[Decision]:
    """Each line's Decision, in file order (see the module docstring): `lines` are the
    stored rows of statement `before` (their status read: a kept one stays), or the
    lines of a file being uploaded (no status: every one worked out, against every
    statement of the account)."""
    if not lines:
        return []
    decided: list[Decision | None] = []
    waiting = []
    for line in lines:
        kept = getattr(line, "status", None)
        if kept in KEPT:
            tx_id = line.transaction_id
            decided.append(Decision(kept, None if tx_id is None else int(tx_id)))
        else:
            decided.append(None)
            waiting.append(line)
    if not waiting:
        return [d for d in decided if d is not None]
    held = holders(account_id, (line.bank_ref for line in waiting if line.bank_ref))
    days = [line.booked_on for line in lines]
    alike, ignored = _done_before(account_id, before, min(days), max(days))
    pool = _pool(
        account_id,
        min(days) - timedelta(days=BACK_DAYS),
        max(days) + timedelta(days=FORWARD_DAYS),
    )
    seen: Counter = Counter()  # the file's lines without a reference, by their key
    ranking = Ranking(pool)
    out: list[Decision] = []
    for line, done in zip(lines, decided, strict=True):
        key = None
        if not line.bank_ref:
            key = (line.booked_on, int(line.amount_cents), line.payee, line.memo)
            seen[key] += 1
        if done is not None:
            out.append(done)
            continue
        reference = (line.bank_ref, int(line.amount_cents)) if line.bank_ref else None
        if reference is not None and reference in held:
            out.append(Decision("duplicate", held[reference]))
            continue
        if reference in ignored or (key is not None and seen[key] <= alike[key]):
            out.append(Decision("duplicate", None))
            continue
        said = line_words(line)
        best, count = ranking.rank(line, said)
        shown = [served_candidate(r) for r in best]
        if certain(said, best, count):
            ranking.take(best[0][2])
            out.append(Decision("match", best[0][2], shown))
        else:
            out.append(Decision("new", None, shown))
    return out


WAITING = ("new", "match")  # stored statuses a read works out again

# A statement's stored lines in order (GET /statements/{id} reads them with this too).
STATEMENT_LINES = (
    select(
        StatementLine.line_id,
        StatementLine.booked_on,
        StatementLine.amount_cents,
        StatementLine.payee,
        StatementLine.memo,
        StatementLine.bank_ref,
        StatementLine.status,
        StatementLine.transaction_id,
        StatementLine.payee_key,
    )
    .where(StatementLine.statement_id == bindparam("statement_id"))
    .order_by(StatementLine.line_id)
)


def new_now(account_id: int, statement_id: int) -> set[int]:
    """The line_ids of the statement's lines a read serves as `new` now: `decide` over
    the whole statement, as GET /statements/{id} works them out (a line stored `new`
    may read as `match` or `duplicate` since, one stored `match` as `new`)."""
    rows = db.session.execute(STATEMENT_LINES, {"statement_id": statement_id}).all()
    decided = decide(account_id, rows, statement_id)
    return {int(r.line_id) for r, d in zip(rows, decided, strict=True) if d.status == "new"}


def qualifying_entry(account_id: int, tx_id: int, amount_cents: int, booked_on: date) -> int:
    """The entry of transaction `tx_id` a line of `amount_cents` booked on `booked_on`
    may be matched to (the lowest id that qualifies): one that would make it a
    candidate, whatever its date and words. 400 for an unknown transaction; 409 saying
    why one does not qualify, or when the transaction's day or the line's is on or
    before the lock date (a match clears an entry for that bank line as a post would
    book it on the line's day)."""
    if not validate.INT64_MIN <= tx_id <= validate.INT64_MAX:
        raise BadRequestError(f"there is no transaction {tx_id}")
    day = db.session.execute(
        select(Transaction.occurred_on).where(Transaction.id == tx_id)
    ).scalar()
    if day is None:
        raise BadRequestError(f"there is no transaction {tx_id}")
    entries = db.session.execute(
        select(Entry.id, Entry.bank_ref, Entry.reconciled)
        .where(
            Entry.transaction_id == tx_id,
            Entry.account_id == account_id,
            Entry.amount_cents == amount_cents,
        )
        .order_by(Entry.id)
    ).all()
    if not entries:
        raise ConflictError(
            f"transaction {tx_id} has no entry of {amount_cents} cents in account {account_id}"
        )
    free = [e for e in entries if e.bank_ref is None and not e.reconciled]
    if not free:
        held = any(e.bank_ref is not None for e in entries)
        why = "holds a bank reference" if held else "is reconciled"
        raise ConflictError(f"transaction {tx_id}: its entry in account {account_id} {why}")
    if lines_taking(account_id, day, day) & {tx_id}:
        raise ConflictError(
            f"transaction {tx_id} is already the transaction of a posted or matched line "
            "of this account's statements"
        )
    lock.refuse_if_locked(min(day, booked_on))  # the earlier of the two: one read
    return int(free[0].id)
