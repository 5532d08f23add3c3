"""`ledger-service serve` in a subprocess on 127.0.0.1 and a free port: the one
start / wait for /health / stop helper for the benchmarks and the tests.

bench/ (python -m bench, bench.load, bench.scaling) and tests/ (test_serve,
test_crash, test_serve_workers, test_web_serve, test_nginx, ...) both use Service,
free_port, http and cli from here; throwaway databases come from harness/databases.py.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_EMAIL = "bench@example.com"
# The password of the throwaway users the tests and Service.user_with_token create.
PASSWORD = "correct horse battery staple"
# `ledger-service` in its module form, run from ROOT: the checkout's own app package,
# whether or not (and wherever) the console script is installed.
LEDGER_SERVICE = [sys.executable, "-c", "from app.cli import cli; cli()"]


def _env(url: str, **extra) -> dict:
    """This process's environment with DATABASE_URL=url, the web app off, and extra;
    an extra value of None removes that variable."""
    env = dict(os.environ)
    env.update(DATABASE_URL=url, WEB_BIND_ADDR="off")
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = str(value)
    return env


def _run(args, env: dict, stdin: str | None, check: bool, timeout: float | None, root=ROOT):
    return subprocess.run(
        LEDGER_SERVICE + list(args),
        cwd=root,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        check=check,
        timeout=timeout,
    )


def cli(url: str, *args: str, stdin: str | None = None, check: bool = True, **env):
    """Run `ledger-service ARGS` against url; env: more settings (API_ORIGIN, ...)."""
    return _run(args, _env(url, **env), stdin, check, None)


# Where free_port looks: below the kernel's ephemeral range, which it hands out as the
# local port of every outgoing connection (a PostgreSQL connection, Chromium's requests).
# A port taken from that range with bind(0) and released can be given to such a
# connection before the server binds it ("Address already in use"); one below it cannot.
_LOWEST_PORT = 20000


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 49152, 65535  # IANA's dynamic range, the default elsewhere


def free_port() -> int:
    """A loopback TCP port nothing listens on, outside the ephemeral range when there is room."""
    low, _ = _ephemeral_range()
    candidates = random.sample(range(_LOWEST_PORT, low), min(200, max(0, low - _LOWEST_PORT)))
    for port in candidates:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:  # no room below the range: let the kernel choose
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, token=None, timeout=20):
    """(status, parsed JSON or text). Never raises for HTTP error statuses."""
    data = None
    headers = {}
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, raw = response.status, response.read()
            ctype = response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as err:
        status, raw, ctype = err.code, err.read(), err.headers.get("Content-Type", "")
        err.close()
    if "json" in ctype and raw:
        return status, json.loads(raw)
    return status, raw.decode()


class Service:
    """`ledger-service serve` (args: more arguments) in a subprocess.

    Nothing runs until start() (or launch(), which does not wait). Its settings:
    DATABASE_URL=url, BIND_ADDR on 127.0.0.1 and port (default: a free one),
    API_ORIGIN its own origin (what a client connects to: mint tokens with cli() or
    user_with_token(), which use the same settings), WEB_BIND_ADDR=off (the web app
    would otherwise take WEB_ORIGIN's default port), LEDGER_INSTANCE_PATH and WORKERS
    when given, then env (a value of None removes that variable). self.env can be
    edited before starting. Its standard output and error go to a temporary file
    (a pipe nobody reads would fill up and stall a service that logs a lot):
    log_text() reads it, errors_logged() counts the unhandled errors in it.
    """

    def __init__(
        self,
        url: str,
        instance_path=None,
        *,
        port: int | None = None,
        workers: int | None = None,
        args=(),
        root=ROOT,
        **env,
    ):
        self.root = root  # the checkout whose app package is served (bench.compare)
        self.port = port or free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.args = list(args)
        settings = {"BIND_ADDR": f"127.0.0.1:{self.port}", "API_ORIGIN": self.origin}
        if instance_path is not None:
            settings["LEDGER_INSTANCE_PATH"] = str(instance_path)
        if workers is not None:
            settings["WORKERS"] = str(workers)
        self.env = _env(url, **{**settings, **env})
        self.proc: subprocess.Popen | None = None
        self.log = None
        self._logged = ""  # what earlier runs (before a stop()) wrote
        self._sampler = None

    def cli(self, *args: str, stdin: str | None = None) -> str:
        """`ledger-service ARGS` with this service's settings; its output, stripped."""
        result = _run(args, self.env, stdin, False, 120, self.root)
        if result.returncode != 0:
            raise RuntimeError(
                f"ledger-service {' '.join(args)} exited {result.returncode}: " + result.stderr
            )
        return result.stdout.strip()

    def user_with_token(self, email: str = "alice@example.com", password: str = PASSWORD) -> str:
        self.cli("user", "add", email, "--password", "-", stdin=password + "\n")
        return self.cli("mint-token", email)

    def launch(self, sigint_ignored: bool | None = None) -> Service:
        """Start the process and return at once (see start()). sigint_ignored: True,
        it starts with SIGINT ignored (as a shell starts a background job); False,
        with SIGINT's default; None, as this process has it."""
        if self.log is None:
            self.log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - closed by stop()
        self.proc = subprocess.Popen(
            preexec_fn=None if sigint_ignored is None else _sigint(sigint_ignored),
            args=LEDGER_SERVICE + ["serve", *self.args],
            cwd=self.root,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        return self

    def wait_for(self, url: str, timeout: float = 60):
        """(status, headers, text) of the first 2xx answer to GET url; fails if the
        process ends first or nothing answers within timeout seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"serve exited ({self.proc.returncode}) before {url} "
                    "answered: " + self.log_text()[-2000:]
                )
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    return response.status, response.headers, response.read().decode()
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"{url} did not answer within {timeout} s: " + self.log_text()[-2000:])

    def start(self, timeout: float = 60, sample_memory: bool = False) -> Service:
        """launch(), then wait until /health answers (the process is stopped if it
        does not). sample_memory: follow its PSS for peak_pss_kib()."""
        self.launch()
        try:
            self.wait_for(self.origin + "/health", timeout)
        except RuntimeError:
            self.stop()
            raise
        if sample_memory:
            self._sampler = _PssSampler(self.proc.pid)
            self._sampler.start()
        return self

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

    def reset_peak_memory(self) -> None:
        """Start VmHWM again from the resident set now (Linux: `5` into clear_refs), in
        every process of the service, so the next peak_memory_kib() is one step's peak."""
        for pid in [self.proc.pid, *child_pids(self.proc.pid)]:
            try:
                Path(f"/proc/{pid}/clear_refs").write_text("5")
            except OSError:
                continue

    def peak_pss_kib(self) -> int | None:
        """The highest sum of PSS (proportional set size: shared pages split between
        the processes sharing them) over the service's processes, sampled every
        0.1 s since it answered (start(sample_memory=True)): its real memory use,
        workers or not."""
        return self._sampler.peak if self._sampler else None

    def log_text(self) -> str:
        """Everything the service wrote to standard output and error so far."""
        if self.log is None:
            return self._logged
        self.log.seek(0)
        return self._logged + self.log.read()

    def errors_logged(self) -> tuple[int, str]:
        """How many unhandled errors the service logged, and the first one's traceback."""
        text = self.log_text()
        first = text.find("unhandled error")
        return text.count("unhandled error"), text[first : first + 3000] if first >= 0 else ""

    def kill(self) -> None:
        """SIGKILL: no shutdown handlers, no flushing: a crash."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(
        self, sig: signal.Signals = signal.SIGTERM, timeout: float = 15, must_stop: bool = False
    ) -> int | None:
        """Send sig (if it still runs) and wait up to timeout seconds, then SIGKILL;
        the exit status. must_stop: a SIGKILL needed is a failure (RuntimeError)."""
        if self._sampler:  # its peak stays readable
            self._sampler.done.set()
            self._sampler.join()
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                if must_stop:
                    self._close_log()
                    raise RuntimeError(
                        f"serve did not stop on {sig.name}: " + self.log_text()[-2000:]
                    ) from None
        self._close_log()
        return self.proc.returncode

    def _close_log(self) -> None:
        if self.log is not None:
            self._logged = self.log_text()
            self.log.close()
            self.log = None

    def __enter__(self) -> Service:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _sigint(ignored: bool):
    disposition = signal.SIG_IGN if ignored else signal.SIG_DFL
    return lambda: signal.signal(signal.SIGINT, disposition)


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
