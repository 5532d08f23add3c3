"""python -m bench.posts: POST /transactions throughput alone (the write path's cost).

Loads a synthetic ledger (bulk, as `python -m bench`), serves it, mints a token and
posts from 1 and 4 client threads for --seconds each, --rounds times, printing the
median of the rounds: a quick before/after figure for a change to the write path
(e.g. the audit trail, docs/performance.md) without the read benchmarks.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from harness import databases
from harness.server import BENCH_EMAIL, Service, cli

from . import bulk
from .__main__ import post_body
from .http_timing import post_throughput


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.posts", description=__doc__.splitlines()[0])
    p.add_argument("--dialect", choices=("postgresql", "sqlite"), default="postgresql")
    p.add_argument("--transactions", type=int, default=20_000)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument(
        "--keyed",
        action="store_true",
        help="send a new Idempotency-Key with every POST (the idempotency check's cost)",
    )
    args = p.parse_args(argv)
    with databases.throwaway(args.dialect) as url:
        cli(url, "user", "add", BENCH_EMAIL, "--password", "-", stdin="bench-password\n")
        load = bulk.load_postgresql if args.dialect == "postgresql" else bulk.load_sqlite
        load(url, args.transactions, args.seed)
        bulk.rebuild_and_analyze(url)
        service = Service(url)
        token = service.cli("mint-token", BENCH_EMAIL, "--label", "bench")
        service.start()
        try:
            for clients in (1, 4):
                rates, p50 = [], []
                for _ in range(args.rounds):
                    run = post_throughput(
                        service.origin, token, post_body, clients, args.seconds, args.keyed
                    )
                    if run["error_count"]:
                        raise SystemExit(f"errors: {run['errors']}")
                    rates.append(run["per_second"])
                    p50.append(run["median_ms"])
                rounds = ", ".join(f"{r:.0f}" for r in rates)
                print(
                    f"{args.dialect} POST /transactions{' (keyed)' if args.keyed else ''}, "
                    f"{clients} client(s): "
                    f"{statistics.median(rates):.0f}/s (rounds {rounds}), "
                    f"median latency {statistics.median(p50):.2f} ms",
                    flush=True,
                )
        finally:
            service.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
