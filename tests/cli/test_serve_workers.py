"""`ledger-service serve --workers N` (or WORKERS=N): N serving processes on one port.

The parent makes the listening socket, forks the workers and supervises them:
SIGTERM stops them all; a worker that dies stops the others and serve exits 1 (for
systemd or a container runtime to restart it). Workers share nothing but the
database, so every rule held in it holds across them; on SQLite their writers queue
on the database's writer lock (app.store.WriterLock) across processes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from harness.server import Service, child_pids, http
from tests.support import console_script

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


def _wait_until(predicate, seconds=15.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def _alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


@pytest.fixture
def workers_service(scratch_database_url, tmp_path):
    if not Path("/proc/self/stat").exists():
        pytest.skip("reads worker processes from /proc (Linux)")
    service = Service(scratch_database_url, tmp_path, WORKERS="2")
    token = service.user_with_token()
    service.start()
    yield service, token, scratch_database_url
    service.stop()


def test_two_workers_serve_one_port_and_lose_no_write(workers_service):
    service, token, url = workers_service
    workers = child_pids(service.proc.pid)
    assert _wait_until(lambda: len(child_pids(service.proc.pid)) == 2), workers
    base = service.origin
    status, bank = http("POST", base + "/accounts", {"name": "Bank", "kind": "asset"}, token)
    assert status == 201
    status, food = http("POST", base + "/accounts", {"name": "Food", "kind": "expense"}, token)
    assert status == 201
    answers: list[int] = []
    lock = threading.Lock()

    def client(k: int) -> None:
        for i in range(15):
            status, _ = http(
                "POST",
                base + "/transactions",
                {
                    "occurred_on": "2026-03-01",
                    "description": f"c{k} #{i}",
                    "entries": [
                        {"account_id": food["id"], "amount_cents": 100 + i},
                        {"account_id": bank["id"], "amount_cents": -(100 + i)},
                    ],
                },
                token,
            )
            with lock:
                answers.append(status)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [201] * 90
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM transactions")).scalar() == 90
            assert (
                conn.execute(text("SELECT coalesce(sum(amount_cents), 0) FROM entries")).scalar()
                == 0
            )
    finally:
        engine.dispose()
    status, balances = http("GET", base + "/reports/balances", token=token)
    assert status == 200
    lines = {line["account"]: line["cents"] for line in balances}
    assert lines["Food"] == 6 * sum(100 + i for i in range(15))


def test_sigterm_stops_every_worker(workers_service):
    service, _token, _url = workers_service
    assert _wait_until(lambda: len(child_pids(service.proc.pid)) == 2)
    workers = child_pids(service.proc.pid)
    service.proc.send_signal(signal.SIGTERM)
    assert service.proc.wait(timeout=20) == 0
    assert _wait_until(lambda: not any(_alive(pid) for pid in workers))


def test_a_dead_worker_stops_the_service(workers_service):
    """A worker killed (out of memory, a crash) takes the service down with exit 1,
    so the supervisor restarts it whole, instead of serving on at half strength."""
    service, _token, _url = workers_service
    assert _wait_until(lambda: len(child_pids(service.proc.pid)) == 2)
    first, second = child_pids(service.proc.pid)
    os.kill(first, signal.SIGKILL)
    assert service.proc.wait(timeout=20) == 1
    assert _wait_until(lambda: not _alive(second))
    assert f"worker {first} ended (signal 9)" in service.log_text()


@pytest.mark.parametrize(
    "setting", [("--workers", "0"), ("--workers", "many"), ("WORKERS", "65"), ("WORKERS", "-1")]
)
def test_a_bad_worker_count_is_refused(scratch_database_url, tmp_path, setting):
    env = dict(
        os.environ,
        DATABASE_URL=scratch_database_url,
        LEDGER_INSTANCE_PATH=str(tmp_path),
        BIND_ADDR="127.0.0.1:0",
        WEB_BIND_ADDR="off",
    )
    args = ["serve"]
    if setting[0] == "WORKERS":
        env["WORKERS"] = setting[1]
    else:
        args += list(setting)
    result = subprocess.run(
        console_script() + args, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert result.stderr.startswith("error: WORKERS must be"), result.stderr
    assert "Traceback" not in result.stderr


def test_workers_end_when_the_supervisor_is_killed(workers_service):
    """SIGKILL gives the supervisor no chance to stop its workers: they notice it is
    gone and stop themselves, so no orphan keeps the port and the database."""
    service, _token, _url = workers_service
    assert _wait_until(lambda: len(child_pids(service.proc.pid)) == 2)
    workers = child_pids(service.proc.pid)
    service.proc.send_signal(signal.SIGKILL)
    service.proc.wait(timeout=10)
    assert _wait_until(lambda: not any(_alive(pid) for pid in workers), seconds=20), workers
