"""The real service under waitress, in a subprocess on 127.0.0.1 and a free port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_EMAIL = "bench@example.com"


def _env(url: str, **extra) -> dict:
    env = dict(os.environ)
    env.update(DATABASE_URL=url, WEB_BIND_ADDR="off", **extra)
    return env


def cli(url: str, *args: str, stdin: str | None = None, check: bool = True):
    """Run `ledger-service ARGS` (the console script's module form) against url."""
    return subprocess.run(
        [sys.executable, "-c", "from app.cli import cli; cli()", *args],
        cwd=ROOT,
        env=_env(url),
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
    """`ledger-service serve` in a subprocess; stop() ends it (and only it)."""

    def __init__(self, url: str):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from app.cli import cli; cli()", "serve"],
            cwd=ROOT,
            env=_env(url, BIND_ADDR=f"127.0.0.1:{self.port}"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("the service exited: " + self.proc.stderr.read()[-2000:])
            try:
                with urllib.request.urlopen(self.base + "/health", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("the service did not answer /health within 60 s")

    def peak_memory_kib(self) -> int | None:
        """VmHWM (peak resident set) of the service process, from /proc."""
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        except OSError:
            return None
        return None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
