"""Possible duplicates of a posting: the rule record_transaction's result and the
browser's import preview share (CONTRACT "Trust": possible_duplicates).

Another transaction is a possible duplicate when it is dated at most WINDOW_DAYS
before or after, and its entries are the same multiset of (account_id, amount_cents).
Newest first (date, then id), at most LIMIT ids.
"""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta

from sqlalchemy import select

from ...extensions import db
from ...models import Entry, Transaction

WINDOW_DAYS = 3
LIMIT = 5


def possible_duplicates(
    day: date, entries: list[tuple[int, int]], exclude_id: int | None = None
) -> list[int]:
    """Ids of transactions that look like the posting (day, entries); see the module."""
    wanted = Counter((int(a), int(c)) for a, c in entries)
    # Only transactions with an entry of the posting's first (account, amount) can match.
    account_id, amount = next(iter(wanted))
    query = (
        select(Transaction.id, Transaction.occurred_on)
        .join(Entry, Entry.transaction_id == Transaction.id)
        .where(
            Transaction.occurred_on.between(
                day - timedelta(days=WINDOW_DAYS), day + timedelta(days=WINDOW_DAYS)
            ),
            Entry.account_id == account_id,
            Entry.amount_cents == amount,
        )
        .distinct()
    )
    if exclude_id is not None:
        query = query.where(Transaction.id != exclude_id)
    candidates = {row.id: row.occurred_on for row in db.session.execute(query)}
    if not candidates:
        return []
    found: dict[int, Counter] = {tx_id: Counter() for tx_id in candidates}
    rows = db.session.execute(
        select(Entry.transaction_id, Entry.account_id, Entry.amount_cents).where(
            Entry.transaction_id.in_(list(candidates))
        )
    )
    for tx_id, entry_account, cents in rows:
        found[tx_id][(entry_account, cents)] += 1
    matches = [tx_id for tx_id, multiset in found.items() if multiset == wanted]
    matches.sort(key=lambda tx_id: (candidates[tx_id], tx_id), reverse=True)
    return matches[:LIMIT]
