"""Look-alikes of a posting, served as `possible_duplicates`: a hint, not a refusal,
shared by record_transaction's result and the browser's import preview (docs/mcp.md
"Retries, look-alikes and hints"). Not the file import's rule: that one skips a row
whose content fingerprint is already in the books (interchange/importer.py).

Another transaction is a look-alike when it is dated at most WINDOW_DAYS
before or after, and its entries are the same multiset of (account_id, amount_cents).
Newest first (date, then id), at most LIMIT ids.
"""

from __future__ import annotations

import bisect
from collections import Counter
from datetime import date, timedelta

from sqlalchemy import exists, select, tuple_

from ...extensions import db
from ...models import Entry, Transaction
from .validate import id_in_range

WINDOW_DAYS = 3
LIMIT = 5


BATCH = 64  # candidates examined per query, newest first, until LIMIT matches


def look_alikes(
    day: date, entries: list[tuple[int, int]], exclude_id: int | None = None
) -> list[int]:
    """Ids of transactions that look like the posting (day, entries); see the module.

    Candidates (in the window, with an entry of the posting's first (account, amount))
    are read newest first, BATCH at a time, and the reading stops as soon as LIMIT of
    them match: however many look-alikes the window holds (an import of thousands of
    identical rows), one posting costs a few short queries.
    """
    wanted = Counter((int(a), int(c)) for a, c in entries)
    account_id, amount = next(iter(wanted))
    base = (
        select(Transaction.id, Transaction.occurred_on)
        .where(
            Transaction.occurred_on.between(
                day - timedelta(days=WINDOW_DAYS), day + timedelta(days=WINDOW_DAYS)
            ),
            exists().where(
                Entry.transaction_id == Transaction.id,
                Entry.account_id == account_id,
                Entry.amount_cents == amount,
            ),
        )
        .order_by(Transaction.occurred_on.desc(), Transaction.id.desc())
        .limit(BATCH)
    )
    if exclude_id is not None:
        base = base.where(Transaction.id != exclude_id)
    matches: list[int] = []
    after = None
    while len(matches) < LIMIT:
        query = base
        if after is not None:
            query = query.where(tuple_(Transaction.occurred_on, Transaction.id) < after)
        batch = db.session.execute(query).all()
        if not batch:
            break
        found: dict[int, Counter] = {row.id: Counter() for row in batch}
        rows = db.session.execute(
            select(Entry.transaction_id, Entry.account_id, Entry.amount_cents).where(
                Entry.transaction_id.in_(list(found))
            )
        )
        for tx_id, entry_account, cents in rows:
            found[tx_id][(entry_account, cents)] += 1
        matches.extend(row.id for row in batch if found[row.id] == wanted)
        if len(batch) < BATCH:
            break
        after = tuple_(batch[-1].occurred_on, batch[-1].id)
    return matches[:LIMIT]


def look_alikes_of_many(
    postings: list[tuple[date, list[tuple[int, int]]]],
) -> list[list[int]]:
    """look_alikes for many postings at once (an import's rows), against the
    stored transactions only: one read of the rows' whole date window (with the
    entries of the transactions touching the rows' accounts), then a look-up per row
    (its multiset, then a binary search for its window), so an import costs one pass
    however many look-alikes the books hold.
    """
    wanted = [tuple(sorted((int(a), int(c)) for a, c in entries)) for _, entries in postings]
    if not postings:
        return []
    days = [day for day, _ in postings]
    start = min(days) - timedelta(days=WINDOW_DAYS)
    end = max(days) + timedelta(days=WINDOW_DAYS)
    # Only ids an account can have (accounts.id is a 32-bit INTEGER: PostgreSQL refuses
    # to compare it with a larger one); a row naming another matches nothing anyway.
    accounts = sorted(
        {pair[0] for signature in wanted for pair in signature if id_in_range(pair[0])}
    )
    touching = (
        select(Entry.transaction_id)
        .join(Transaction, Transaction.id == Entry.transaction_id)
        .where(Entry.account_id.in_(accounts), Transaction.occurred_on.between(start, end))
    )
    rows = db.session.execute(
        select(Transaction.id, Transaction.occurred_on, Entry.account_id, Entry.amount_cents)
        .join(Entry, Entry.transaction_id == Transaction.id)
        .where(Transaction.id.in_(touching))
    )
    stored: dict[int, tuple[date, list[tuple[int, int]]]] = {}
    for tx_id, occurred_on, account_id, cents in rows:
        stored.setdefault(tx_id, (occurred_on, []))[1].append((account_id, cents))
    # Per multiset: its transactions as (-date ordinal, -id), ascending = newest first.
    by_signature: dict[tuple, list[tuple[int, int]]] = {}
    for tx_id, (occurred_on, pairs) in stored.items():
        key = tuple(sorted(pairs))
        by_signature.setdefault(key, []).append((-occurred_on.toordinal(), -tx_id))
    for found in by_signature.values():
        found.sort()
    answers = []
    for (day, _), signature in zip(postings, wanted, strict=True):
        found = by_signature.get(signature, [])
        newest = -(day + timedelta(days=WINDOW_DAYS)).toordinal()
        oldest = -(day - timedelta(days=WINDOW_DAYS)).toordinal()
        first = bisect.bisect_left(found, (newest, -(2**63)))
        ids = []
        for negative_day, negative_id in found[first : first + LIMIT]:
            if negative_day > oldest:
                break
            ids.append(-negative_id)
        answers.append(ids)
    return answers
