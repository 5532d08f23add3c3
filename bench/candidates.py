"""python -m bench.candidates: what ranking a statement's candidates costs, in-process
(no HTTP): services.banking.status.decide over the lines of a file being uploaded, on
a throwaway database, in three shapes (docs/statements.md, "Limits and speed"):

  realistic         300 lines of 15.00 against 900 transactions of 15.00 in the window
                    (each line's payee sharing two words with one of them, one with
                    two more, and one ("jones") with 299 others: 300 certain matches)
  no word shared    5,000 lines of 15.00 on one day against 5,000 transactions of 15.00
                    in their window, none sharing a word with any line
  one word shared   the same, every line and every transaction holding the word "subs"
  word in half      the same, every line and every second transaction holding "subs"
                    (a heavy word: worked out once for the day)
  many words        the same, each line a different set of up to 13 of 16 words, each
                    held by about half the transactions (the worst case left: every line reads them)

Example: python -m bench.candidates --dialect sqlite
         python -m bench.candidates --dialect sqlite --plain   (the ranking before issue
         44's index: every candidate of the amount in the line's window scored per line)

CPU seconds (time.process_time, this process only; wall beside them), the median over
--repeat calls of decide, each in its own unit of work, rolled back.
"""

from __future__ import annotations

import bisect
import heapq
import sqlite3
import statistics
import sys
import time
from datetime import date, timedelta
from types import SimpleNamespace

from . import bulk, report

ACCOUNT, COUNTER = 1, 5  # "Asset 1" (the bank account), "Expense 1"
CENTS = -1500
DAY = date(2026, 6, 30)  # every line's day
FIRST_ID = 10_000_000  # the shapes' transactions, after the generated ones
SHAPES = {  # name: (lines, transactions, words)
    "realistic": (300, 900, "names"),
    "no word shared": (5000, 5000, "none"),
    "one word shared": (5000, 5000, "subs"),
    "word in half": (5000, 5000, "half"),
    "many words": (5000, 5000, "bits"),
}


def parse_args(argv):
    parser = bulk.books_parser("python -m bench.candidates", __doc__, repeat=3)
    parser.set_defaults(transactions=1000)
    parser.add_argument("--plain", action="store_true", help="the ranking before the index")
    parser.add_argument("--shape", choices=sorted(SHAPES), action="append")
    return parser.parse_args(argv)


class Plain:
    """The ranking as it was before the word index (the reference of
    tests/services/banking/test_status_ranking.py): per line, every candidate of its
    amount in its window scored."""

    def __init__(self, pool):
        self.pool = pool
        self.taken: set[int] = set()

    def take(self, tx_id: int) -> None:
        self.taken.add(tx_id)

    def rank(self, line, said):
        from app.services.banking import status

        pool = self.pool.get(int(line.amount_cents), [])
        days = [c.occurred_on for c in pool]
        low = bisect.bisect_left(days, line.booked_on - timedelta(days=status.BACK_DAYS))
        high = bisect.bisect_right(days, line.booked_on + timedelta(days=status.FORWARD_DAYS))
        ranked = [
            (-len(said & c.words), abs((c.occurred_on - line.booked_on).days), c.transaction_id, c)
            for c in pool[low:high]
            if c.transaction_id not in self.taken
        ]
        return heapq.nsmallest(status.SHOWN, ranked, key=lambda r: r[:3]), len(ranked)


