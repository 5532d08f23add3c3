"""The reports against the floor of their own stack, over HTTP, on the same books.

    python -m bench.read_floor --dialect sqlite --transactions 1000000 [--rounds 6] [--repeat 40]
    python -m bench.read_floor serve DATABASE_URL PORT      # the floor app alone

The floor is the least a correct report can cost on the service's own stack (Flask +
waitress, 8 threads + SQLAlchemy Core + psycopg / sqlite3), reading the same database:
one route per report, the bearer token looked up by its SHA-256 in the service's own
tokens table, then ONE statement summing the same derived tables the service reads
(whole months from account_month_balances, the ragged days at either edge from
account_day_balances) per account, answered as JSON. Nothing else: no lines by kind,
no totals, no sections, no unit of work, none of the service's request handling.

Loads its books as `python -m bench` does (bulk load, derived tables rebuilt, `check`),
serves them with `ledger-service serve` and the floor side by side, then alternates
rounds (ours then the floor, the floor then ours, ...); each round times --repeat GETs
of every report on each side over one keep-alive connection. Prints, per report, the
median of the rounds' medians on each side and their ratio (floor / ours: 1.0 means
the service answers as fast as the floor); the listing's and the register's pages
(ours only: pages have their own 5 ms target). The load average is printed with each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

REPORTS = {
    "balances, all time": ("/reports/balances", None, None),
    "balances, 1-year window": (
        "/reports/balances?from=2024-03-15&to=2025-03-14",
        "2024-03-15",
        "2025-03-14",
    ),
    "income statement, 2024": (
        "/reports/income-statement?from=2024-01-01&to=2024-12-31",
        "2024-01-01",
        "2024-12-31",
    ),
    "balance sheet as of 2023-06-17": (
        "/reports/balance-sheet?as_of=2023-06-17",
        None,
        "2023-06-17",
    ),
}
PAGES = {
    "GET /transactions?limit=50": "/transactions?limit=50",
    "GET /accounts/1/register?limit=50": "/accounts/1/register?limit=50",
    # bench.paging's account (issue 20's figures are for it)
    "GET /accounts/7/register?limit=50": "/accounts/7/register?limit=50",
}


# ---------------------------------------------------------------- the floor app (serve)
def _bounds(start: date | None, end: date | None) -> dict:
    """Whole months [mlo, mhi) inside [start, end] and the ragged days at each edge, as
    the service's reports split a window (services/ledger/reports.py _pieces)."""
    far_lo, far_hi = date(1, 1, 1), date(9999, 12, 1)
    lo = start if start is None or start.day == 1 else _next_month(start)
    hi = None
    if end is not None:
        following = end + timedelta(days=1)
        hi = following if following.day == 1 else end.replace(day=1)
    mlo, mhi = lo or far_lo, hi or far_hi
    return {
        "mlo": mlo,
        "mhi": mhi,
        "d1lo": start or far_lo,
        "d1hi": lo if start is not None and start != lo else (start or far_lo),
        "d2lo": hi if end is not None and hi is not None and hi <= end else far_hi,
        "d2hi": end if end is not None else far_lo,
    }


def _next_month(day: date) -> date:
    return date(day.year + 1, 1, 1) if day.month == 12 else date(day.year, day.month + 1, 1)


def floor_app(url: str):
    import hashlib

    import sqlalchemy as sa
    from flask import Flask, jsonify, request

    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    engine = sa.create_engine(url, pool_size=8, max_overflow=0)
    who = sa.text("SELECT user_id FROM tokens WHERE id = :h AND kind = 'access'")
    sums = sa.text(
        """
        SELECT a.id, a.name, a.kind, coalesce(s.cents, 0)
        FROM accounts AS a LEFT JOIN (
            SELECT account_id, sum(cents) AS cents FROM (
                SELECT account_id, cents FROM account_month_balances
                WHERE month >= :mlo AND month < :mhi
                UNION ALL
                SELECT account_id, cents FROM account_day_balances
                WHERE day >= :d1lo AND day < :d1hi
                UNION ALL
                SELECT account_id, cents FROM account_day_balances
                WHERE day >= :d2lo AND day <= :d2hi
            ) AS p GROUP BY account_id
        ) AS s ON s.account_id = a.id
        ORDER BY a.kind, a.name
        """
    ).bindparams(
        *(sa.bindparam(k, type_=sa.Date()) for k in ("mlo", "mhi", "d1lo", "d1hi", "d2lo", "d2hi"))
    )
    app = Flask("read-floor")

    @app.get("/reports/<name>")
    def report(name):
        auth = request.headers.get("Authorization", "")
        if not auth.startswith("Bearer "):
            return jsonify(error="unauthenticated"), 401
        args = request.args
        start = args.get("from")
        end = args.get("to") or args.get("as_of")
        with engine.connect() as c:
            if c.execute(who, {"h": hashlib.sha256(auth[7:].encode()).hexdigest()}).first() is None:
                return jsonify(error="unauthenticated"), 401
            rows = c.execute(
                sums,
                _bounds(
                    date.fromisoformat(start) if start else None,
                    date.fromisoformat(end) if end else None,
                ),
            ).all()
        return jsonify([{"account": r[1], "kind": r[2], "cents": int(r[3])} for r in rows])

    return app


