"""Helpers shared by tests (importable; fixtures live in conftest.py, which no test
imports: tests/test_helpers_layout.py checks it).

Here: the test constants, the require-or-skip flags, the console script, throwaway
databases with pytest's skip-or-fail rule, the injectable clock. Helpers over the
app (schema, reset, test clients, a live server thread) are in tests/testkit.py;
the real `ledger-service serve` process (Service), free_port and http are in
harness/server.py, the throwaway databases themselves in harness/databases.py, shared
with the benchmarks.
"""

import os
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from harness import databases
from harness.databases import PG_ADMIN_URL  # noqa: F401 - re-exported for the tests
from harness.server import PASSWORD, free_port  # noqa: F401 - re-exported for the tests

API_ORIGIN = "http://localhost:38081"
WEB_ORIGIN = "http://localhost:38080"
SESSION_COOKIE = "svc_session"


def repetitions(variable: str, default: int) -> int:
    """How many rounds or trials a reliability test runs: `default` in the ordinary
    suite, the environment variable's value for the long runs `python -m
    bench.reliability` makes (docs/reliability.md). Each count is appended to the file
    LEDGER_REPETITIONS_LOG names, when set, as VARIABLE=count (what bench.reliability
    reports)."""
    value = os.environ.get(variable, "").strip()
    count = int(value) if value else default
    log = os.environ.get("LEDGER_REPETITIONS_LOG")
    if log:  # bench.reliability reports the count the test read, not the one it asked
        with Path(log).open("a", encoding="utf-8") as f:
            f.write(f"{variable}={count}\n")
    return count


def require_postgres() -> bool:
    flag = os.environ.get("LEDGER_REQUIRE_POSTGRES") or os.environ.get("CI") or ""
    return flag.strip().lower() not in ("", "0", "false", "no")


def require_tools() -> bool:
    """True where the external programs `.ci/run` installs must be present: skip -> fail.

    Those are nginx, hledger, ledger-cli, npx and bean-check (node and Chromium have their
    own flag, tests/web/web_support.py). LEDGER_REQUIRE_TOOLS wins when set (0/false/no turns
    the requirement off); otherwise CI or LEDGER_REQUIRE_POSTGRES, the flags `.ci/run`
    sets, imply it.
    """
    explicit = os.environ.get("LEDGER_REQUIRE_TOOLS")
    if explicit is not None and explicit.strip() != "":
        return explicit.strip().lower() not in ("0", "false", "no")
    flag = os.environ.get("CI") or os.environ.get("LEDGER_REQUIRE_POSTGRES") or ""
    return flag.strip().lower() not in ("", "0", "false", "no")


def missing_tool(reason: str):
    """A required external program is absent: a visible skip here, a failure under CI."""
    if require_tools():
        pytest.fail(reason + " (CI/LEDGER_REQUIRE_TOOLS set: .ci/run installs it, so it must run)")
    pytest.skip(reason)


def console_script() -> list[str]:
    """The installed `ledger-service` command (from this interpreter's environment)."""
    import shutil
    import sys
    from pathlib import Path

    beside = Path(sys.executable).parent / "ledger-service"
    found = str(beside) if beside.exists() else shutil.which("ledger-service")
    if not found:
        pytest.skip("the ledger-service console script is not installed (pip install -e .)")
    return [found]


@contextmanager
def throwaway_database(dialect: str, folder: Path, prefix: str = "ledger_test_"):
    """The URL of a new, empty database of dialect (no tables), dropped afterwards
    (harness/databases.py: a SQLite file in folder, or a PostgreSQL database on
    PG_ADMIN_URL). If PostgreSQL cannot be reached the test is skipped with the
    reason, or fails when PostgreSQL runs are required (require_postgres: CI,
    LEDGER_REQUIRE_POSTGRES).
    """
    with ExitStack() as stack:
        try:
            url = stack.enter_context(
                databases.throwaway(dialect, PG_ADMIN_URL, folder=folder, prefix=prefix)
            )
        except databases.Unreachable as exc:
            if require_postgres():
                pytest.fail(f"{exc} (CI/LEDGER_REQUIRE_POSTGRES set: PostgreSQL runs are required)")
            pytest.skip(str(exc))
        yield url


class FakeClock:
    """An injectable clock: starts at a fixed instant, moves only when told."""

    def __init__(self, start: datetime | None = None):
        self.current = start or datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.current

    def advance(self, seconds: float = 0, **kwargs) -> datetime:
        self.current += timedelta(seconds=seconds, **kwargs)
        return self.current
