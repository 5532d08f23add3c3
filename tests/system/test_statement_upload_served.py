"""Hostile statement files against the served process (docs/statements.md, "Limits: what
any file costs"): an upload of 5 MiB of any content is answered within 2 s of the
server's CPU and 200 MB of memory above the idle server, `/health` keeps answering
meanwhile, and SIGTERM stops the server within its shutdown grace while an upload is
being read. (Before: one 400 KB UTF-16 file held the server for 32 s and SIGTERM went
unanswered; the readers' own costs are measured in tests/services/banking.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from app.cli.serving import STOP_GRACE
from harness import statement_files
from harness.server import Service, child_pids, http
from tests.support import throwaway_database
from tests.testkit import BOUNDARY, multipart

pytestmark = pytest.mark.slow  # a served process (README, Test it)

MIB = 1024 * 1024
TICKS = os.sysconf("SC_CLK_TCK")
# The costliest files at 5 MiB (python -m bench.statements_fuzz), and the UTF-16 file of
# XML declarations the review sent.
HOSTILE = [
    ("utf-16 <?xml declarations", 415),
    ("ofx many tags", 400),
    ("camt attributes", 400),
    ("camt many tags", 400),
    ("mt940 many accounts", 400),
]


def post_statement(origin: str, token: str, account_id: int, data: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"{origin}/accounts/{account_id}/statements",
        data=multipart(data, "statement", "application/octet-stream"),
        method="POST",
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        with err:
            return err.code, json.loads(err.read())


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of the service's processes so far."""
    total = 0
    for each in [pid, *child_pids(pid)]:
        fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


class HealthWatch(threading.Thread):
    """GET /health every 50 ms until stopped: the longest wait for an answer."""

    def __init__(self, origin: str):
        super().__init__(daemon=True)
        self.origin, self.longest, self.failures = origin, 0.0, 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            started = time.monotonic()
            try:
                with urllib.request.urlopen(self.origin + "/health", timeout=10) as answer:
                    answer.read()
            except OSError:
                self.failures += 1
            self.longest = max(self.longest, time.monotonic() - started)
            time.sleep(0.05)

    def __enter__(self) -> HealthWatch:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.join()


@pytest.fixture
def served(tmp_path):
    with (
        throwaway_database("sqlite", tmp_path, "ledger_statement_served_") as url,
        Service(url, tmp_path / "instance", REQUEST_TIMEOUT_SECONDS="120") as service,
    ):
        token = service.user_with_token()
        service.start()
        status, bank = http(
            "POST", service.origin + "/accounts", {"name": "Bank", "kind": "asset"}, token
        )
        assert status == 201
        # Every path warmed up (imports, the multipart parser, a statement stored).
        small = statement_files.statement("camt.053", 50)
        assert post_statement(service.origin, token, bank["id"], small)[0] == 201
        yield service, token, bank["id"]


@pytest.mark.parametrize(("name", "answer"), HOSTILE)
def test_a_5_mib_hostile_upload_costs_at_most_2_s_of_cpu_and_200_mb(served, name, answer):
    service, token, bank = served
    data = statement_files.HOSTILE[name](5 * MIB)
    service.reset_peak_memory()
    before_kib, before_cpu = service.peak_memory_kib(), cpu_seconds(service.proc.pid)
    with HealthWatch(service.origin) as health:
        status, body = post_statement(service.origin, token, bank, data)
    spent = cpu_seconds(service.proc.pid) - before_cpu
    grown = (service.peak_memory_kib() - before_kib) * 1024
    waited = health.longest
    print(f"{name}: {status}, {spent:.2f} s CPU, +{grown / MIB:.0f} MiB, /health {waited:.2f} s")
    assert status == answer, body
    assert status == 201 or set(body) == {"error"}
    assert spent < 2.0
    assert grown < 200 * 1000 * 1000
    assert health.failures == 0 and health.longest < 1.0


@pytest.mark.parametrize("name", ["utf-16 <?xml declarations", "ofx many tags"])
def test_sigterm_stops_the_server_while_an_upload_is_being_read(served, name):
    service, token, bank = served
    data = statement_files.HOSTILE[name](5 * MIB)
    answers: list = []
    sender = threading.Thread(
        target=lambda: answers.append(_quietly(post_statement, service.origin, token, bank, data)),
        daemon=True,
    )
    started_cpu = cpu_seconds(service.proc.pid)
    sender.start()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not answers:
        if cpu_seconds(service.proc.pid) - started_cpu >= 0.2:
            break  # the file arrived and is being read
        time.sleep(0.01)
    service.proc.send_signal(signal.SIGTERM)
    stopped = time.monotonic()
    try:
        service.proc.wait(timeout=STOP_GRACE + 5)
    except subprocess.TimeoutExpired:
        pytest.fail(f"serve still ran {STOP_GRACE + 5} s after SIGTERM")
    assert time.monotonic() - stopped < STOP_GRACE + 1
    sender.join(timeout=30)


def _quietly(call, *args):
    try:
        return call(*args)
    except OSError as exc:  # the server went away mid-answer: allowed
        return exc
