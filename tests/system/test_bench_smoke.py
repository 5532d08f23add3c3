"""A tiny run of the benchmark harness (python -m bench), so that it cannot rot.

It loads 200 synthetic transactions, serves them under waitress on a free port,
measures every figure, and must end with `ledger-service check` finding nothing.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import throwaway_database

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)

ROOT = Path(__file__).resolve().parents[2]


def run_bench(module: str, *args: str) -> subprocess.CompletedProcess:
    """`python -m <module> ARGS` from the repository root, as a reader runs it."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _ledger_gen():
    """bench/ is run from the repository root, not installed: import it from there."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module("bench.ledger_gen")


def test_generator_is_deterministic_and_balanced():
    ledger_gen = _ledger_gen()
    first = list(ledger_gen.transactions(500, seed=3))
    assert first == list(ledger_gen.transactions(500, seed=3))
    assert first != list(ledger_gen.transactions(500, seed=4))
    assert all(sum(c for _, c in legs) == 0 and 2 <= len(legs) <= 4 for *_, legs in first)
    assert first[0][1] == ledger_gen.FIRST_DAY and first[-1][1] <= ledger_gen.LAST_DAY
    kinds = {kind for _, _, kind in ledger_gen.accounts()}
    assert len(ledger_gen.accounts()) == 40 and len(kinds) == 5


def test_the_paired_difference_is_the_median():
    """The cost `budget` adds is the median of the paired differences: with an even count,
    the mean of the two middle ones (not the upper of them)."""
    bench_main = importlib.import_module("bench.__main__")
    first, second = [10.0, 10.0, 10.0, 10.0], [11.0, 14.0, 12.0, 13.0]  # differences 1-4
    assert bench_main.median_paired_difference(first, second) == 2.5
    assert bench_main.median_paired_difference(first[:3], second[:3]) == 2.0


def _reachable_or_skip(bench_dialect: str, tmp_path) -> None:
    """The project's one rule for an unreachable PostgreSQL (tests/support.py,
    throwaway_database): a visible skip, or a failure under CI / LEDGER_REQUIRE_POSTGRES.
    The bench makes its own throwaway database on the same server (PG_ADMIN_URL)."""
    with throwaway_database(bench_dialect, tmp_path, "ledger_bench_probe_"):
        pass


@pytest.mark.parametrize("bench_dialect", ["sqlite", "postgresql"])
def test_bench_smoke_run(bench_dialect, tmp_path):
    _reachable_or_skip(bench_dialect, tmp_path)
    out = tmp_path / "figures.json"
    done = run_bench(
        "bench",
        "--dialect",
        bench_dialect,
        "--transactions",
        "200",
        "--repeat",
        "3",
        "--raw-repeat",
        "2",
        "--post-seconds",
        "0.5",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "balances all-time" in done.stdout
    figures = json.loads(out.read_text())
    assert figures["check_after_posts"] is True
    timings = figures["timings"]
    for name in (
        "balances all-time",
        "balances 1-year window",
        "income statement (year)",
        "balance sheet as of",
        "transactions one month",
    ):
        assert timings[name]["n"] == 3 and timings[name]["median_ms"] > 0
    for clients in (1, 4):
        post = timings[f"POST /transactions, {clients} client(s)"]
        assert post["ok"] > 0 and post["error_count"] == 0, post
        assert post["raw_per_second"] > 0
    # Budgets: created from a year of actuals, the statement with and without `budget`.
    for name in (
        "budget from a year of actuals",
        "income statement (year), paired",
        "income statement (year) + budget",
    ):
        assert timings[name]["n"] == 3 and timings[name]["median_ms"] > 0
    assert figures["budget_lines"] > 0 and "budget_added_ms" in figures
    assert figures["peak_memory_mib"] > 0
    assert figures["peak_pss_mib"] > 0
    assert figures["workers"] == 1 and figures["cpus"] >= 1


def test_bench_smoke_run_with_two_workers(tmp_path):
    out = tmp_path / "figures.json"
    done = run_bench(
        "bench",
        "--dialect",
        "sqlite",
        "--transactions",
        "200",
        "--repeat",
        "3",
        "--raw-repeat",
        "2",
        "--post-seconds",
        "0.5",
        "--workers",
        "2",
        "--json",
        str(out),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WORKERS=2" in done.stdout
    figures = json.loads(out.read_text())
    assert figures["workers"] == 2 and figures["check_after_posts"] is True
    for clients in (1, 4):
        post = figures["timings"][f"POST /transactions, {clients} client(s)"]
        assert post["ok"] > 0 and post["error_count"] == 0, post
    # the supervisor and both workers are counted
    assert figures["peak_memory_mib"] > figures["peak_pss_mib"] > 0


def test_scaling_smoke_run():
    """python -m bench.scaling: two sizes, every report timed on both, ratios printed."""
    done = run_bench(
        "bench.scaling",
        "--dialect",
        "sqlite",
        "--small",
        "100",
        "--large",
        "400",
        "--repeat",
        "3",
        "--limit",
        "1000",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for name in (
        "balances all-time",
        "balances 1-year window",
        "income statement (year)",
        "balance sheet as of",
        "mcp tools/call account_balances",
    ):
        assert name in done.stdout
    assert "within the 1000.0x limit" in done.stdout


def test_compare_smoke_run():
    """python -m bench.compare: this checkout against itself, the keyed side too, both
    served at once, one alternated round each, after the unmeasured warm-up and the
    settling checkpoint; the ratios printed, and both sides' share of the raw ceiling."""
    done = run_bench(
        "bench.compare",
        str(ROOT),
        "--dialect",
        "sqlite",
        "--transactions",
        "100",
        "--rounds",
        "2",
        "--seconds",
        "0.3",
        "--clients",
        "1",
        "--this-keyed",
        "--ceiling",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = [x for x in done.stdout.splitlines() if "client(s)" in x]
    assert len(line) == 1, done.stdout
    assert "(this side keyed), 1 client(s), 2 alternated rounds" in line[0]
    assert "this/other per round: median" in line[0]
    ceiling = [x for x in done.stdout.splitlines() if "raw-driver ceiling" in x]
    assert len(ceiling) == 1, done.stdout
    assert "this / ceiling per round: median" in ceiling[0]
    assert "other / ceiling: median" in ceiling[0]


def test_fuzz_entry_point_runs():
    """python -m bench.fuzz (named in README.md and docs/reliability.md) imports and runs.

    One example per operation on SQLite: a cheap end-to-end run of the entry point, so a
    name moved out from under it (an ImportError) fails here instead of in a reader's shell.
    """
    done = run_bench(
        "bench.fuzz",
        "--dialect",
        "sqlite",
        "--max-examples",
        "1",
    )
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    report = json.loads(done.stdout)
    assert report["dialect"] == "sqlite" and report["max_examples_per_operation"] == 1
    assert report["operations"] >= 20 and report["cases"] > 0
    assert report["server_errors_5xx"] == 0 and report["failed_checks"] == []


@pytest.mark.parametrize("bench_dialect", ["sqlite", "postgresql"])
def test_verify_bench_smoke_run(bench_dialect, tmp_path):
    """python -m bench.verify (its figures are in docs/reliability.md): books loaded at the
    schema before the trail, migrated, verified clean (exit 0), then tampered (exit 1)."""
    _reachable_or_skip(bench_dialect, tmp_path)
    done = run_bench("bench.verify", "--dialect", bench_dialect, "--transactions", "1500")
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "verify (clean): exit 0" in done.stdout
    assert "doubled by SQL): exit 1" in done.stdout
    assert "in the ledger but" in done.stdout


def test_reliability_runs_select_one_test_per_store():
    """Each long run of `python -m bench.reliability` names exactly one test per store
    (a renamed test would otherwise leave a figure nothing measures)."""
    reliability = importlib.import_module("bench.reliability")
    runs = (*reliability.RACES, reliability.CRASH)
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        + sorted({path for _, path, _, _ in runs}),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout.splitlines()
    for _name, path, selector, _variable in runs:
        for dialect in ("sqlite", "postgresql"):
            chosen = [i for i in collected if i.startswith(path) and selector in i and dialect in i]
            assert len(chosen) == 1, (selector, dialect, chosen)


def test_reliability_reports_the_count_the_test_read():
    """`python -m bench.reliability` prints the rounds the test ran (as it read them,
    tests/support.py repetitions), not the count it asked for: a test that never reads
    the variable is reported with none, and not as passed."""
    reliability = importlib.import_module("bench.reliability")
    path, selector = "tests/services/identity/test_auth_races.py", "admitted_as_serial_ones"
    read = reliability._pytest("sign-in", path, selector, "LEDGER_BUDGET_ROUNDS", 2, "sqlite")
    assert (read["count"], read["asked"], read["passed"]) == (2, 2, True), read
    unread = reliability._pytest("sign-in", path, selector, "LEDGER_UNREAD_ROUNDS", 2, "sqlite")
    assert (unread["count"], unread["asked"], unread["passed"]) == (None, 2, False), unread


def test_pages_bench_arguments_files_and_table():
    """python -m bench.pages (docs/performance.md, "Pages"): its command line, the
    1,000-line statement and 1,000-row CSV it times, and its table (the browser run
    itself is too long for the suite)."""
    from bench import pages

    args = pages.parse_args(["--store", "postgres", "--transactions", "1000000"])
    assert (args.store, args.transactions, args.repeat, args.seed) == ("postgres", 1_000_000, 10, 7)
    with pytest.raises(SystemExit):
        pages.parse_args(["--store", "mysql"])
    assert pages.statement_file(7).count(b"<STMTTRN>") == pages.STATEMENT_LINES == 1000
    csv = pages.csv_file(7).decode().splitlines()
    assert csv[0] == "Date,Description,Amount" and len(csv) == pages.CSV_ROWS + 1 == 1001
    figures = {
        "median_ms": 120.0,
        "mark_ms": 110.0,
        "max_ms": 150.0,
        "requests": 3,
        "first_api_ms": 40.0,
        "last_api_ms": 100.0,
        "files": 12,
        "calls": [],
    }
    slow = {**figures, "median_ms": 420.0}
    table = pages.render(
        {
            "store": "sqlite",
            "transactions": 10_000,
            "seed": 7,
            "repeat": 10,
            "started": "2026-11-29 08:00 UTC",
            "load_average_start": [1.0, 1.0, 1.0],
            "load_average_end": [1.0, 1.0, 1.0],
            "pages": {
                "Books": {"path": "/", "desktop": figures, "phone": figures},
                "History": {"path": "/history", "desktop": figures, "phone": slow},
            },
            "notes": [],
        }
    )
    lines = table.splitlines()
    assert any(line.startswith("Books") and line.endswith("100") for line in lines), table
    assert any(line.startswith("History") and line.endswith(" *") for line in lines), table
    assert set(pages.page_paths({"budget": 1, "statement": 2})) >= {"Books", "Year end"}
    assert len(pages.page_paths({"budget": 1, "statement": 2})) == 9
