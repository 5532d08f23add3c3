"""python -m bench.compare OTHER: POST /transactions throughput of this checkout and of
another one (OTHER: a path to a checkout, e.g. `git worktree add ../before <commit>`),
measured side by side and alternated, so both meet the same machine.

Why: on a shared or virtual machine the throughput of one run drifts by 20-40 %
between runs minutes apart, more than the differences worth measuring. Here both
services run at once, each on its own throwaway database loaded with the same
synthetic ledger by its own checkout's loader (bench/bulk.py, whose SQL follows that
checkout's schema), and the rounds alternate between them (A B, then B A, ...), so
drift hits both alike. Printed: each side's median postings per second and median
latency per client count, and the median of the per-round ratios (this / other),
which is the figure to quote. --this-keyed with OTHER = this checkout measures what an
Idempotency-Key costs.

Each checkout serves its own app package (`ledger-service serve` run from its folder,
harness.server.Service(root=...)); OTHER needs bench/bulk.py (any commit since the
benchmarks exist). The client and the bodies are this checkout's (bench.http_timing).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from harness import databases
from harness.server import BENCH_EMAIL, LEDGER_SERVICE, ROOT, Service, _env, cli

from .__main__ import post_body, posting
from .ceiling import Raw
from .http_timing import post_throughput

LOAD = (
    "import sys\n"
    "from bench import bulk\n"
    "url, n, seed, dialect = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]\n"
    "(bulk.load_postgresql if dialect == 'postgresql' else bulk.load_sqlite)(url, n, seed)\n"
    "bulk.rebuild_and_analyze(url)\n"
)


def prepare(
    root: Path, url: str, dialect: str, transactions: int, seed: int, trail: bool = False
) -> Service:
    """A started service of the checkout at root on url, with the synthetic ledger.

    trail (this checkout only): loaded as bench.verify does, at the schema before the
    audit trail and then migrated, so the trail's backfill covers the loaded books and
    `ledger-service verify` can replay them after the run.
    """
    if trail:
        subprocess.run(
            [sys.executable, "-m", "bench.verify", "--prepare", url]
            + ["--transactions", str(transactions), "--seed", str(seed)],
            cwd=root,
            env={**_env(url), "PYTHONPATH": str(root)},
            check=True,
            capture_output=True,
        )
    subprocess.run(
        LEDGER_SERVICE + ["user", "add", BENCH_EMAIL, "--password", "-"],
        cwd=root,
        env=_env(url),
        input="bench-password\n",
        text=True,
        capture_output=True,
        check=True,
    )
    if not trail:
        subprocess.run(
            [sys.executable, "-c", LOAD, url, str(transactions), str(seed), dialect],
            cwd=root,
            env={**_env(url), "PYTHONPATH": str(root)},
            check=True,
        )
    return Service(url, root=root)


def settle(urls, dialect: str) -> None:
    """Write the loads' aftermath to disk before the first measured round.

    Loading three books of 100,000 transactions fills PostgreSQL's WAL past max_wal_size,
    and the checkpoint that follows spreads its writes over the next minutes, slowing
    whichever rounds it meets (seen: rounds 0.84-1.10 apart in one run). A CHECKPOINT
    (PostgreSQL; needs a superuser or pg_checkpoint, as the bench's own server gives) or
    a truncating WAL checkpoint of each file (SQLite) does that work now, unmeasured.
    """
    for url in urls:
        raw = Raw(url).connect()
        try:
            if dialect == "postgresql":
                raw.autocommit = True
                raw.execute("CHECKPOINT")
            else:
                raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            raw.close()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__.splitlines()[0])
    p.add_argument("other", type=Path, help="the other checkout's folder")
    p.add_argument("--dialect", choices=("postgresql", "sqlite"), default="postgresql")
    p.add_argument("--transactions", type=int, default=20_000)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--clients", default="1,4", help="client counts, comma-separated")
    p.add_argument("--keyed", action="store_true", help="a new Idempotency-Key on every POST")
    p.add_argument(
        "--this-keyed",
        action="store_true",
        help="keys on this side's POSTs only (OTHER may be this same checkout: the keys' cost)",
    )
    p.add_argument(
        "--ceiling",
        action="store_true",
        help="also the raw-driver ceiling (bench.ceiling), 1 client, in every round, on a copy "
        "of this side's books; printed with this side's 1-client share of it",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="load this side as bench.verify does (the trail's backfill covers the books) and "
        "afterwards run `ledger-service verify` and `check` on its database",
    )
    args = p.parse_args(argv)
    other = args.other.resolve()
    if not (other / "bench" / "bulk.py").is_file():
        p.error(f"{other} is not a checkout with bench/bulk.py")
    counts = [int(c) for c in args.clients.split(",")]
    sides = {"this": ROOT, "other": other}
    with (
        databases.throwaway(args.dialect) as url_this,
        databases.throwaway(args.dialect) as url_other,
        databases.throwaway(args.dialect) as url_ceiling,
    ):
        urls = {"this": url_this, "other": url_other}
        if args.ceiling:  # its own copy of this side's books: raw rows carry no events
            prepare(ROOT, url_ceiling, args.dialect, args.transactions, args.seed)
        services = {
            name: prepare(
                root,
                urls[name],
                args.dialect,
                args.transactions,
                args.seed,
                trail=args.verify and name == "this",
            )
            for name, root in sides.items()
        }
        tokens = {}
        try:
            for name, service in services.items():
                tokens[name] = service.cli("mint-token", BENCH_EMAIL, "--label", "bench")
                service.start()
            # Unmeasured: each side's first requests (statement caches, the driver's
            # prepared statements, every serving thread's first use), then settle().
            warm = min(1.0, args.seconds)
            for name, service in services.items():
                post_throughput(service.origin, tokens[name], post_body, max(counts), warm)
            if args.ceiling:
                Raw(url_ceiling).post_throughput(posting, 1, warm)
            settle([*urls.values()] + ([url_ceiling] if args.ceiling else []), args.dialect)
            rates: dict = {(n, c): [] for n in sides for c in counts}
            latency: dict = {(n, c): [] for n in sides for c in counts}
            ceiling: list[float] = []
            print(f"load average at start: {os.getloadavg()}", flush=True)
            for r in range(args.rounds):
                order = ["this", "other"] if r % 2 == 0 else ["other", "this"]
                if args.ceiling:
                    raw = Raw(url_ceiling).post_throughput(posting, 1, args.seconds)
                    if raw["error_count"]:
                        raise SystemExit(f"ceiling: errors: {raw['errors']}")
                    ceiling.append(raw["per_second"])
                for clients in counts:
                    for name in order:
                        run = post_throughput(
                            services[name].origin,
                            tokens[name],
                            post_body,
                            clients,
                            args.seconds,
                            args.keyed or (args.this_keyed and name == "this"),
                        )
                        if run["error_count"]:
                            raise SystemExit(f"{name}: errors: {run['errors']}")
                        rates[name, clients].append(run["per_second"])
                        latency[name, clients].append(run["median_ms"])
            keyed = " (keyed)" if args.keyed else " (this side keyed)" if args.this_keyed else ""
            print(f"this: {ROOT}\nother: {other}")
            for clients in counts:
                this, them = rates["this", clients], rates["other", clients]
                ratios = [a / b for a, b in zip(this, them, strict=True)]
                print(
                    f"{args.dialect} POST /transactions{keyed}, {clients} client(s), "
                    f"{args.rounds} alternated rounds of {args.seconds:g} s: "
                    f"this {statistics.median(this):.0f}/s "
                    f"({statistics.median(latency['this', clients]):.2f} ms), "
                    f"other {statistics.median(them):.0f}/s "
                    f"({statistics.median(latency['other', clients]):.2f} ms), "
                    f"this/other per round: median {statistics.median(ratios):.3f} "
                    f"(range {min(ratios):.3f}-{max(ratios):.3f})",
                    flush=True,
                )
                if ceiling and clients == 1:
                    shares = [a / b for a, b in zip(this, ceiling, strict=True)]
                    theirs = [a / b for a, b in zip(them, ceiling, strict=True)]
                    print(
                        f"{args.dialect} raw-driver ceiling (bench.ceiling), 1 client, "
                        f"every round: {statistics.median(ceiling):.0f}/s; "
                        f"this / ceiling per round: median {statistics.median(shares):.3f} "
                        f"(range {min(shares):.3f}-{max(shares):.3f}); "
                        f"other / ceiling: median {statistics.median(theirs):.3f} "
                        f"(range {min(theirs):.3f}-{max(theirs):.3f})",
                        flush=True,
                    )
            print(f"load average at end: {os.getloadavg()}", flush=True)
        finally:
            for service in services.values():
                service.stop()
        if args.verify:  # this side (OTHER may predate `verify`), after every posting above
            for command in ("verify", "check"):
                done = cli(urls["this"], command, check=False)
                said = (done.stdout + done.stderr).strip()
                print(f"this: ledger-service {command} (exit {done.returncode}): {said}")
                if done.returncode:
                    raise SystemExit(f"ledger-service {command} failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
