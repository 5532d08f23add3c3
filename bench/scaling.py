"""python -m bench.scaling: how much slower each report gets as the ledger grows.

Example: python -m bench.scaling --dialect sqlite --small 100000 --large 1000000

Loads the same synthetic books at two sizes (as `python -m bench` does), serves each
with its own `ledger-service serve`, and times every report on both in alternation
(small, large, small, large, ...), so that whatever else the machine is doing falls
on both sizes alike. Prints each report's medians and the large/small ratio; the
issue's target is at most 1.5x from 100,000 to 1,000,000 transactions. Exit status
1 when a ratio is above --limit (default 1.5).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from contextlib import ExitStack

from harness import databases
from harness.server import BENCH_EMAIL, Service

from .__main__ import AS_OF_DAY, MCP_CALL, WINDOW_FROM, WINDOW_TO, YEAR_FROM, YEAR_TO
from .__main__ import load_books as _load_books
from .http_timing import Client

REPORTS = {
    "balances all-time": ("GET", "/reports/balances"),
    "balances 1-year window": ("GET", f"/reports/balances?from={WINDOW_FROM}&to={WINDOW_TO}"),
    "income statement (year)": ("GET", f"/reports/income-statement?from={YEAR_FROM}&to={YEAR_TO}"),
    "balance sheet as of": ("GET", f"/reports/balance-sheet?as_of={AS_OF_DAY}"),
    "mcp tools/call account_balances": ("POST", "/mcp"),
}


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m bench.scaling", description=__doc__.splitlines()[0])
    p.add_argument("--dialect", choices=("postgresql", "sqlite"), default="postgresql")
    p.add_argument("--small", type=int, default=100_000)
    p.add_argument("--large", type=int, default=1_000_000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--repeat", type=int, default=60, help="timed calls per report and size")
    p.add_argument("--limit", type=float, default=1.5, help="largest acceptable ratio")
    p.add_argument("--admin-url", default=databases.PG_ADMIN_URL)
    return p.parse_args(argv)


def _timed(client: Client, method: str, path: str) -> float:
    start = time.perf_counter()
    status, body = client.call(method, path, MCP_CALL if method == "POST" else None)
    elapsed = time.perf_counter() - start
    if status != 200 or (method == "POST" and b'"error"' in body[:200]):
        raise RuntimeError(f"{method} {path} answered {status}: {body[:200]!r}")
    return elapsed


def measure(clients: dict[str, Client], repeat: int) -> dict:
    """{report: {size: [seconds, ...]}}, the sizes timed in alternation."""
    samples: dict = {name: {size: [] for size in clients} for name in REPORTS}
    for name, (method, path) in REPORTS.items():
        for client in clients.values():  # warm-up
            _timed(client, method, path)
            _timed(client, method, path)
        for _ in range(repeat):
            for size, client in clients.items():
                samples[name][size].append(_timed(client, method, path))
    return samples


def main(argv=None) -> int:
    args = parse_args(argv)
    sizes = {"small": args.small, "large": args.large}
    with ExitStack() as stack:
        clients, services = {}, []
        for size, n in sizes.items():
            url = stack.enter_context(databases.throwaway(args.dialect, args.admin_url))
            load_args = argparse.Namespace(dialect=args.dialect, transactions=n, seed=args.seed)
            _load_books(url, load_args, {})
            service = Service(url)
            token = service.cli("mint-token", BENCH_EMAIL, "--label", "scaling")
            service.start()
            stack.callback(service.stop)
            services.append(service)
            clients[size] = Client(service.origin, token)
            stack.callback(clients[size].close)
        samples = measure(clients, args.repeat)
    print(
        f"ledger-service report scaling: {args.dialect}, {args.small:,} vs {args.large:,}"
        f" transactions, {args.repeat} alternating calls per report and size"
    )
    print(f"{'report':34} {'small ms':>9} {'large ms':>9} {'large/small':>12}")
    worst = 0.0
    for name, by_size in samples.items():
        small = statistics.median(by_size["small"]) * 1000
        large = statistics.median(by_size["large"]) * 1000
        ratio = large / small
        worst = max(worst, ratio)
        print(f"{name:34} {small:9.2f} {large:9.2f} {ratio:11.2f}x")
    verdict = "within" if worst <= args.limit else "ABOVE"
    print(f"largest ratio {worst:.2f}x: {verdict} the {args.limit}x limit")
    return 0 if worst <= args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
