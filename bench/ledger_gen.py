"""A deterministic synthetic ledger: 40 accounts (8 of each kind), 10 years, 2-4 entries.

The same seed and size always give the same books. Transactions are spread
evenly over the ten years in date order (as real books grow); each has 2 entries
(half of them), 3 or 4 (a quarter each), so 2.75 entries per transaction on
average, with amounts up to 5,000.00 and one leg balancing the others to 0.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import date, timedelta

KINDS = ("asset", "liability", "equity", "income", "expense")
FIRST_DAY = date(2016, 1, 1)
LAST_DAY = date(2025, 12, 31)
DAYS = (LAST_DAY - FIRST_DAY).days + 1
LEGS = (2, 2, 3, 4)


def accounts() -> list[tuple[int, str, str]]:
    """(id, name, kind): ids 1..40."""
    return [(i + 1, f"{KINDS[i % 5].title()} {i // 5 + 1}", KINDS[i % 5]) for i in range(40)]


def transactions(n: int, seed: int = 7) -> Iterator[tuple[int, date, str, list[tuple[int, int]]]]:
    """(id, occurred_on, description, [(account_id, cents), ...]) for ids 1..n."""
    rng = random.Random(seed)
    for i in range(n):
        day = FIRST_DAY + timedelta(days=i * DAYS // n)
        legs = rng.choice(LEGS)
        ids = rng.sample(range(1, 41), legs)
        amounts = [rng.randint(1, 500_000) * rng.choice((1, -1)) for _ in range(legs - 1)]
        amounts.append(-sum(amounts))
        yield i + 1, day, f"synthetic {i + 1}", list(zip(ids, amounts, strict=True))
