"""python -m bench.schedules: what 1,000 schedules cost (docs/schedules.md, "Speed").

Example: python -m bench.schedules --dialect sqlite
         python -m bench.schedules --dialect postgresql

On a new, empty database of the dialect: a bank, ten expense accounts and the dues
income; SCHEDULES monthly dues schedules on the bank (one per member: `Member n`,
2,500 cents from the dues, on day n % 28 + 1 of each month, from today), made through
POST /schedules. Every figure goes through the WSGI app (Flask's test client with a
bearer token: authentication, the unit of work and the JSON included, no socket):

  POST /transactions, 1,000 active   --posts postings per round, nine in ten from the
  vs none (alternated rounds)        bank to an expense account, one in ten from the dues
                                     into the bank (an amount no schedule expects), with
                                     the 1,000 schedules active, then with none (turned
                                     off by SQL between rounds), --rounds times each,
                                     alternated; the ratio of the median rates (goal:
                                     at least 0.95)
  GET /schedules/occurrences, a year the year from today of the 1,000 schedules (12,000
                                     occurrences; goal: at most 50 ms)
  GET /reports/forecast, a year      the bank's forecast to a year after today (12,000
                                     items; goal: at most 50 ms)
  GET /schedules                     the 1,000 schedules with their next_due_on

Times of the reads: the median and the fastest of --repeat calls after two untimed
ones, and the median CPU time of this process per call (on a shared machine the wall
times carry other processes' time slices; on SQLite the database runs in this process,
on PostgreSQL its server's time is not in the CPU figure).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import timedelta

from harness import databases
from harness.server import BENCH_EMAIL, cli

SCHEDULES = 1000
GOAL_RATIO = 0.95
GOAL_MS = 50.0


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="python -m bench.schedules", description=__doc__.splitlines()[0]
    )
    p.add_argument("--dialect", choices=("postgresql", "sqlite"), default="sqlite")
    p.add_argument("--schedules", type=int, default=SCHEDULES)
    p.add_argument("--posts", type=int, default=300, help="postings per round")
    p.add_argument("--rounds", type=int, default=4, help="rounds of each kind, alternated")
    p.add_argument("--repeat", type=int, default=15, help="timed calls of each read")
    p.add_argument("--admin-url", default=databases.PG_ADMIN_URL)
    return p.parse_args(argv)


def _token(app) -> str:
    from app import store
    from app.services.identity import credentials

    with store.writing():
        token = credentials.mint_token(
            BENCH_EMAIL, label="bench.schedules", days=1, audience=app.config["API_ORIGIN"]
        )
        store.commit()
    return token


def _set_active(app, active: bool) -> None:
    from sqlalchemy import text

    from app.extensions import db

    with app.app_context(), db.engine.begin() as conn:
        conn.execute(text("UPDATE schedules SET active = :a"), {"a": active})


def _ms(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {"min_ms": ordered[0] * 1000, "median_ms": statistics.median(ordered) * 1000}


def _posting(i: int, today, bank: int, dues: int, expenses: list[int]) -> dict:
    """The i-th posting: mostly an expense paid from the bank, every tenth dues coming
    in at an amount no schedule expects."""
    day = (today - timedelta(days=i % 300)).isoformat()
    if i % 10 == 9:
        legs = [(bank, 1000 + i % 500), (dues, -(1000 + i % 500))]
    else:
        cents = 100 + (i * 37) % 9000
        legs = [(expenses[i % 10], cents), (bank, -cents)]
    return {
        "occurred_on": day,
        "description": f"bench {i}",
        "entries": [{"account_id": a, "amount_cents": c} for a, c in legs],
    }


def _post_rates(app, call, args, posting) -> dict[str, list[float]]:
    """POST /transactions per second with the schedules active and with none, in
    alternated rounds (the first two, one of each, untimed)."""
    rates: dict[str, list[float]] = {"active": [], "none": []}
    i = 0
    for r in range(args.rounds * 2 + 2):
        kind = "active" if r % 2 == 0 else "none"
        _set_active(app, kind == "active")
        start = time.perf_counter()
        for _ in range(args.posts):
            call("POST", "/transactions", posting(i), 201, read=False)
            i += 1
        if r >= 2:
            rates[kind].append(args.posts / (time.perf_counter() - start))
    _set_active(app, True)
    return rates


def _read_times(call, reads: dict[str, str], repeat: int) -> dict:
    """Each read's wall and CPU times over `repeat` calls, alternated (two untimed first,
    the first one's answer counted)."""
    out: dict = {}
    samples: dict[str, list[float]] = {name: [] for name in reads}
    cpu: dict[str, list[float]] = {name: [] for name in reads}
    for n in range(repeat + 2):
        for name, path in reads.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            answer = call("GET", path, read=n == 0)  # the answer read when untimed
            if n >= 2:
                samples[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - start_cpu)
            if n == 0 and name in ("occurrences", "forecast"):
                assert answer is not None
                out[name + "_items"] = len(answer["items"])
    out["reads"] = {name: _ms(taken) for name, taken in samples.items()}
    for name, taken in cpu.items():
        out["reads"][name]["cpu_median_ms"] = statistics.median(taken) * 1000
    return out


