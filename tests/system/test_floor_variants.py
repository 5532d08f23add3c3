"""bench.floor_variants measures what each guarantee costs by removing it in memory
(docs/performance.md, issue 39): a variant whose patch no longer matches the code
would silently measure the service unchanged. Each is applied in a process of its own
(they replace module globals) and must have removed what it names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a process per variant, seconds each

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
from bench import floor_variants as f
for step in f.PATCHES.get(sys.argv[1], []):
    step()
from app.services.ledger import audit, schedule_meeting, transactions
from app.store import sqlite
from app.routes import support, transactions as route
from app.cli import serve
print("PG", transactions._INSERT_CHECKED.text)
print("SQLITE", transactions._INSERT_CHECKED_SQLITE.text)
print("RECORD", audit.record.__module__)
print("RECHECK", sqlite._check_sqlite_balance.__name__)
print("CREATED", route.created_once.__module__)
print("UPGRADE", serve.upgrade_schema.__name__)
print("CANDIDATES", schedule_meeting.candidates.__name__)
"""


def probe(variant: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, variant], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_control_changes_nothing():
    out = probe("ours")
    assert "INSERT INTO audit_pending" in out and "FOR KEY SHARE" in out
    assert "RECHECK _check_sqlite_balance" in out and "UPGRADE upgrade_schema" in out
    assert "CANDIDATES candidates" in out


@pytest.mark.parametrize(
    ("variant", "gone", "present"),
    [
        ("no-audit", ["INSERT INTO audit_pending", "RECORD app.services"], ["INSERT INTO entries"]),
        ("no-lock-archived", ["FOR KEY SHARE", "locked_through >=", "NOT archived"], ["json_each"]),
        ("no-recheck", ["RECHECK _check_sqlite_balance", "UPGRADE upgrade_schema"], []),
        ("no-derived", ["UPGRADE upgrade_schema"], ["FOR KEY SHARE"]),
        ("no-search", ["UPGRADE upgrade_schema"], ["FOR KEY SHARE"]),
        ("no-idempotency", ["CREATED app.routes"], ["INSERT INTO audit_pending"]),
        ("no-schedules", ["CANDIDATES candidates"], ["INSERT INTO audit_pending"]),
        (
            "floor-ish",
            [
                "INSERT INTO audit_pending",
                "NOT archived",
                "CREATED app.routes",
                "CANDIDATES candidates",
            ],
            [],
        ),
    ],
)
def test_each_variant_removes_what_it_names(variant, gone, present):
    out = probe(variant)
    for text in gone:
        assert text not in out, (variant, text)
    for text in present:
        assert text in out, (variant, text)
