"""python -m bench.budgets: what budgets cost, in-process (no HTTP), on loaded books.

Example: python -m bench.budgets --dialect sqlite --transactions 1000000
         python -m bench.budgets --dialect postgresql --database-url URL  (loaded by
         python -m bench --load-only)

Times, each as a median over --repeat calls in the service's own unit of work:

  budget from a year of actuals   services.ledger.budgets.create_budget with based_on
                                  "actuals" (rolled back each time; target < 50 ms)
  income statement (year)         reports.income_statement for 2024
  income statement + budget       budget_actuals.income_statement for 2024 against a budget
                                  made from 2023's actuals (target: within 1 ms of the
                                  plain statement, median)

The two statements are called alternately, so whatever else the machine does falls
on both alike; the cost of `budget` is the median of the paired differences.
`python -m bench` measures the same three over HTTP.
"""

from __future__ import annotations

import statistics
import sys
import time

from . import bulk, report

YEAR_FROM, YEAR_TO = "2024-01-01", "2024-12-31"


def parse_args(argv):
    return bulk.books_parser("python -m bench.budgets", __doc__, repeat=100).parse_args(argv)


def _ms(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {
        "median_ms": statistics.median(ordered) * 1000,
        "p95_ms": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000,
        "n": len(ordered),
    }


def measure(url: str, repeat: int) -> dict:
    from datetime import date

    from app import create_app, store
    from app.services.ledger import budget_actuals, budgets, reports

    app = create_app({"DATABASE_URL": url})
    results: dict = {"timings": {}}
    with app.app_context():
        body = {"name": "bench.budgets", "starts_on": YEAR_FROM, "based_on": "actuals"}
        created = []
        for i in range(repeat + 2):
            with store.writing():
                start = time.perf_counter()
                made = budgets.create_budget(body)
                elapsed = time.perf_counter() - start
                store.rollback()
            if i >= 2:
                created.append(elapsed)
        results["budget_lines"] = len(made["lines"])
        results["timings"]["budget from a year of actuals"] = _ms(created)
        with store.writing():
            budget_id = budgets.create_budget(body)["id"]
            store.commit()
        first, last = date.fromisoformat(YEAR_FROM), date.fromisoformat(YEAR_TO)
        plain, against = [], []
        try:
            for i in range(repeat + 2):
                with store.reading():
                    start = time.perf_counter()
                    reports.income_statement(first, last)
                    middle = time.perf_counter()
                    budget_actuals.income_statement(YEAR_FROM, YEAR_TO, budget_id)
                    end = time.perf_counter()
                    store.rollback()
                if i >= 2:
                    plain.append(middle - start)
                    against.append(end - middle)
        finally:
            with store.writing():
                budgets.delete_budget(budget_id)
                store.commit()
        results["timings"]["income statement (year)"] = _ms(plain)
        results["timings"]["income statement (year) + budget"] = _ms(against)
        added = sorted(b - a for a, b in zip(plain, against, strict=True))
        results["budget_added_ms"] = statistics.median(added) * 1000
    return results


def run(args) -> dict:
    results: dict = {"dialect": args.dialect, "transactions": args.transactions}
    with bulk.loaded_books(args) as url:
        results.update(measure(url, args.repeat))
    return results


def render(results: dict) -> str:
    lines = [
        f"{results['transactions']:,} transactions on {results['dialect']}, in-process;"
        f" a budget of {results['budget_lines']} lines",
        f"{'call':<36} {'median ms':>10} {'p95 ms':>8}",
    ]
    for name, t in results["timings"].items():
        lines.append(f"{name:<36} {t['median_ms']:>10.2f} {t['p95_ms']:>8.2f}")
    lines.append(
        f"budget on the income statement adds {results['budget_added_ms']:.2f} ms"
        " (median of the paired differences; target: within 1 ms)"
    )
    return "\n".join(lines)


def main(argv=None) -> int:
    return report.main(argv, parse_args, run, render)


if __name__ == "__main__":
    sys.exit(main())
