"""Serve's tick (app/cli/serving.py Ticker, app/cli/serve.py post_due): run when serving
starts and then every interval until the stop, a failing tick logged and tried again;
the tick posts what schedules in mode `post` have due (docs/schedules.md)."""

from __future__ import annotations

import threading
import time
from datetime import date

from sqlalchemy import select

from app.cli.serve import post_due
from app.cli.serving import Ticker
from app.extensions import db
from app.models import Transaction


def _wait_for(condition, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def test_ticks_at_start_then_every_interval_until_stopped():
    ticks: list[float] = []
    started = time.monotonic()
    ticker = Ticker(lambda: ticks.append(time.monotonic()), interval=0.05).start()
    assert _wait_for(lambda: len(ticks) >= 3)
    ticker.stop()
    assert ticks[0] - started < 1.0  # the first at start, not after an interval
    assert all(b - a >= 0.04 for a, b in zip(ticks, ticks[1:], strict=False))
    count = len(ticks)
    time.sleep(0.15)
    assert len(ticks) == count  # none after the stop


def test_a_failing_tick_is_logged_and_the_next_runs(caplog):
    calls = threading.Semaphore(0)
    runs: list[int] = []

    def tick():
        runs.append(1)
        calls.release()
        if len(runs) == 1:
            raise RuntimeError("database away")

    ticker = Ticker(tick, interval=0.01).start()
    assert calls.acquire(timeout=5) and calls.acquire(timeout=5)
    ticker.stop()
    assert "periodic task failed" in caplog.text


def test_post_due_posts_what_is_due(app, api, make_account, clock):
    bank, dues = make_account("Bank", "asset"), make_account("Dues", "income")
    body = {
        "name": "Dues",
        "account_id": bank,
        "counter_account_id": dues,
        "amount_cents": 2500,
        "rrule": "FREQ=MONTHLY;BYMONTHDAY=1",
        "starts_on": "2026-12-01",
        "mode": "post",
    }
    assert api.post("/schedules", json=body).status_code == 201
    clock.advance(days=11)  # 2026-12-02
    post_due(app)
    post_due(app)
    with app.app_context():
        days = db.session.execute(select(Transaction.occurred_on)).scalars().all()
        db.session.rollback()
    assert days == [date(2026, 12, 1)]