def run(args) -> dict:
    from app import create_app
    from app.services import clock

    results: dict = {"dialect": args.dialect, "schedules": args.schedules}
    with databases.throwaway(args.dialect, args.admin_url, prefix="ledger_sched_") as url:
        cli(url, "user", "add", BENCH_EMAIL, "--password", "-", stdin="bench-password\n")
        app = create_app({"DATABASE_URL": url})
        client = app.test_client()
        with app.app_context():
            headers = {"Authorization": f"Bearer {_token(app)}"}
            today = clock.today()

        def call(method: str, path: str, body=None, want=200, read=True):
            answer = client.open(path, method=method, json=body, headers=headers)
            assert answer.status_code == want, (path, answer.status_code, answer.get_data()[:300])
            return answer.get_json() if read else None

        def account(name, kind) -> int:
            return call("POST", "/accounts", {"name": name, "kind": kind}, 201)["id"]

        bank = account("Bank", "asset")
        dues = account("Dues", "income")
        expenses = [account(f"Expense {n}", "expense") for n in range(10)]
        started = time.perf_counter()
        for n in range(args.schedules):
            body = {
                "name": f"Member {n}",
                "account_id": bank,
                "counter_account_id": dues,
                "amount_cents": 2500,
                "rrule": f"FREQ=MONTHLY;BYMONTHDAY={n % 28 + 1}",
                "starts_on": today.isoformat(),
                "match_text": f"Member {n}",
            }
            call("POST", "/schedules", body, 201)
        results["create_s"] = time.perf_counter() - started

        rates = _post_rates(app, call, args, lambda i: _posting(i, today, bank, dues, expenses))
        results["post_rates"] = rates
        results["post_ratio"] = statistics.median(rates["active"]) / statistics.median(
            rates["none"]
        )
        year = today + timedelta(days=364)
        reads = {
            "occurrences": f"/schedules/occurrences?from={today}&to={year}",
            "forecast": f"/reports/forecast?account_id={bank}&to={year}",
            "schedules": "/schedules",
        }
        results.update(_read_times(call, reads, args.repeat))
        with app.app_context():
            from app.extensions import db

            db.engine.dispose()
    return results


def render(r: dict) -> str:
    rates = r["post_rates"]
    lines = [
        f"bench.schedules on {r['dialect']}: {r['schedules']} monthly schedules made in "
        f"{r['create_s']:.1f} s",
        "POST /transactions (test client), per second: "
        f"{r['schedules']} active {statistics.median(rates['active']):.0f} (rounds "
        + ", ".join(f"{x:.0f}" for x in rates["active"])
        + f"), none active {statistics.median(rates['none']):.0f} (rounds "
        + ", ".join(f"{x:.0f}" for x in rates["none"])
        + f"): ratio {r['post_ratio']:.3f} (goal >= {GOAL_RATIO})",
    ]
    reads = r["reads"]
    for name, label, items in (
        ("occurrences", "GET /schedules/occurrences, a year", r["occurrences_items"]),
        ("forecast", "GET /reports/forecast, a year", r["forecast_items"]),
        ("schedules", "GET /schedules", r["schedules"]),
    ):
        goal = f" (goal <= {GOAL_MS:.0f} ms)" if name != "schedules" else ""
        lines.append(
            f"{label}: {items} items, median {reads[name]['median_ms']:.1f} ms, fastest "
            f"{reads[name]['min_ms']:.1f} ms, median CPU of this process "
            f"{reads[name]['cpu_median_ms']:.1f} ms{goal}"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    print(render(run(parse_args(argv))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
