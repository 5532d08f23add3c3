"""In-process timing of POST /transactions (docs/performance.md, "The write path, issue 30").

Not part of the suite (its name does not match test_*.py); run it by name, on one store:

    PROBE_N=1000 pytest tests/store/perf_write_probe.py -s -p no:randomly -k sqlite

It posts PROBE_N two-entry postings through the Flask test client on a fresh database
(after 50 to warm up) and prints postings per second, wall and CPU ms per posting, and
the driver's share: the time inside the DBAPI cursor's execute (cursor events, as
tests/store/test_write_path.py counts statements) and inside the driver's commit. With
PROBE_PROFILE=<file> it also writes a cProfile of the timed postings to <file>; with
PROBE_STATEMENTS=1 it also prints the cursor's execute time per posting for each
statement (by its text's start).
"""

from __future__ import annotations

import cProfile
import os
import time

from sqlalchemy import event

from app.extensions import db


def _posting(bank, food, cents):
    return {
        "occurred_on": "2026-03-01",
        "description": "groceries",
        "entries": [
            {"account_id": food, "amount_cents": cents},
            {"account_id": bank, "amount_cents": -cents},
        ],
    }


def test_write_probe(app, api, make_account, dialect):
    n = int(os.environ.get("PROBE_N", "1000"))
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    for i in range(50):
        assert api.post("/transactions", json=_posting(bank, food, i + 1)).status_code == 201
    with app.app_context():
        engine = db.engine
    inside = {"execute": 0.0, "statements": 0, "commit": 0.0}
    started: list[float] = []

    def before(*_args):
        started.append(time.perf_counter())

    per_statement: dict[str, list] = {}

    def after(_conn, _cursor, statement, *_args):
        spent = time.perf_counter() - started.pop()
        inside["execute"] += spent
        inside["statements"] += 1
        tally = per_statement.setdefault(" ".join(statement.split())[:90], [0, 0.0])
        tally[0] += 1
        tally[1] += spent

    real_commit = engine.dialect.do_commit

    def timed_commit(dbapi_connection):
        t = time.perf_counter()
        try:
            real_commit(dbapi_connection)
        finally:
            inside["commit"] += time.perf_counter() - t

    event.listen(engine, "before_cursor_execute", before)
    event.listen(engine, "after_cursor_execute", after)
    engine.dialect.do_commit = timed_commit  # type: ignore[method-assign]
    profile = cProfile.Profile() if os.environ.get("PROBE_PROFILE") else None
    try:
        if profile:
            profile.enable()
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(n):
            assert api.post("/transactions", json=_posting(bank, food, i + 1)).status_code == 201
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if profile:
            profile.disable()
            profile.dump_stats(os.environ["PROBE_PROFILE"])
    finally:
        engine.dialect.do_commit = real_commit  # type: ignore[method-assign]
        event.remove(engine, "before_cursor_execute", before)
        event.remove(engine, "after_cursor_execute", after)
    ms = 1000 / n
    print(
        f"\nprobe {dialect}: {n / wall:.0f}/s; per posting: wall {wall * ms:.3f} ms,"
        f" CPU {cpu * ms:.3f} ms, statements {inside['statements'] / n:.1f}"
        f" (cursor execute {inside['execute'] * ms:.3f} ms), commit {inside['commit'] * ms:.3f} ms"
    )
    if os.environ.get("PROBE_STATEMENTS"):
        for text, (count, spent) in sorted(per_statement.items(), key=lambda kv: -kv[1][1]):
            print(f"  {count:6d}x {spent * ms * 1000:7.1f} us per posting  {text}")
