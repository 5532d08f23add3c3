"""The real service under waitress, in a subprocess on 127.0.0.1 and a free port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_EMAIL = "bench@example.com"


def _env(url: str, **extra) -> dict:
    env = dict(os.environ)
    env.update(DATABASE_URL=url, WEB_BIND_ADDR="off", **extra)
    return env


def cli(url: str, *args: str, stdin: str | None = None, check: bool = True, **env):
    """Run `ledger-service ARGS` (the console script's module form) against url;
    env: more settings (API_ORIGIN, ...) for it."""
    return subprocess.run(
        [sys.executable, "-c", "from app.cli import cli; cli()", *args],
        cwd=ROOT,
        env=_env(url, **env),
        input=stdin,
        capture_output=True,
        text=True,
        check=check,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    """`ledger-service serve` in a subprocess; stop() ends it (and only it).

    Its standard error goes to a temporary file (a pipe nobody reads would fill up
    and stall a service that logs a lot); errors_logged() reads it. env: more
    settings for it (API_ORIGIN, LEDGER_INSTANCE_PATH, ...); port: the one to use
    (default: a free one).
    """

    def __init__(self, url: str, workers: int = 1, port: int | None = None, **env):
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.workers = workers
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from app.cli import cli; cli()", "serve"],
            cwd=ROOT,
            env=_env(url, BIND_ADDR=f"127.0.0.1:{self.port}", WORKERS=str(workers), **env),
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            text=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("the service exited: " + self._log_text()[-2000:])
            try:
                with urllib.request.urlopen(self.base + "/health", timeout=1) as r:
                    if r.status == 200:
                        self._sampler = _PssSampler(self.proc.pid)
                        self._sampler.start()
                        return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("the service did not answer /health within 60 s")

    def peak_memory_kib(self) -> int | None:
        """Peak resident set (VmHWM, from /proc) of the service: with workers, the sum
        over the supervising process and every worker (pages they share are counted
        once per process, so the sum errs high)."""
        total = None
        for pid in [self.proc.pid, *child_pids(self.proc.pid)]:
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        total = (total or 0) + int(line.split()[1])
            except OSError:
                continue
        return total

    def peak_pss_kib(self) -> int | None:
        """The highest sum of PSS (proportional set size: shared pages split between
        the processes sharing them) over the service's processes, sampled every
        0.1 s since it answered: its real memory use, workers or not."""
        sampler = getattr(self, "_sampler", None)
        return sampler.peak if sampler else None

    def _log_text(self) -> str:
        self.log.seek(0)
        return self.log.read()

    def errors_logged(self) -> tuple[int, str]:
        """How many unhandled errors the service logged, and the first one's traceback."""
        text = self._log_text()
        first = text.find("unhandled error")
        return text.count("unhandled error"), text[first:first + 3000] if first >= 0 else ""

    def stop(self) -> None:
        sampler = getattr(self, "_sampler", None)
        if sampler:
            sampler.done.set()
            sampler.join()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def child_pids(pid: int) -> list[int]:
    """Live child processes of pid, from /proc (Linux; elsewhere none are found)."""
    found = []
    proc = Path("/proc")
    if not proc.exists():
        return found
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _pss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class _PssSampler(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak: int | None = None
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            values = [_pss_kib(pid) for pid in [self.pid, *child_pids(self.pid)]]
            known = [v for v in values if v is not None]
            if known:
                self.peak = max(self.peak or 0, sum(known))
            self.done.wait(0.1)