def _shape(n_lines: int, n_tx: int, kind: str, first_id: int):
    """The transactions (id, day, description) and the lines of one shape."""
    txs, lines = [], []
    for i in range(n_tx):
        day = DAY - timedelta(days=60 - (i * 67 // n_tx))  # spread over the window
        if kind == "names":
            said = f"Subs name{i % n_lines:03d}" + (" Jones" if i < n_lines else "")
        elif kind == "bits":
            said = " ".join(f"bit{k}" for k in range(16) if (i * 2654435761) >> (k + 7) & 1)
        elif kind == "subs" or (kind == "half" and i % 2 == 0):
            said = f"Subs t{i}"
        else:
            said = f"Payment t{i}"
        txs.append((first_id + i, day, said))
    for j in range(n_lines):
        payee = f"K name{j:03d} Jones" if kind == "names" else f"Member m{j}"
        if kind in ("subs", "half"):
            payee = f"Subs m{j}"
        elif kind == "bits":
            payee = " ".join(f"bit{k}" for k in range(16) if (j + 1) >> k & 1)
        lines.append(
            SimpleNamespace(
                booked_on=DAY, amount_cents=CENTS, payee=payee, memo=None, bank_ref=None
            )
        )
    return txs, lines


def _insert(url: str, txs) -> None:
    conn = sqlite3.connect(url.removeprefix("sqlite:///"))
    with conn:
        conn.executemany(
            "INSERT INTO transactions (id, occurred_on, description, created_at)"
            " VALUES (?, ?, ?, ?)",
            [(i, d.isoformat(), s, "2026-07-01 00:00:00") for i, d, s in txs],
        )
        conn.executemany(
            "INSERT INTO entries (transaction_id, account_id, amount_cents) VALUES (?, ?, ?)",
            [(i, a, c) for i, _, _ in txs for a, c in ((ACCOUNT, CENTS), (COUNTER, -CENTS))],
        )
    conn.close()


def measure(url: str, shapes: list[str], repeat: int, plain: bool) -> dict:
    from app import create_app, store
    from app.extensions import db
    from app.services.banking import status

    results: dict = {}
    for n, name in enumerate(shapes):
        n_lines, n_tx, kind = SHAPES[name]
        txs, lines = _shape(n_lines, n_tx, kind, FIRST_ID + n * 100_000)
        # each shape on its own day: earlier shapes' transactions out of its window
        offset = timedelta(days=200 * n)
        txs = [(i, d + offset, s) for i, d, s in txs]
        for line in lines:
            line.booked_on += offset
        _insert(url, txs)
        app = create_app({"DATABASE_URL": url})
        kept = status.Ranking
        if plain:
            status.Ranking = Plain  # type: ignore[assignment,misc]
        samples, matched = [], 0
        try:
            with app.app_context():
                for _ in range(repeat):
                    with store.reading():
                        cpu, wall = time.process_time(), time.perf_counter()
                        decided = status.decide(ACCOUNT, lines)
                        samples.append((time.process_time() - cpu, time.perf_counter() - wall))
                        store.rollback()
                matched = sum(1 for d in decided if d.status == "match")
                db.engine.dispose()
        finally:
            status.Ranking = kept  # type: ignore[misc]
        results[name] = {
            "lines": n_lines,
            "transactions": n_tx,
            "matched": matched,
            "cpu_s": statistics.median(s[0] for s in samples),
            "wall_s": statistics.median(s[1] for s in samples),
        }
    return results


def run(args) -> dict:
    if args.dialect != "sqlite":
        raise SystemExit("bench.candidates: --dialect sqlite only (the shapes are inserted there)")
    shapes = args.shape or list(SHAPES)
    results: dict = {"dialect": args.dialect, "plain": args.plain, "shapes": {}}
    with bulk.loaded_books(args) as url:
        results["shapes"] = measure(url, shapes, args.repeat, args.plain)
    return results


def render(results: dict) -> str:
    out = [
        f"status.decide on {results['dialect']}, in-process,"
        f" {'the plain ranking (before)' if results['plain'] else 'the indexed ranking'}",
        f"{'shape':<18} {'lines':>6} {'txs':>6} {'matched':>8} {'CPU s':>8} {'wall s':>8}",
    ]
    for name, r in results["shapes"].items():
        out.append(
            f"{name:<18} {r['lines']:>6} {r['transactions']:>6} {r['matched']:>8}"
            f" {r['cpu_s']:>8.3f} {r['wall_s']:>8.3f}"
        )
    return "\n".join(out)


def main(argv=None) -> int:
    return report.main(argv, parse_args, run, render)


if __name__ == "__main__":
    sys.exit(main())