def serve(url: str, port: int) -> None:
    from waitress import serve as waitress_serve

    waitress_serve(floor_app(url), host="127.0.0.1", port=port, threads=8, _quiet=True)


# ---------------------------------------------------------------- the comparison
def _median_get(client, path: str, repeat: int) -> float:
    from .http_timing import time_get

    return time_get(client, path, repeat)["median_ms"]


def compare(a) -> int:
    from harness import databases
    from harness.server import BENCH_EMAIL, Service, free_port

    from .__main__ import load_books
    from .http_timing import Client

    results: dict = {}
    with databases.throwaway(a.dialect, a.admin_url, existing=a.database_url) as url:
        if not a.database_url:
            t0 = time.perf_counter()
            load_books(url, a, results)
            print(
                f"loaded {a.transactions} transactions in {time.perf_counter() - t0:.0f} s",
                flush=True,
            )
        service = Service(url)
        token = service.cli("mint-token", BENCH_EMAIL, "--label", "read-floor")
        service.start()
        port = free_port()
        log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in finally, read on failure
        floor = subprocess.Popen(
            [sys.executable, "-m", "bench.read_floor", "serve", url, str(port)],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(150):
                try:
                    Client(base, token).call("GET", "/reports/balances")
                    break
                except OSError:
                    time.sleep(0.2)
            else:
                log.seek(0)
                raise RuntimeError("the floor did not start: " + log.read()[-500:].decode())
            sides = {"ours": Client(service.origin, token), "floor": Client(base, token)}
            per: dict = {name: {"ours": [], "floor": []} for name in REPORTS}
            loads = [os.getloadavg()[0]]
            for k in range(a.rounds):
                order = ["ours", "floor"] if k % 2 == 0 else ["floor", "ours"]
                for name, (path, _, _) in REPORTS.items():
                    for side in order:
                        per[name][side].append(_median_get(sides[side], path, a.repeat))
                loads.append(os.getloadavg()[0])
            pages = {
                name: _median_get(sides["ours"], path, a.repeat * a.rounds)
                for name, path in PAGES.items()
            }
        finally:
            floor.terminate()
            floor.wait(10)
            log.close()
            service.stop()
    print(
        f"{a.dialect}, {a.transactions} transactions, {a.rounds} alternated rounds "
        f"of {a.repeat} GETs, "
        f"load average {min(loads):.1f}-{max(loads):.1f}"
    )
    print(f"| report ({a.dialect}) | ours, median ms | floor, median ms | floor / ours |")
    print("|---|---|---|---|")
    for name, sides_ in per.items():
        ours, fl = statistics.median(sides_["ours"]), statistics.median(sides_["floor"])
        shares = [f / o for o, f in zip(sides_["ours"], sides_["floor"], strict=True)]
        print(
            f"| {name} | {ours:.2f} | {fl:.2f} | {statistics.median(shares):.2f} "
            f"({min(shares):.2f}-{max(shares):.2f}) |"
        )
    for name, ms in pages.items():
        print(f"| {name} (page of 50) | {ms:.2f} | | |")
    return 0


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
        return 0
    from harness import databases

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dialect", choices=("postgresql", "sqlite"), default="sqlite")
    ap.add_argument("--transactions", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=40)
    ap.add_argument("--admin-url", default=databases.PG_ADMIN_URL)
    ap.add_argument("--database-url", help="books already loaded (python -m bench --load-only)")
    return compare(ap.parse_args())


if __name__ == "__main__":
    sys.exit(main())
