"""The ranking of a statement's waiting lines' candidates (app/services/banking/status.py,
`Ranking`) against the straightforward reference it replaced (every candidate of the
line's amount in its window scored, then the first SHOWN), in memory: the same first
candidates, counts and certain matches over random small books; and the worst shapes
(thousands of lines of one amount against thousands of candidates of it, sharing no
word, one word everywhere or one word with half of them) no longer quadratic."""

from __future__ import annotations

import bisect
import heapq
import random
import time
from dataclasses import dataclass
from datetime import date, timedelta

import pytest

from app.services.banking import status
from app.services.banking.status import Candidate, Ranking

VOCABULARY = ["rent", "subs", "garcia", "jones", "club", "power", "cafe", "all"]
AMOUNTS = [1500, 2500, -700]
FIRST = date(2026, 1, 1)


@dataclass(frozen=True)
class Line:
    booked_on: date
    amount_cents: int


def reference(line, said, pool, taken):
    """The ranking as it was: every candidate of the amount in the window, scored."""
    days = [c.occurred_on for c in pool]
    low = bisect.bisect_left(days, line.booked_on - timedelta(days=status.BACK_DAYS))
    high = bisect.bisect_right(days, line.booked_on + timedelta(days=status.FORWARD_DAYS))
    ranked = [
        (-len(said & c.words), abs((c.occurred_on - line.booked_on).days), c.transaction_id, c)
        for c in pool[low:high]
        if c.transaction_id not in taken
    ]
    return heapq.nsmallest(status.SHOWN, ranked, key=lambda r: r[:3]), len(ranked)


def some_words(rng, most=3):
    return frozenset(rng.sample(VOCABULARY, rng.randint(0, most)))


def books(rng):
    """amount -> candidates by day then id (some transactions under two amounts), and
    the lines in file order with their words."""
    pool: dict[int, list[Candidate]] = {}
    span = rng.choice([3, 20, 120])
    everywhere = rng.random() < 0.3  # every candidate holds "all"
    tx_ids = rng.sample(range(1, 400), rng.randint(0, 60))
    for tx_id in tx_ids:
        day = FIRST + timedelta(days=rng.randint(0, span))
        said = some_words(rng) | ({"all"} if everywhere else frozenset())
        c = Candidate(tx_id, day, " ".join(sorted(said)), said)
        for cents in rng.sample(AMOUNTS, 2 if rng.random() < 0.15 else 1):
            pool.setdefault(cents, []).append(c)
    for same in pool.values():
        same.sort(key=lambda c: (c.occurred_on, c.transaction_id))
    lines = [
        (
            Line(FIRST + timedelta(days=rng.randint(-10, span + 70)), rng.choice(AMOUNTS)),
            some_words(rng, 4),
        )
        for _ in range(rng.randint(1, 40))
    ]
    return pool, lines


@pytest.mark.parametrize("seed", range(300))
@pytest.mark.parametrize("heavy", [64, 2, 0], ids=lambda h: f"heavy{h}")
def test_the_ranking_is_the_reference_s(seed, heavy, monkeypatch):
    """heavy: the postings in a line's window above which a word's counts are worked
    out once per day and window (64 as served; 2 and 0 to try that way on small books)."""
    monkeypatch.setattr(Ranking, "HEAVY", heavy)
    monkeypatch.setattr(Ranking, "KEPT_HEAVY", 1 + seed % 3)  # forgotten and worked again
    rng = random.Random(seed)
    pool, lines = books(rng)
    ranking = Ranking(pool)
    taken: set[int] = set()
    for line, said in lines:
        expected, count = reference(line, said, pool.get(line.amount_cents, []), taken)
        got, got_count = ranking.rank(line, said)
        assert [r[:3] for r in got] == [r[:3] for r in expected], (seed, line, said)
        assert [r[3] for r in got] == [r[3] for r in expected]
        assert got_count == count
        matched = status.certain(said, expected, count)
        assert status.certain(said, got, got_count) == matched
        if matched:
            taken.add(expected[0][2])
            ranking.take(got[0][2])


def worst(n: int, shared: str):
    """n lines of one amount on one day against n candidates of it around that day:
    sharing no word, or "subs" with every candidate, or with every second one."""
    said = frozenset() if shared == "none" else frozenset({"subs"})
    pool = {
        1500: [
            Candidate(
                i,
                FIRST + timedelta(days=i % 60),
                "x",
                (said if shared != "half" or i % 2 else frozenset()) | {f"w{i}"},
            )
            for i in range(1, n + 1)
        ]
    }
    pool[1500].sort(key=lambda c: (c.occurred_on, c.transaction_id))
    lines = [(Line(FIRST + timedelta(days=30), 1500), said | {f"l{i}"}) for i in range(n)]
    return pool, lines


def cpu(n: int, shared: str) -> float:
    pool, lines = worst(n, shared)
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        ranking = Ranking(pool)
        for line, said in lines:
            ranking.rank(line, said)
        best = min(best, time.process_time() - started)
    return best


@pytest.mark.slow
@pytest.mark.parametrize("shared", ["none", "all", "half"])
def test_the_worst_shape_is_not_quadratic(shared):
    """Twice the lines against twice the candidates: about twice the CPU (quadratic
    would be four times; the margin is generous for a loaded machine). "half": the
    word held by half the candidates worked out once for the lines of one day."""
    small, large = cpu(2000, shared), cpu(4000, shared)
    assert large < 3.0 * small + 0.05, (small, large)
