"""Serve's posting of due occurrences (schedule_posting.post_due, as app/cli/serve.py's
tick runs it: one unit under write intent) in real separate processes over the test
database, for tests/services/ledger/test_schedule_posting_processes.py (a helper module:
tests/README.md). Each process builds its own app and connections (spawned, not
forked), waits at the barrier, posts, and reports how many it posted, or is killed by
SIGKILL right after its `crash_after`-th posting returned (posted, not yet marked nor
committed): a crash between posting and marking."""

from __future__ import annotations

import multiprocessing
import os
import signal
from datetime import date

SPAWN = multiprocessing.get_context("spawn")


def post_due(url: str, day: str, barrier, results, crash_after: int | None = None) -> None:
    from app import create_app, store
    from app.extensions import db
    from app.services.ledger import schedule_posting

    app = create_app({"DATABASE_URL": url, "TESTING": True})
    if crash_after is not None:
        posting = schedule_posting.post_occurrence
        made = []

        def post_then_crash(*args, **kwargs):
            tx_id = posting(*args, **kwargs)
            made.append(tx_id)
            if len(made) >= crash_after:
                os.kill(os.getpid(), signal.SIGKILL)  # before the mark and the commit
            return tx_id

        schedule_posting.post_occurrence = post_then_crash  # type: ignore[assignment]
    with app.app_context(), store.writing():
        db.session.execute(db.text("SELECT 1"))  # connected before the start
        db.session.rollback()
        if barrier is not None:
            barrier.wait(60)
        posted = store.run_unit(schedule_posting.post_due, date.fromisoformat(day))
        db.session.remove()
        db.engine.dispose()
    results.put(posted)


def run(url: str, day: str, count: int = 1, crash_after: int | None = None) -> list:
    """Start `count` processes posting what is due on `day` at once; each one's exit
    code and what it posted (None for one killed), in start order."""
    barrier = SPAWN.Barrier(count) if count > 1 else None
    results = SPAWN.Queue()
    processes = [
        SPAWN.Process(target=post_due, args=(url, day, barrier, results, crash_after))
        for _ in range(count)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(120)
    codes = [process.exitcode for process in processes]
    posted = [results.get(timeout=5) for code in codes if code == 0]
    return [codes, posted]


def post_here(app, day: str) -> int:
    """post_due in this process, as serve's tick runs it (a unit of its own)."""
    from app import store
    from app.extensions import db
    from app.services.ledger import schedule_posting

    with app.app_context(), store.writing():
        try:
            return store.run_unit(schedule_posting.post_due, date.fromisoformat(day))
        finally:
            db.session.remove()
