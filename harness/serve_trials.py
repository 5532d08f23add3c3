"""Stopping `serve` at one moment of its start-up, judged: the trials of the long run
(`python -m bench.serve_signals`, which spreads them over start-up and counts them) and
of the suite (tests/web/test_web_serve.py).

`Trials(folder)` starts `ledger-service serve` (the API and the web app, on a new
SQLite database per trial, so the migrations run); `calibrate()` times a start to the
web app answering; `run(sig, delay, sigint_ignored)` sends the signal after the delay
and judges how serve ended (bench/serve_signals.py's docstring says when a trial
passes).
"""

from __future__ import annotations

import signal
import socket
import sqlite3
import subprocess
import time
from pathlib import Path

from harness.server import ROOT, Service, free_port

BEGUN = "ledger-service API on"  # serve's first line: migrated, about to listen
ABORTED = "Aborted!"  # click's line when KeyboardInterrupt ends a command (exit 1)


def newest_revision() -> str:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(ROOT / "migrations"))
    return ScriptDirectory.from_config(config).get_current_head()


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _schema_state(path: Path, head: str) -> str:
    """'untouched', 'newest', or what is wrong."""
    if not path.exists():
        return "untouched"
    conn = sqlite3.connect(path)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "alembic_version" not in tables:
            return "untouched" if not tables else f"tables without a revision: {sorted(tables)}"
        versions = [r[0] for r in conn.execute("SELECT version_num FROM alembic_version")]
    finally:
        conn.close()
    if versions == [head]:
        return "newest"
    if not versions and tables == {"alembic_version"}:
        return "untouched"
    return f"revision {versions} (newest is {head})"


class Trials:
    """Starts serve in folder, one new database per trial."""

    def __init__(self, folder: Path, deadline: float = 15.0):
        self.folder = folder
        self.deadline = deadline
        self.head = newest_revision()
        self.count = 0

    def _service(self) -> tuple[Service, Path, int, int]:
        self.count += 1
        database = self.folder / f"serve-{self.count}.db"
        api, web = free_port(), free_port()
        service = Service(
            f"sqlite:///{database}",
            self.folder / f"instance-{self.count}",
            port=api,
            WEB_BIND_ADDR=f"127.0.0.1:{web}",
            API_ORIGIN=f"http://localhost:{api}",
            WEB_ORIGIN=f"http://localhost:{web}",
        )
        return service, database, api, web

    def calibrate(self) -> float:
        """Seconds from spawning serve to its web app answering."""
        service, _, _, web = self._service()
        began = time.monotonic()
        service.launch()
        try:
            service.wait_for(f"http://127.0.0.1:{web}/signin", timeout=120)
            return time.monotonic() - began
        finally:
            service.stop()

    def run(self, sig: signal.Signals, delay: float, sigint_ignored: bool = False) -> dict:
        service, database, api, web = self._service()
        service.launch(sigint_ignored=sigint_ignored)
        if sigint_ignored:  # a signal before serve has begun is ignored by the kernel
            _wait_for_line(service, BEGUN, 120)
        time.sleep(delay)
        sent_after = service.log_text()
        service.proc.send_signal(sig)
        sent = time.monotonic()
        try:
            code = service.proc.wait(timeout=self.deadline)
            took = time.monotonic() - sent
        except subprocess.TimeoutExpired:
            service.proc.kill()
            service.proc.wait()
            code, took = None, None
        output = service.log_text()
        service.stop()
        result = {
            "signal": sig.name,
            "sigint_ignored": sigint_ignored,
            "delay": round(delay, 3),
            "exit": code,
            "seconds": None if took is None else round(took, 3),
            "began": BEGUN in output,
        }
        result["outcome"], result["problem"] = self._judge(
            sig, code, output, sent_after, api, web, database
        )
        return result

    def _judge(self, sig, code, output, sent_after, api, web, database):
        problems = []
        if code is None:
            problems.append(f"did not stop within {self.deadline} s")
        listening = [port for port in (api, web) if _listening(port)]
        if listening:
            problems.append(f"still listening on {listening}")
        schema = _schema_state(database, self.head)
        if schema not in ("untouched", "newest"):
            problems.append(f"schema left half-migrated: {schema}")
        if code == 0 and f"stopped ({sig.name}" in output:
            outcome = "stopped, before serving" if "before serving" in output else "stopped"
        elif (
            code is not None
            and not sent_after
            and BEGUN not in output
            and _default_end(sig, code, output)
        ):
            outcome = "ended by the signal's default, before serve began"
        else:
            outcome = "failed"
            if code is not None:
                problems.append(f"exit status {code}")
        if problems:
            outcome = "failed"
            problems.append("output: " + output[-600:])
        return outcome, "; ".join(problems) or None


def _default_end(sig: signal.Signals, code: int, output: str) -> bool:
    """The signal's own ending: SIGTERM kills; SIGINT raises KeyboardInterrupt (130 or
    killed by it; exit 1 is click's "Aborted!", so only with that line and without a
    traceback: exit 1 with one is a crash, and exit 1 with nothing printed is an
    ending nobody explained, whatever the signal)."""
    if sig == signal.SIGTERM:
        return code == -signal.SIGTERM
    if code == 1:
        return ABORTED in output and "Traceback" not in output
    return code in (130, -signal.SIGINT)


def _wait_for_line(service: Service, line: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while line not in service.log_text():
        if service.proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("serve did not begin: " + service.log_text()[-2000:])
        time.sleep(0.005)
