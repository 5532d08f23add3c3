"""The load script, small: concurrent reads, postings, tool calls and token refreshes
against `ledger-service serve` (waitress, 8 threads) lose nothing and fail nothing.

This is the regression test for SQLite's "database is locked" on a read request whose
bearer token was due for its last-use bookkeeping while other clients were writing
(a read snapshot cannot be upgraded to a writer: the write now gets its own unit that
begins as a writer). `python -m bench.load` runs the same thing longer and prints figures.
"""

import pytest

from bench import load
from tests.support import PG_ADMIN_URL

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


def test_mixed_load_has_no_errors_and_loses_no_write(dialect):
    report = load.run(dialect, clients=8, seconds=6, requests=4000, seed=8, admin_url=PG_ADMIN_URL)
    assert report["errors"] == 0, report["error_kinds"]
    assert report["server_errors_logged"] == 0, report["first_server_error"]
    assert report["books"] == "every acknowledged posting stored, complete and balanced"
    # It really ran: every kind of request, and postings acknowledged.
    assert set(report["by_kind"]) == {"read", "post", "tool", "refresh"}
    assert report["acknowledged_postings"] > 20
    assert report["requests"] > 200
