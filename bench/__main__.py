"""python -m bench: load a synthetic ledger, serve it, measure over HTTP, compare.

Example: python -m bench --dialect postgresql --transactions 100000
Prints a table of medians and p95s with each figure's ratio to the raw-driver
ceiling measured in the same run; --json FILE also writes the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime

from harness import databases
from harness.server import BENCH_EMAIL, Service, cli

from . import bulk, hledger, ledger_gen, report
from .ceiling import ALL_TIME, AS_OF, WINDOW, Raw
from .http_timing import Client, post_throughput, time_get

WINDOW_FROM, WINDOW_TO = "2024-03-15", "2025-03-14"  # a year with partial months at both ends
YEAR_FROM, YEAR_TO = "2024-01-01", "2024-12-31"
AS_OF_DAY = "2023-06-17"
MONTH_FROM, MONTH_TO = "2024-05-01", "2024-05-31"
MCP_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "account_balances", "arguments": {"from": WINDOW_FROM, "to": WINDOW_TO}},
}


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    p.add_argument("--dialect", choices=("postgresql", "sqlite"), default="postgresql")
    p.add_argument("--transactions", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--repeat", type=int, default=30, help="timed runs per read")
    p.add_argument(
        "--raw-repeat",
        type=int,
        default=5,
        help="timed runs per raw aggregate query (they scan the ledger: slow)",
    )
    p.add_argument("--post-seconds", type=float, default=8.0, help="per POST throughput run")
    p.add_argument(
        "--admin-url",
        default=databases.PG_ADMIN_URL,
        help="PostgreSQL server to create the throwaway database on",
    )
    p.add_argument("--hledger", action="store_true", help="also time `hledger bal` if installed")
    p.add_argument("--keep", action="store_true", help="keep the database afterwards")
    p.add_argument(
        "--database-url",
        help="measure a database already loaded by --load-only (same size and seed)",
    )
    p.add_argument(
        "--load-only",
        action="store_true",
        help="load, rebuild and check, then keep the database and stop",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="the service's WORKERS (serving processes; default 1, as the service)",
    )
    p.add_argument("--json", help="also write the figures to this file")
    return p.parse_args(argv)


def posting(k: int, i: int) -> tuple[str, int, int, int]:
    """A deterministic 2-entry posting for client k, request i (spread over dates)."""
    day = ledger_gen.FIRST_DAY.toordinal() + (k * 7919 + i * 104729) % ledger_gen.DAYS
    a = 1 + (k * 13 + i * 7) % 40
    b = 1 + (a + 1 + i % 38) % 40
    return datetime.fromordinal(day).date().isoformat(), a, b, 100 + i % 10_000


def post_body(k: int, i: int) -> dict:
    day, a, b, cents = posting(k, i)
    return {
        "occurred_on": day,
        "description": f"bench {k}/{i}",
        "entries": [
            {"account_id": a, "amount_cents": cents},
            {"account_id": b, "amount_cents": -cents},
        ],
    }


def run(args) -> dict:
    results: dict = {
        "dialect": args.dialect,
        "transactions": args.transactions,
        "seed": args.seed,
        "started": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": f"{platform.node()} {platform.machine()} {platform.processor() or ''}".strip(),
        "python": platform.python_version(),
        "timings": {},
        "notes": [],
        "cpus": os.cpu_count(),
        "load_average_start": _load_average(),
        "workers": args.workers,
    }
    keep = args.keep or args.load_only
    with databases.throwaway(
        args.dialect, args.admin_url, keep=keep, existing=args.database_url
    ) as url:
        results["load_seconds"] = results["rebuild_seconds"] = 0.0
        if args.database_url:
            results["notes"].append(f"measured an already loaded database: {url}")
        else:
            load_books(url, args, results)
        t0 = time.perf_counter()
        check = cli(url, "check", check=False)
        results["check_seconds"] = time.perf_counter() - t0
        if check.returncode != 0:
            raise SystemExit("ledger-service check found differences:\n" + check.stdout[:4000])
        if args.load_only:
            print(f"loaded and checked: DATABASE_URL={url}")
            sys.exit(0)
        service = Service(url, workers=args.workers)
        token = service.cli("mint-token", BENCH_EMAIL, "--label", "bench")
        raw = Raw(url)
        ceiling = {
            "all_time": raw.time_query(ALL_TIME, args.raw_repeat),
            "as_of": raw.time_query(AS_OF.format(as_of=AS_OF_DAY), args.raw_repeat),
            "window": raw.time_query(
                WINDOW.format(start=WINDOW_FROM, end=WINDOW_TO), args.raw_repeat
            ),
        }
        results["ceiling"] = ceiling
        service.start(sample_memory=True)
        try:
            measure_service(service, token, raw, ceiling, args, results)
        finally:
            results["peak_memory_mib"] = (service.peak_memory_kib() or 0) / 1024
            results["peak_pss_mib"] = (service.peak_pss_kib() or 0) / 1024
            service.stop()
        final = cli(url, "check", check=False)
        results["check_after_posts"] = final.returncode == 0 and not final.stdout
        if args.hledger:
            results["hledger"] = hledger.compare(args.transactions, args.seed, ceiling)
    results["load_average_end"] = _load_average()
    return results


def _load_average() -> list[float] | None:
    """1, 5 and 15 minute load averages: the figures mean little on a busy machine."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def load_books(url, args, results) -> None:
    cli(url, "user", "add", BENCH_EMAIL, "--password", "-", stdin="bench-password\n")
    t0 = time.perf_counter()
    (bulk.load_postgresql if args.dialect == "postgresql" else bulk.load_sqlite)(
        url, args.transactions, args.seed
    )
    results["load_seconds"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    bulk.rebuild_and_analyze(url)
    results["rebuild_seconds"] = time.perf_counter() - t0


def measure_service(service, token, raw, ceiling, args, results) -> None:
    client = Client(service.origin, token)
    t = results["timings"]
    reads = {
        "balances all-time": ("/reports/balances", ceiling["all_time"]),
        "balances 1-year window": (
            f"/reports/balances?from={WINDOW_FROM}&to={WINDOW_TO}",
            ceiling["window"],
        ),
        "income statement (year)": (
            f"/reports/income-statement?from={YEAR_FROM}&to={YEAR_TO}",
            ceiling["window"],
        ),
        "balance sheet as of": (f"/reports/balance-sheet?as_of={AS_OF_DAY}", ceiling["as_of"]),
        "transactions one month": (f"/transactions?from={MONTH_FROM}&to={MONTH_TO}", None),
    }
    for name, (path, base) in reads.items():
        t[name] = time_get(client, path, args.repeat)
        if base:
            t[name]["raw_aggregate_ms"] = base["median_ms"]
    measure_budgets(client, args.repeat, results)
    status, _ = client.call("POST", "/mcp", MCP_CALL)
    if status == 404:
        results["notes"].append(
            "POST /mcp answered 404: the tool endpoint is not built yet; skipped"
        )
    else:
        t["mcp tools/call account_balances"] = time_get_post(client, args.repeat)
    client.close()
    for clients in (1, 4):
        ceiling_w = raw.post_throughput(posting, clients, args.post_seconds)
        served = post_throughput(service.origin, token, post_body, clients, args.post_seconds)
        served["raw_per_second"] = ceiling_w["per_second"]
        served["raw_errors"] = ceiling_w["errors"]
        t[f"POST /transactions, {clients} client(s)"] = served


def measure_budgets(client, repeat, results) -> None:
    """Budgets (docs/ledger.md "Budgets"): creating one from a year of actuals
    (POST /budgets with based_on "actuals", each one deleted again untimed), and the
    year's income statement with `budget` against the same statement without it,
    requested alternately so both see the same machine; the cost of `budget` is the
    median of the paired differences."""
    from .http_timing import summary

    t = results["timings"]
    created = []
    budget_id = None
    run_tag = time.time_ns()  # names are unique: a database measured before keeps working
    for i in range(repeat + 2):
        name = f"bench budget {run_tag} {i}"
        body = {"name": name, "starts_on": YEAR_FROM, "based_on": "actuals"}
        start = time.perf_counter()
        status, answer = client.call("POST", "/budgets", body)
        elapsed = time.perf_counter() - start
        if status != 201:
            results["notes"].append(f"POST /budgets answered {status}: budgets skipped")
            return
        if i >= 2:  # two warm-up runs
            created.append(elapsed)
        made = json.loads(answer)
        if budget_id is None:
            budget_id = made["id"]
            results["budget_lines"] = len(made["lines"])
        else:
            client.call("DELETE", f"/budgets/{made['id']}")
    t["budget from a year of actuals"] = summary(created)
    plain = f"/reports/income-statement?from={YEAR_FROM}&to={YEAR_TO}"
    against = f"{plain}&budget={budget_id}"
    samples: dict[str, list[float]] = {plain: [], against: []}
    for i in range(2 * (repeat + 2)):
        path = plain if i % 2 == 0 else against
        start = time.perf_counter()
        status, _ = client.call("GET", path)
        if status != 200:
            raise RuntimeError(f"GET {path} answered {status}")
        if i >= 4:
            samples[path].append(time.perf_counter() - start)
    client.call("DELETE", f"/budgets/{budget_id}")
    t["income statement (year), paired"] = summary(samples[plain])
    t["income statement (year) + budget"] = summary(samples[against])
    results["budget_added_ms"] = median_paired_difference(samples[plain], samples[against]) * 1000
    results["notes"].append(
        f"budget on the income statement adds {results['budget_added_ms']:.2f} ms"
        f" (median of {len(samples[plain])} paired differences;"
        f" {results['budget_lines']} budget lines)"
    )


def median_paired_difference(first: list[float], second: list[float]) -> float:
    """The median of second[i] - first[i] (an even count: the mean of the two middle
    differences)."""
    return statistics.median(b - a for a, b in zip(first, second, strict=True))


def time_get_post(client, repeat) -> dict:
    from .http_timing import time_call

    def once():
        status, body = client.call("POST", "/mcp", MCP_CALL)
        if status != 200 or b'"error"' in body[:200]:
            raise RuntimeError(f"POST /mcp answered {status}: {body[:200]!r}")

    return time_call(once, repeat)


def main(argv=None) -> int:
    return report.main(argv, parse_args, run, report.render)


if __name__ == "__main__":
    sys.exit(main())
