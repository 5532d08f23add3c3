"""python -m bench.rules_suggest: what filing rules cost, in-process (no HTTP): suggestions
for a statement of 5,000 lines under 1,000 rules, and a rule's preview.

Example: python -m bench.rules_suggest --dialect sqlite
         python -m bench.rules_suggest --dialect postgresql --hostile

The books: --transactions generated transactions (bench/bulk.py; 10,000 by default, the
size hardly matters here), an earlier statement of HISTORY lines of the bank account of
which every second line is posted (the history suggestions learn from), RULES rules of
every kind (payee is, payee contains, memo contains, amount ranges, several conditions
at once, some inactive, some limited to another account, priorities from 1 to 200), and
a statement of LINES lines whose payees the rules and the history partly know.
--hostile: every payee, memo and rule text 200 characters long, and every rule a part
of a payee or memo that no line holds, so that each rule is tried on each line (the
case the fifth review measured: 47.6 s of CPU for one read).

CPU seconds (time.process_time: this process only, so on PostgreSQL the server's own
work is left out; wall seconds beside them), each the median over --repeat calls in the
service's own unit of work, rolled back:

  upload, suggestions only    services.banking.rules.suggest inside the upload (target:
                              at most 2 s of CPU)
  upload, whole               services.banking.statements.upload (reading the file,
                              each line's status, storing it, the answer)
  read                        services.banking.statements.get of the stored statement
                              (its suggestions worked out again; target: at most 2 s)
  preview                     services.banking.rules.preview of one rule, over the
                              waiting lines of the books
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from datetime import date, timedelta

from . import bulk, report
from .statements import _ofx

LINES = 5000
RULES = 1000
HISTORY = 2000
ACCOUNT = 1  # "Asset 1", the bank account
OTHER_ACCOUNT = 6  # "Asset 2": rules limited to it never apply here
EXPENSES = tuple(range(5, 41, 5))  # "Expense 1".."Expense 8"
FIRST, DAYS = date(2026, 3, 1), 30
WORDS = [
    *("shop", "market", "garage", "bakery", "fuel", "station", "pharmacy", "books", "print"),
    *("hall", "rent", "power", "water", "phone", "post", "cafe", "deli", "paper", "office"),
    *("garden", "music", "school", "sport", "club", "travel", "hotel"),
]
TOWNS = ["Berlin Mitte", "Hamburg", "Koeln Sued", "Muenchen", "Leipzig", "Bremen", "Essen"]
POOL = 1500  # the payees both statements draw from
HOSTILE = 200  # --hostile: the characters of each payee, memo and rule text
PREVIEW = {
    "name": "bench preview",
    "counter_account_id": EXPENSES[0],
    "conditions": {"payee_contains": "market", "max_cents": 0},
    "priority": 150,
}


def parse_args(argv):
    parser = bulk.books_parser("python -m bench.rules_suggest", __doc__, repeat=3)
    parser.set_defaults(transactions=10_000)
    parser.add_argument(
        "--hostile",
        action="store_true",
        help="payees, memos and rule texts of 200 characters, no rule holding for any line",
    )
    return parser.parse_args(argv)


def _payee(rng: random.Random, hostile: bool = False) -> str:
    """A payee as banks write them: `Market Garage 1234 Berlin Mitte`; hostile: HOSTILE
    characters of words and numbers."""
    if hostile:
        return _long_text(rng)
    words = f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()}"
    return f"{words} {rng.randint(1, 2500)} {rng.choice(TOWNS)}"


def _long_text(rng: random.Random) -> str:
    """HOSTILE characters of words and numbers."""
    text = ""
    while len(text) < HOSTILE:
        text += f"{rng.choice(WORDS)} {rng.randint(1, 99)} "
    return text[:HOSTILE].strip()


def _statement(rng: random.Random, payees: list[str], count: int, first: date, prefix: str):
    """(booked_on, cents, payee, bank_ref) of count lines over a month, in date order."""
    lines = sorted(
        (
            first + timedelta(days=rng.randrange(DAYS)),
            rng.randint(1, 300_000) * rng.choice((1, -1, -1, -1)),
            rng.choice(payees),
        )
        for _ in range(count)
    )
    return [(day, cents, payee, f"{prefix}-{n}") for n, (day, cents, payee) in enumerate(lines, 1)]


def _rule(rng: random.Random, payees: list[str], n: int, hostile: bool = False) -> dict:
    """One of RULES varied rules: half `payee is` (most of them a payee the lines carry),
    the rest a part of a payee, of a memo, an amount range, or several of these at once.
    hostile: a part of a payee or memo of HOSTILE characters that no line holds, so that
    every rule is tried on every line."""
    kind = rng.random()
    words = rng.sample(WORDS, 2)
    if hostile:
        conditions: dict = {("payee_contains", "memo_contains")[n % 2]: "x" + _long_text(rng)}
        conditions = {k: v[:HOSTILE] for k, v in conditions.items()}
    elif kind < 0.5:
        payee = rng.choice(payees) if rng.random() < 0.6 else _payee(rng)
        conditions = {"payee_is": payee.upper() if n % 2 else payee}
    elif kind < 0.65:
        conditions = {"payee_contains": f"{words[0]} {words[1]} {rng.randint(1, 2500)}"}
    elif kind < 0.75:
        conditions = {"memo_contains": f"{words[0]} {rng.randint(1, 400)} ref"}
    elif kind < 0.85:
        low = rng.randint(-300_000, 300_000)
        conditions = {"min_cents": low, "max_cents": low + rng.randint(0, 2000)}
    elif kind < 0.95:
        low = rng.randint(-300_000, 0)
        conditions = {"payee_contains": words[0], "min_cents": low, "max_cents": low + 5000}
    else:
        conditions = {"payee_contains": words[0], "memo_contains": words[1]}
    return {
        "name": f"bench rule {n}",
        "counter_account_id": rng.choice(EXPENSES),
        "conditions": conditions,
        "priority": rng.randint(1, 200),
        "account_id": OTHER_ACCOUNT if rng.random() < 0.05 else None,
        "active": hostile or rng.random() >= 0.05,
    }


def _stats(samples: list[tuple[float, float]]) -> dict:
    cpu = sorted(s[0] for s in samples)
    wall = sorted(s[1] for s in samples)
    return {"cpu_s": statistics.median(cpu), "wall_s": statistics.median(wall), "n": len(cpu)}


class _Clock:
    """CPU and wall seconds of what runs inside `with`."""

    def __enter__(self):
        self.cpu, self.wall = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *_exc):
        self.sample = (time.process_time() - self.cpu, time.perf_counter() - self.wall)


def _with_memos(lines: list, rng: random.Random, hostile: bool = False) -> bytes:
    """The OFX file of lines, each with a memo after its payee (`SEPA <word> <n> ref
    <number> <town>`; hostile: HOSTILE characters)."""
    data = _ofx(lines).decode()
    parts = data.split("</NAME>")
    last = len(parts) - 1
    return "".join(
        part + (f"</NAME><MEMO>{_memo(rng, hostile)}</MEMO>" if i < last else "")
        for i, part in enumerate(parts)
    ).encode()


def _memo(rng: random.Random, hostile: bool) -> str:
    if hostile:
        return _long_text(rng)
    word, n, ref = rng.choice(WORDS), rng.randint(1, 400), rng.randint(10**8, 10**9)
    return f"SEPA {word} {n} ref {ref} {rng.choice(TOWNS)}"


def measure(url: str, repeat: int, seed: int, hostile: bool = False) -> dict:
    from app import create_app, store
    from app.extensions import db
    from app.services.banking import lines, rules, statements

    rng = random.Random(seed)
    app = create_app({"DATABASE_URL": url})
    results: dict = {"timings": {}, "lines": LINES, "rules": RULES, "hostile": hostile}
    with app.app_context():
        # The history: an earlier month of which every second line is posted.
        payees = [_payee(rng, hostile) for _ in range(POOL)]
        earlier = _statement(rng, payees, HISTORY, FIRST - timedelta(days=DAYS), "OLD")
        with store.writing():
            old = statements.upload(ACCOUNT, _with_memos(earlier, rng, hostile), None, None)
            store.commit()
        body = {
            "lines": [
                {"line_id": x["line_id"], "action": "post", "account_id": rng.choice(EXPENSES)}
                for x in old["lines"][::2]
                if x["status"] == "new"
            ]
        }
        with store.writing():
            lines.act(old["id"], body, None)
            store.commit()
        with store.writing():
            for n in range(RULES):
                rules.create_rule(_rule(rng, payees, n, hostile))
            store.commit()
        data = _with_memos(_statement(rng, payees, LINES, FIRST, "NEW"), rng, hostile)

        timed_suggest = rules.suggest
        suggested: list[tuple[float, float]] = []

        def suggest(*args, **kwargs):
            with _Clock() as c:
                timed_suggest(*args, **kwargs)
            suggested.append(c.sample)

        statements.rules.suggest = suggest  # type: ignore[attr-defined]
        uploads = []
        try:
            for _ in range(repeat):
                with store.writing():
                    with _Clock() as c:
                        answer = statements.upload(ACCOUNT, data, None, None)
                    uploads.append(c.sample)
                    store.rollback()
        finally:
            statements.rules.suggest = timed_suggest  # type: ignore[attr-defined]
        results["upload_suggested"] = sum(1 for x in answer["lines"] if x["suggestion"])
        results["timings"]["upload, suggestions only"] = _stats(suggested)
        results["timings"]["upload, whole"] = _stats(uploads)
        with store.writing():
            kept = statements.upload(ACCOUNT, data, None, None)
            store.commit()
        reads = []
        for _ in range(repeat):
            with store.reading():
                with _Clock() as c:
                    read = statements.get(kept["id"])
                reads.append(c.sample)
                store.rollback()
        by_source: dict[str, int] = {}
        for line in read["lines"]:
            source = (line["suggestion"] or {}).get("source", "none")
            by_source[source] = by_source.get(source, 0) + 1
        results["suggestions"] = by_source
        previews = []
        for _ in range(repeat):
            with store.reading():
                with _Clock() as c:
                    shown = rules.preview(PREVIEW)
                previews.append(c.sample)
                store.rollback()
        results["preview"] = {
            "matches": len(shown["matches"]),
            "truncated": shown.get("truncated"),
        }
        results["timings"]["read"] = _stats(reads)
        results["timings"]["preview"] = _stats(previews)
        db.engine.dispose()
    return results


def run(args) -> dict:
    results: dict = {"dialect": args.dialect, "transactions": args.transactions}
    with bulk.loaded_books(args) as url:
        results.update(measure(url, args.repeat, args.seed, args.hostile))
    return results


def render(results: dict) -> str:
    out = [
        f"{results['lines']:,} lines, {results['rules']:,} rules, on {results['dialect']}"
        f" ({results['transactions']:,} transactions){' hostile' * results['hostile']},"
        " in-process;"
        f" suggestions by source {results['suggestions']};"
        f" preview {results['preview']}",
        f"{'call':<28} {'CPU s':>7} {'wall s':>7}",
    ]
    for name, t in results["timings"].items():
        out.append(f"{name:<28} {t['cpu_s']:>7.3f} {t['wall_s']:>7.3f}")
    return "\n".join(out)


def main(argv=None) -> int:
    return report.main(argv, parse_args, run, render)


if __name__ == "__main__":
    sys.exit(main())
