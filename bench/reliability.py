"""The long reliability runs behind docs/reliability.md's figures, per store.

    python -m bench.reliability crash --trials 20      # SIGKILL mid-stream, then restart
    python -m bench.reliability races --rounds 200     # code, refresh, device claim,
                                                       # idempotency key, attempt budgets
    python -m bench.reliability fuzz --max-examples 280  # >= 10,000 cases from the openapi
    python -m bench.reliability all                    # the three, as above

The README's test command runs the same tests with a few rounds each; this runs them
with the counts given, on SQLite and on PostgreSQL (--dialect to pick one), each as
its own `python -m pytest` (or `python -m bench.fuzz`) process, and prints one line
per run: what, store, how many (the rounds or trials the test itself read, the cases
the fuzzer ran), passed or failed, wall time; then the whole report as JSON. A test
fails on the first round that breaks its rule (a double win, an orphan token, a lost
acknowledged write, a budget passed, a 5xx), so "passed" means every round held.
Exit status 1 if any run failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.server import ROOT

DIALECTS = ("sqlite", "postgresql")

# (name, test files, -k expression, the environment variable that sets its count)
OAUTH_RACES = "tests/services/oauth/test_races.py"
RACES = (
    ("authorization code", OAUTH_RACES, "two_redemptions", "LEDGER_RACE_ROUNDS"),
    ("refresh token", OAUTH_RACES, "two_refreshes", "LEDGER_RACE_ROUNDS"),
    ("device code claim", OAUTH_RACES, "claiming_one", "LEDGER_RACE_ROUNDS"),
    (
        "idempotency key",
        "tests/services/ledger/test_idempotency.py",
        "one_key_store_exactly_one",
        "LEDGER_RACE_ROUNDS",
    ),
    (
        "device attempt budget",
        "tests/services/oauth/test_races.py",
        "never_pass_the_attempt_budget",
        "LEDGER_BUDGET_ROUNDS",
    ),
    (
        "sign-in attempt budget",
        "tests/services/identity/test_auth_races.py",
        "admitted_as_serial_ones",
        "LEDGER_BUDGET_ROUNDS",
    ),
)
CRASH = ("SIGKILL mid-stream", "tests/system/test_crash.py", "sigkill", "LEDGER_CRASH_TRIALS")


def _pytest(name, path, selector, variable, count, dialect) -> dict:
    """One long run; its count is the one the test read (tests/support.py repetitions
    writes it to LEDGER_REPETITIONS_LOG), None if it never read `variable`: then the
    run has not run `count` rounds, and it is not passed."""
    with tempfile.TemporaryDirectory(prefix="ledger-reliability-") as scratch:
        log = Path(scratch) / "repetitions"
        env = dict(os.environ, **{variable: str(count), "LEDGER_REPETITIONS_LOG": str(log)})
        began = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path, "-k"]
            + [f"{selector} and {dialect}"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        read = log.read_text(encoding="utf-8").split() if log.exists() else []
    counts = sorted(
        {int(line.split("=", 1)[1]) for line in read if line.startswith(variable + "=")}
    )
    ran = counts[0] if len(counts) == 1 else (counts or None)
    summary = (result.stdout.strip().splitlines() or [""])[-1]
    passed = (
        result.returncode == 0
        and " passed" in summary
        and "skipped" not in summary
        and ran == count
    )
    return {
        "what": name,
        "dialect": dialect,
        "count": ran,
        "asked": count,
        "passed": passed,
        "pytest": summary,
        "seconds": round(time.monotonic() - began, 1),
        **({} if passed else {"output": result.stdout[-3000:] + result.stderr[-2000:]}),
    }


def _fuzz(max_examples: int, dialect: str) -> dict:
    began = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "bench.fuzz", "--dialect", dialect]
        + ["--max-examples", str(max_examples)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    match = re.search(r"\{.*\}", result.stdout, re.S)
    figures = json.loads(match.group(0)) if match else {}
    return {
        "what": "fuzzed requests",
        "dialect": dialect,
        "count": figures.get("cases"),
        "passed": result.returncode == 0 and figures.get("server_errors_5xx") == 0,
        "server_errors_5xx": figures.get("server_errors_5xx"),
        "operations": figures.get("operations"),
        "responses_by_status": figures.get("responses_by_status"),
        "failed_checks": len(figures.get("failed_checks") or []),
        "seconds": round(time.monotonic() - began, 1),
        **({} if result.returncode == 0 else {"output": result.stdout[-3000:]}),
    }


def runs(what: str, dialect: str, args):
    """Each run of `what` on one store, as it finishes."""
    if what in ("crash", "all"):
        yield _pytest(*CRASH, args.trials, dialect)
    if what in ("races", "all"):
        for race in RACES:
            yield _pytest(*race, args.rounds, dialect)
    if what in ("fuzz", "all"):
        yield _fuzz(args.max_examples, dialect)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bench.reliability", description=__doc__.splitlines()[0]
    )
    p.add_argument("what", choices=("crash", "races", "fuzz", "all"))
    p.add_argument("--trials", type=int, default=20, help="SIGKILL trials per store")
    p.add_argument("--rounds", type=int, default=200, help="rounds of each race per store")
    p.add_argument(
        "--max-examples",
        type=int,
        default=280,
        help="generated fuzz cases per operation (280: over 10,000 cases in all)",
    )
    p.add_argument("--dialect", action="append", choices=DIALECTS, help="default: both")
    args = p.parse_args(argv)
    began = time.monotonic()
    report = []
    for dialect in args.dialect or DIALECTS:
        for run in runs(args.what, dialect, args):
            report.append(run)
            status = "passed" if run["passed"] else "FAILED"
            print(
                f"{run['what']:<24} {run['dialect']:<11} {run['count']!s:>6}  {status}"
                f"  {run['seconds']:>7.1f} s",
                flush=True,
            )
    wall = round(time.monotonic() - began, 1)
    print(json.dumps({"wall_seconds": wall, "runs": report}, indent=2))
    return 0 if all(r["passed"] for r in report) else 1


if __name__ == "__main__":
    sys.exit(main())
