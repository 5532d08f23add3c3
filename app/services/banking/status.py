"""A statement line's status at upload, and the transaction a line may be matched to
(docs/statements.md, "What each line's status means").

- `duplicate`: a transaction of the statement's account already holds the line's
  bank reference with the same amount (an entry posted or matched from any earlier
  statement); `transaction_id` is it (the lowest such id).
- `match`: else, a transaction with an entry in the account of exactly the line's
  amount, dated at most WINDOW_DAYS from the line's date, whose entry holds no bank
  reference and is not reconciled, and that no earlier line of the same statement
  took; `transaction_id` is the nearest in date, then the lowest id.
- `new`: anything else.

Both questions are one pass each over the whole statement: the duplicates through
the partial unique index on entries (account_id, bank_ref, amount_cents), the key
that books one bank line once (migration 0021), the candidates from the
transactions dated inside the statement's window (the listing's date index) and
their entries in the account; the choice per line is made in memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, timedelta

from sqlalchemy import Date, bindparam, select, text

from ...extensions import db
from ...models import Entry, Transaction
from ...store import dialect
from ..errors import BadRequestError, ConflictError
from ..ledger import lock, validate

WINDOW_DAYS = 3
_HOLDERS = (
    select(Entry.bank_ref, Entry.amount_cents, Entry.transaction_id)
    .where(
        Entry.account_id == bindparam("account_id"),
        Entry.bank_ref.in_(bindparam("refs", expanding=True)),
    )
    .order_by(Entry.transaction_id)
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
        batches = [
            db.session.execute(_HOLDERS_POSTGRESQL, {"account_id": account_id, "refs": wanted})
        ]
    else:
        batches = [
            db.session.execute(_HOLDERS, {"account_id": account_id, "refs": chunk})
            for chunk in dialect.in_chunks(wanted)
        ]
    for rows in batches:
        for ref, cents, tx_id in rows:
            found.setdefault((str(ref), int(cents)), int(tx_id))
    return found


# PostgreSQL: the window's transaction ids first (the date index), then the account's
# entries among them (ix_entries_account_id_amount, one probe each). Joined the plain
# way, the planner read every entry of the account (a busy bank account's whole
# history) and hashed it against the window.
_CANDIDATES_POSTGRESQL = text(
    """
    SELECT t.occurred_on, t.id, e.amount_cents
    FROM entries e JOIN transactions t ON t.id = e.transaction_id
    WHERE e.account_id = :account_id
      AND e.transaction_id = ANY (ARRAY(
          SELECT id FROM transactions WHERE occurred_on BETWEEN :start AND :end))
      AND e.bank_ref IS NULL AND NOT e.reconciled
    """
).bindparams(bindparam("start", type_=Date()), bindparam("end", type_=Date()))


def _candidates(account_id: int, start: date, end: date) -> dict[int, list[tuple[date, int]]]:
    """amount_cents -> [(occurred_on, transaction_id)] of the entries in the account
    dated start..end that hold no bank reference and are not reconciled."""
    if dialect.is_postgresql():
        rows = db.session.execute(
            _CANDIDATES_POSTGRESQL, {"account_id": account_id, "start": start, "end": end}
        )
    else:
        rows = db.session.execute(
            select(Transaction.occurred_on, Transaction.id, Entry.amount_cents)
            .select_from(Transaction)
            .join(Entry, Entry.transaction_id == Transaction.id)
            .where(
                Transaction.occurred_on.between(start, end),
                Entry.account_id == account_id,
                Entry.bank_ref.is_(None),
                Entry.reconciled.is_(False),
            )
        )
    by_amount: dict[int, list[tuple[date, int]]] = {}
    for day, tx_id, cents in rows:
        by_amount.setdefault(int(cents), []).append((day, int(tx_id)))
    return by_amount


def decide(account_id: int, lines: Sequence) -> list[tuple[str, int | None]]:
    """(status, transaction_id) for each line (anything with booked_on, amount_cents,
    bank_ref), in order; see the module docstring."""
    if not lines:
        return []
    held = holders(account_id, (line.bank_ref for line in lines if line.bank_ref))
    days = [line.booked_on for line in lines]
    window = timedelta(days=WINDOW_DAYS)
    candidates = _candidates(account_id, min(days) - window, max(days) + window)
    taken: set[int] = set()
    decided: list[tuple[str, int | None]] = []
    for line in lines:
        holder = held.get((line.bank_ref, line.amount_cents)) if line.bank_ref else None
        if holder is not None:
            decided.append(("duplicate", holder))
            continue
        best = None
        for day, tx_id in candidates.get(line.amount_cents, ()):
            distance = abs((day - line.booked_on).days)
            if distance <= WINDOW_DAYS and tx_id not in taken:
                key = (distance, tx_id)
                if best is None or key < best:
                    best = key
        if best is None:
            decided.append(("new", None))
        else:
            taken.add(best[1])
            decided.append(("match", best[1]))
    return decided


def qualifying_entry(account_id: int, tx_id: int, amount_cents: int, booked_on: date) -> int:
    """The entry of transaction `tx_id` a line of `amount_cents` booked on `booked_on`
    may be matched to (the lowest id that qualifies); 400 for an unknown transaction,
    409 saying why one does not qualify (as decide's `match`), or when the
    transaction's day or the line's is on or before the lock date (a match clears an
    entry for that bank line as a post would book it on the line's day)."""
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
    if abs((day - booked_on).days) > WINDOW_DAYS:
        raise ConflictError(
            f"transaction {tx_id} is dated {day.isoformat()}, more than {WINDOW_DAYS} days "
            f"from the line's {booked_on.isoformat()}"
        )
    free = [e for e in entries if e.bank_ref is None and not e.reconciled]
    if not free:
        held = any(e.bank_ref is not None for e in entries)
        why = "holds a bank reference" if held else "is reconciled"
        raise ConflictError(f"transaction {tx_id}: its entry in account {account_id} {why}")
    lock.refuse_if_locked(min(day, booked_on))  # the earlier of the two: one read
    return int(free[0].id)
