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
(the window's candidates of each amount sorted by day, each line bisecting its own).
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


def _ranked(line, said: frozenset[str], pool: list[Candidate], taken: set[int]):
    """The line's candidates, best first: (-shared, distance, id, candidate)."""
    days = [c.occurred_on for c in pool]
    low = bisect.bisect_left(days, line.booked_on - timedelta(days=BACK_DAYS))
    high = bisect.bisect_right(days, line.booked_on + timedelta(days=FORWARD_DAYS))
    return [
        (
            -len(said & c.words),
            abs((c.occurred_on - line.booked_on).days),
            c.transaction_id,
            c,
        )
        for c in pool[low:high]
        if c.transaction_id not in taken
    ]


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
    taken: set[int] = set()
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
        ranked = _ranked(line, said, pool.get(int(line.amount_cents), []), taken)
        best = heapq.nsmallest(SHOWN, ranked, key=lambda r: r[:3])
        shown = [served_candidate(r) for r in best]
        if certain(said, best, len(ranked)):
            taken.add(best[0][2])
            out.append(Decision("match", best[0][2], shown))
        else:
            out.append(Decision("new", None, shown))
    return out


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
