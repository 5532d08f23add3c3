"""Crash safety: no acknowledged write is lost, no partial transaction is ever stored.

1. The service is killed with SIGKILL while clients stream balanced postings; after a
   restart every acknowledged transaction is present and complete.
2. PostgreSQL is stopped under a running service: requests fail with the generic
   500 within a bounded time (never hang), and when the database returns the same
   service process recovers by itself (pool pre-ping), without a restart.
   This uses a private PostgreSQL cluster, so the machine's shared server is untouched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from http.client import HTTPException
from pathlib import Path

import pytest

from app.errors import GENERIC_500
from harness.server import Service, http
from tests.support import free_port, repetitions, require_postgres

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)

# LEDGER_CRASH_TRIALS: trials for the long run (python -m bench.reliability crash).
TRIALS = repetitions("LEDGER_CRASH_TRIALS", 3)
ACKED_BEFORE_KILL = 40
POSTERS = 4


def _stream_postings(origin, token, accounts, acked, stop, tag):
    n = 0
    while not stop.is_set():
        n += 1
        cents = 100 + n
        description = f"{tag}-{threading.get_ident()}-{n}"
        try:
            status, body = http(
                "POST",
                origin + "/transactions",
                token=token,
                timeout=10,
                body={
                    "occurred_on": "2026-05-01",
                    "description": description,
                    "entries": [
                        {"account_id": accounts[1], "amount_cents": cents},
                        {"account_id": accounts[0], "amount_cents": -cents},
                    ],
                },
            )
        except (OSError, HTTPException):
            return  # the server is gone: this posting was not acknowledged
        if status == 201:
            acked.append((body["id"], description, cents))


def _create_accounts(origin, token):
    ids = []
    for name, kind in (("Bank", "asset"), ("Food", "expense")):
        status, body = http(
            "POST", origin + "/accounts", token=token, body={"name": name, "kind": kind}
        )
        assert status == 201, body
        ids.append(body["id"])
    return ids


def test_sigkill_mid_stream_loses_no_acknowledged_write(scratch_database_url, tmp_path):
    service = Service(scratch_database_url, tmp_path)
    token = service.user_with_token()
    service.start()
    accounts = _create_accounts(service.origin, token)
    all_acked = []
    try:
        for trial in range(TRIALS):
            acked, stop = [], threading.Event()
            posters = [
                threading.Thread(
                    target=_stream_postings,
                    args=(service.origin, token, accounts, acked, stop, f"t{trial}"),
                )
                for _ in range(POSTERS)
            ]
            for p in posters:
                p.start()
            deadline = time.monotonic() + 60
            while len(acked) < ACKED_BEFORE_KILL and time.monotonic() < deadline:
                time.sleep(0.01)
            service.kill()
            stop.set()
            for p in posters:
                p.join(timeout=30)
            assert len(acked) >= ACKED_BEFORE_KILL
            all_acked.extend(acked)
            service.start()  # restart on the same database

        status, stored = http("GET", service.origin + "/transactions", token=token)
        assert status == 200
        by_id = {tx["id"]: tx for tx in stored}
        for tx_id, description, cents in all_acked:
            tx = by_id.get(tx_id)
            assert tx is not None, f"acknowledged transaction {tx_id} was lost"
            assert tx["description"] == description
            assert [e["amount_cents"] for e in tx["entries"]] == [cents, -cents]
        for tx in stored:  # nothing partial, acknowledged or not
            assert len(tx["entries"]) == 2 and sum(e["amount_cents"] for e in tx["entries"]) == 0
        # At most one in-flight posting per client per trial may have committed unacknowledged.
        assert len(all_acked) <= len(stored) <= len(all_acked) + TRIALS * POSTERS
    finally:
        service.stop()


# --- a private PostgreSQL cluster that this test may stop and start --------------

PG_BIN = (
    Path("/usr/lib/postgresql")
    / (
        sorted(p.name for p in Path("/usr/lib/postgresql").iterdir())[-1]
        if Path("/usr/lib/postgresql").is_dir()
        else "none"
    )
    / "bin"
)


class PrivateCluster:
    def __init__(self, root: Path):
        self.dir = root / "pgdata"
        self.port = free_port()
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _as_postgres(self, *args):
        return subprocess.run(
            ["runuser", "-u", "postgres", "--", *args], capture_output=True, text=True, timeout=120
        )

    def init(self):
        shutil.chown(self.dir.parent, "postgres")
        self.dir.parent.chmod(0o755)
        result = self._as_postgres(
            str(PG_BIN / "initdb"),
            "-D",
            str(self.dir),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
        )
        assert result.returncode == 0, result.stderr
        return self

    def start(self):
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir}"
        result = self._as_postgres(
            str(PG_BIN / "pg_ctl"),
            "-D",
            str(self.dir),
            "-o",
            options,
            "-l",
            str(self.dir / "log"),
            "-w",
            "start",
        )
        assert result.returncode == 0, result.stderr + result.stdout

    def stop(self):
        self._as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.dir), "-m", "fast", "-w", "stop")


@pytest.fixture
def private_cluster():
    reason = None
    if not (PG_BIN / "initdb").exists():
        reason = "PostgreSQL server binaries (initdb, pg_ctl) are not installed"
    elif os.geteuid() != 0 or not shutil.which("runuser"):
        reason = "starting a private PostgreSQL cluster needs root (runuser to the postgres user)"
    if reason:
        if require_postgres():
            pytest.fail(reason)
        pytest.skip(reason)
    # pytest's own tmp folders are private to root; the postgres user needs its own.
    root = Path(tempfile.mkdtemp(prefix="ledger-cluster-"))
    try:
        cluster = PrivateCluster(root).init()
        cluster.start()
        yield cluster
        cluster.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_database_restart_under_a_running_service(private_cluster, tmp_path):
    service = Service(private_cluster.url, tmp_path)
    token = service.user_with_token()
    service.start()
    try:
        accounts = _create_accounts(service.origin, token)
        pid = service.proc.pid

        # A restart between two requests: the pooled connections are all dead, and
        # pool pre-ping replaces them, so the next request simply works.
        private_cluster.stop()
        private_cluster.start()
        for _ in range(3):
            assert http("GET", service.origin + "/accounts", token=token)[0] == 200

        # Down for a while: requests fail fast with the generic 500, never hang.
        private_cluster.stop()
        for method, path, body in (
            ("GET", "/accounts", None),
            (
                "POST",
                "/transactions",
                {
                    "occurred_on": "2026-05-01",
                    "description": "while down",
                    "entries": [
                        {"account_id": accounts[1], "amount_cents": 5},
                        {"account_id": accounts[0], "amount_cents": -5},
                    ],
                },
            ),
        ):
            started = time.monotonic()
            status, answer = http(method, service.origin + path, token=token, body=body, timeout=30)
            assert time.monotonic() - started < 20, "a request hung while the database was down"
            assert (status, answer) == (500, {"error": GENERIC_500})

        private_cluster.start()  # returns once the server accepts connections
        # Pool pre-ping replaces the dead pooled connections: the very first request works.
        for _ in range(3):
            status, _ = http("GET", service.origin + "/accounts", token=token)
            assert status == 200, "the service did not recover after the database came back"
        assert service.proc.pid == pid and service.proc.poll() is None
        status, _ = http(
            "POST",
            service.origin + "/transactions",
            token=token,
            body={
                "occurred_on": "2026-05-02",
                "description": "after the restart",
                "entries": [
                    {"account_id": accounts[1], "amount_cents": 7},
                    {"account_id": accounts[0], "amount_cents": -7},
                ],
            },
        )
        assert status == 201
        _, stored = http("GET", service.origin + "/transactions", token=token)
        assert [tx["description"] for tx in stored] == ["after the restart"]
    finally:
        service.stop()
