"""python -m bench.series: what the series costs, in-process (no HTTP), on loaded books.

Example: python -m bench.series --dialect sqlite --transactions 1000000
         python -m bench.series --dialect postgresql --database-url URL  (loaded by
         python -m bench --load-only)

Times, each as a median over --repeat calls in the service's own read unit:

  income statement (year)        reports.income_statement for 2024
  series, 10 years monthly       trends.series from 2016-01-15 to 2025-12-14 by month: 120
                                 periods, partial months at both ends, every account
  series, 10 years whole months  trends.series from 2016-01-01 to 2025-12-31 by month

and the first two again as whole requests with a bearer token: through the WSGI app
(Flask's test client: authentication, the unit of work and the JSON included, no
socket), and served by waitress in this process over a loopback connection.

The generated books (bench/ledger_gen.py) span 2016 to 2025, 40 accounts. The calls
are made alternately, so whatever else the machine does falls on all alike. The
target (docs/ledger.md, "Trends and comparisons"): the ten-year series in at most 3
times the year's income statement, printed as the ratio of the medians and of the
fastest calls (on a shared machine the medians carry other processes' time slices).
"""

from __future__ import annotations

import statistics
import sys
import time

from . import bulk, report

YEAR_FROM, YEAR_TO = "2024-01-01", "2024-12-31"
RAGGED = ("2016-01-15", "2025-12-14")
WHOLE = ("2016-01-01", "2025-12-31")
TARGET_RATIO = 3.0
STATEMENT = "income statement (year)"
SERIES = "series, 10 years monthly (ragged ends)"
SERIES_WHOLE = "series, 10 years whole months"


def parse_args(argv):
    return bulk.books_parser("python -m bench.series", __doc__, repeat=50).parse_args(argv)


def _ms(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {
        "min_ms": ordered[0] * 1000,
        "median_ms": statistics.median(ordered) * 1000,
        "p95_ms": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000,
        "n": len(ordered),
    }


def measure(url: str, repeat: int) -> dict:
    from datetime import date

    from app import create_app, store
    from app.services.ledger import reports, trends

    app = create_app({"DATABASE_URL": url})
    first, last = date.fromisoformat(YEAR_FROM), date.fromisoformat(YEAR_TO)
    calls = {
        STATEMENT: lambda: reports.income_statement(first, last),
        SERIES: lambda: trends.series(*RAGGED, "month"),
        SERIES_WHOLE: lambda: trends.series(*WHOLE, "month"),
    }
    samples: dict[str, list[float]] = {name: [] for name in calls}
    results: dict = {"timings": {}}
    with app.app_context():
        for i in range(repeat + 2):  # the first two warm the caches, untimed
            for name, call in calls.items():
                with store.reading():
                    start = time.perf_counter()
                    answer = call()
                    elapsed = time.perf_counter() - start
                    store.rollback()
                if i >= 2:
                    samples[name].append(elapsed)
                if name == SERIES:
                    results["periods"] = len(answer["periods"])
                    results["accounts"] = len(answer["accounts"])
        _measure_requests(app, repeat, results)
    for name, taken in samples.items():
        results["timings"][name] = _ms(taken)
    statement = results["timings"][STATEMENT]["median_ms"]
    results["ratio"] = results["timings"][SERIES]["median_ms"] / statement
    results["ratio_whole"] = results["timings"][SERIES_WHOLE]["median_ms"] / statement
    # The fastest call of each: what a call costs when nothing else takes the CPU from it
    # (on a shared machine the medians carry the other processes' time slices).
    results["ratio_fastest"] = (
        results["timings"][SERIES]["min_ms"] / results["timings"][STATEMENT]["min_ms"]
    )
    return results


def _token(app) -> str:
    from app import store
    from app.services.identity import credentials
    from harness.server import BENCH_EMAIL

    with store.writing():
        token = credentials.mint_token(
            BENCH_EMAIL, label="bench.series", days=1, audience=app.config["API_ORIGIN"]
        )
        store.commit()
    return token


def _alternately(get, paths: dict, repeat: int, results: dict, ratio: str) -> None:
    """get(path) -> status for each of paths in turn, repeat + 2 times (two untimed)."""
    samples: dict[str, list[float]] = {name: [] for name in paths}
    for i in range(repeat + 2):
        for name, path in paths.items():
            start = time.perf_counter()
            status = get(path)
            elapsed = time.perf_counter() - start
            assert status == 200, (path, status)
            if i >= 2:
                samples[name].append(elapsed)
    for name, taken in samples.items():
        results["timings"][name] = _ms(taken)
    statement, series = (results["timings"][name] for name in paths)
    results[ratio] = series["median_ms"] / statement["median_ms"]
    results[ratio + "_fastest"] = series["min_ms"] / statement["min_ms"]


def _measure_requests(app, repeat: int, results: dict) -> None:
    """The same two reads as whole requests: through the WSGI app (Flask's test client:
    the token checked, the unit of work, the JSON written; no socket), then served by
    waitress on a loopback socket (harness/inprocess.py) over one kept-alive connection."""
    from harness.inprocess import InProcessServer

    from .http_timing import Client

    statement = f"/reports/income-statement?from={YEAR_FROM}&to={YEAR_TO}"
    series = f"/reports/series?from={RAGGED[0]}&to={RAGGED[1]}"
    client = app.test_client()
    headers = {"Authorization": f"Bearer {_token(app)}"}
    _alternately(
        lambda path: client.get(path, headers=headers).status_code,
        {"GET income statement (WSGI)": statement, "GET series (WSGI)": series},
        repeat,
        results,
        "ratio_http",
    )
    with InProcessServer(app) as server:
        app.config["API_ORIGIN"] = server.origin  # what a client connects to
        served = Client(server.origin, _token(app))
        _alternately(
            lambda path: served.call("GET", path)[0],
            {"GET income statement (served)": statement, "GET series (served)": series},
            repeat,
            results,
            "ratio_served",
        )


def run(args) -> dict:
    results: dict = {"dialect": args.dialect, "transactions": args.transactions}
    with bulk.loaded_books(args) as url:
        results.update(measure(url, args.repeat))
    return results


def render(results: dict) -> str:
    lines = [
        f"{results['transactions']:,} transactions on {results['dialect']}, in-process;"
        f" the series: {results['periods']} periods, {results['accounts']} accounts",
        f"{'call':<40} {'fastest ms':>10} {'median ms':>10} {'p95 ms':>8}",
    ]
    for name, t in results["timings"].items():
        lines.append(f"{name:<40} {t['min_ms']:>10.2f} {t['median_ms']:>10.2f} {t['p95_ms']:>8.2f}")
    verdict = "within" if results["ratio"] <= TARGET_RATIO else "OVER"
    lines.append(
        f"series / income statement: {results['ratio']:.2f}x with ragged ends,"
        f" {results['ratio_whole']:.2f}x whole months ({verdict} the target of"
        f" {TARGET_RATIO:g}x, medians); fastest against fastest"
        f" {results['ratio_fastest']:.2f}x"
    )
    for key, where in (("ratio_http", "through the WSGI app"), ("ratio_served", "served")):
        lines.append(
            f"{where}: {results[key]:.2f}x (medians), fastest against fastest"
            f" {results[key + '_fastest']:.2f}x"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    return report.main(argv, parse_args, run, render)


if __name__ == "__main__":
    sys.exit(main())
