"""The process supervisor of `ledger-service serve`: sockets, workers, signals.

Run the API and the web app from one process, or from N forked workers (--workers).
Both waitress servers share one socket map, so a single event loop in the main
thread serves both and Ctrl-C or SIGTERM stops both together: the loop ends,
then each server's worker threads are shut down (within STOP_GRACE seconds).

Stopping (docs/deploy.md, "Stopping"): `serve` catches SIGINT and SIGTERM itself
from its first step (Stop), whatever the disposition it inherited: a shell starts a
background job with SIGINT ignored, and Python then never turns Ctrl-C into
KeyboardInterrupt, which left such a `serve` running on SIGINT (issue 28, item 10).
The handlers raise nothing into the code the main thread happens to run (a
migration, a server's start, a lock, a finalizer that would swallow the exception):
they record the request and wake the loop through signal.set_wakeup_fd, and each
stage checks the request at its next safe point.

Posting by schedules (docs/schedules.md): `serve(..., tick=...)` runs `tick` in a
Ticker thread when serving starts and then every POST_INTERVAL seconds until the stop,
in the one process that does not serve requests itself when there are workers (the
supervisor, started after the fork: no thread is ever forked) or beside the loop
otherwise. A failing tick is logged; the next one tries again.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import math
import os
import select
import signal
import sys
import time
from urllib.parse import urlsplit

from ..config import parse_host_port

log = logging.getLogger(__name__)

DEFAULT_PORTS = {"http": 80, "https": 443}
POST_INTERVAL = 3600.0  # seconds between two runs of serve's tick (schedules' posting)


class Ticker:
    """Run `tick()` once now, then every `interval` seconds, in a daemon thread, until
    stop(); an exception from a tick is logged and the next tick runs as planned."""

    def __init__(self, tick, interval: float = POST_INTERVAL):
        import threading

        self.tick = tick
        self.interval = interval
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="serve-ticker", daemon=True)

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                self.tick()
            except Exception:
                log.exception("serve's periodic task failed; it runs again later")
            self._stopped.wait(self.interval)

    def start(self) -> Ticker:
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stopped.set()
        self._thread.join(timeout)


def web_bind_addr(config, no_web: bool = False) -> tuple[str, int] | None:
    """Where the web app listens, or None when it is switched off.

    WEB_BIND_ADDR `off` (any case) or `serve --no-web` → None; unset → all
    interfaces on WEB_ORIGIN's port (docs/web.md "Serving"); otherwise `host:port`.
    """
    value = config.get("WEB_BIND_ADDR")
    if no_web or (isinstance(value, str) and value.strip().lower() == "off"):
        return None
    if not value:
        origin = urlsplit(config["WEB_ORIGIN"])
        return "0.0.0.0", origin.port or DEFAULT_PORTS.get(origin.scheme, 80)
    return parse_host_port(value.strip())


class ListenError(Exception):
    """An address to serve on could not be bound (in use, not permitted, no such host)."""


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# Seconds a stop waits for requests in progress (a worker thread, a worker process)
# before it gives up on them; the whole stop stays within this, however many servers.
STOP_GRACE = 5.0


class Stop:
    """A request to stop (SIGINT or SIGTERM), caught for as long as the `with` lasts.

    requested: the name of the first stop signal (or the reason given to request()),
    None while serving. The handler only records it, forwards SIGTERM to the worker
    processes in `forward` and lets the kernel's wake-up byte (signal.set_wakeup_fd)
    end whatever wait the main thread is in: wait() or the serving loop's poll.
    The previous handlers and wake-up descriptor come back on exit.
    """

    def __init__(self) -> None:
        self.requested: str | None = None
        self.forward: list[int] = []
        self._read = self._write = -1
        self._previous: dict = {}
        self._previous_wakeup = -1

    def __enter__(self) -> Stop:
        self._previous = {sig: signal.getsignal(sig) for sig in (*STOP_SIGNALS, signal.SIGCHLD)}
        self._previous_wakeup = self._open_wakeup()
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        signal.set_wakeup_fd(self._previous_wakeup)
        self._close_pipe()

    def _open_wakeup(self) -> int:
        """A fresh non-blocking pipe whose write end receives a byte per signal."""
        read, write = os.pipe()
        for fd in (read, write):
            os.set_blocking(fd, False)
            os.set_inheritable(fd, False)
        previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        self._close_pipe()
        self._read, self._write = read, write
        return previous

    def _close_pipe(self) -> None:
        for fd in (self._read, self._write):
            if fd >= 0:
                os.close(fd)
        self._read = self._write = -1

    def _handle(self, signum, frame) -> None:
        self.request(signal.Signals(signum).name)

    def request(self, reason: str) -> None:
        """Stop (the first reason is kept); every worker process is sent SIGTERM."""
        if self.requested is None:
            self.requested = reason
        for pid in self.forward:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    def wait(self, timeout: float) -> None:
        """Sleep until a signal arrives (any with a Python handler) or timeout passes."""
        select.select([self._read], [], [], max(0.0, timeout))
        self.drain()

    def drain(self) -> None:
        try:
            while os.read(self._read, 512):
                pass
        except BlockingIOError:
            pass

    def in_worker(self) -> None:
        """In a forked worker: its own wake-up pipe (the inherited one is shared with
        the supervisor), nothing to forward to, Ctrl-C left to the supervisor."""
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        self.forward = []
        self._open_wakeup()

    def waker(self, socket_map: dict):
        """A dispatcher in the serving loop's map that reads the wake-up bytes."""
        from waitress import wasyncore

        stop = self

        class Waker(wasyncore.file_dispatcher):
            def writable(self) -> bool:
                return False

            def handle_read(self) -> None:
                stop.drain()

        return Waker(self._read, map=socket_map)


MAX_WORKERS = 64


def parse_workers(value) -> int:
    """WORKERS / --workers: how many serving processes (1 to MAX_WORKERS)."""
    try:
        workers = int(str(value).strip())
    except ValueError:
        raise ValueError(
            f"WORKERS must be a whole number from 1 to {MAX_WORKERS}, got {value!r}"
        ) from None
    if not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"WORKERS must be from 1 to {MAX_WORKERS}, got {workers}")
    return workers


def _listen(host: str, port: int) -> list:
    """Listening TCP sockets on host:port (each address it names), made before any
    worker starts."""
    import socket

    from waitress.adjustments import Adjustments

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as err:
        raise ListenError(f"cannot listen on {host}:{port}: {err.strerror or err}") from err
    sockets, seen = [], set()
    try:
        for family, kind, proto, _, address in infos:
            if (family, address) in seen:
                continue
            seen.add((family, address))
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(Adjustments.backlog)
            sock.setblocking(False)
    except OSError as err:
        for sock in sockets:
            sock.close()
        raise ListenError(f"cannot listen on {host}:{port}: {err.strerror or err}") from err
    return sockets


def serve(
    apps: list[tuple[object, str, int]],
    threads: int = 8,
    announce=print,
    workers: int = 1,
    before_fork=None,
    stop: Stop | None = None,
    tick=None,
    tick_interval: float = POST_INTERVAL,
) -> None:
    """Serve each (wsgi_app, host, port) until interrupted; all stop together.

    workers > 1: the listening sockets are made here, then that many processes are
    forked, each serving every socket with its own threads (the kernel hands each
    new connection to one of them). This process only supervises: SIGTERM or Ctrl-C
    stops every worker; a worker that dies stops the rest, and serve exits 1 so
    that the supervisor (systemd, a container runtime) restarts the service.
    before_fork() runs first (close database connections a child must not share).
    stop: the caller's Stop, installed before its own start-up steps (one is made
    here otherwise); a stop requested before the loop starts serves nothing.
    tick: run by a Ticker while serving (at start, then every tick_interval seconds).
    """
    if stop is None:
        with Stop() as own:
            serve(apps, threads, announce, workers, before_fork, own, tick, tick_interval)
        return
    sockets: list[list] = []
    try:
        for _app, host, port in apps:
            sockets.append(_listen(host, port))
    except ListenError:
        for group in sockets:
            for sock in group:
                sock.close()
        raise
    for group in sockets:
        for sock in group:
            host, port = sock.getsockname()[:2]
            announce(f"listening on http://{f'[{host}]' if ':' in host else host}:{port}")
    if workers > 1 and before_fork is not None:
        before_fork()
    # Everything made at start-up (modules, the apps, SQLAlchemy's metadata) lives as
    # long as the process: frozen out of the collector's generations, it is no longer
    # walked by every full collection (~110,000 objects, 25 ms a collection on the
    # development machine; a busy month's listing sets off a few). Workers inherit it
    # frozen (and so shared, copy-on-write).
    gc.collect()
    gc.freeze()
    if stop.requested is None and workers == 1:
        ticker = _start_ticker(tick, tick_interval)
        try:
            _serve_sockets(apps, sockets, threads, stop)
        finally:
            if ticker is not None:
                ticker.stop()
        return
    if stop.requested is None:
        announce(f"{workers} worker processes, {threads} threads each")
    children = _fork_workers(apps, sockets, threads, workers, stop)
    for group in sockets:
        for sock in group:
            sock.close()
    ticker = _start_ticker(tick, tick_interval) if children else None
    try:
        code = _supervise(children, stop)
    finally:
        if ticker is not None:
            ticker.stop()
    if code:
        sys.exit(code)


def _start_ticker(tick, interval: float) -> Ticker | None:
    return None if tick is None else Ticker(tick, interval).start()


def _fork_workers(apps, sockets, threads: int, workers: int, stop: Stop) -> list[int]:
    """Fork the workers (none once a stop is requested). The stop signals are held
    back across each fork, so none arrives before the child has its own handling or
    before the supervisor knows the child's pid to forward it."""
    children: list[int] = []
    supervisor = os.getpid()
    held = {*STOP_SIGNALS, signal.SIGCHLD}
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # wakes Stop.wait
    for _ in range(workers):
        if stop.requested is not None:
            break
        previous_mask = signal.pthread_sigmask(signal.SIG_BLOCK, held)
        pid = os.fork()
        if pid == 0:  # a worker
            code = 0
            try:
                stop.in_worker()
                signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)
                _end_with(supervisor)
                _serve_sockets(apps, sockets, threads, stop)
            except BaseException:  # noqa: BLE001 - reported, then this worker ends
                log.exception("worker %s failed", os.getpid())
                code = 1
            finally:
                os._exit(code)
        children.append(pid)
        stop.forward.append(pid)
        signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)
    return children


def _end_with(supervisor: int) -> None:
    """A worker stops itself (as on SIGTERM) once its supervisor is gone, even if the
    supervisor was killed outright and could not stop it."""
    import threading

    def watch() -> None:
        while os.getppid() == supervisor:
            time.sleep(1)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="supervisor-watch", daemon=True).start()


def _supervise(children: list[int], stop: Stop, grace: float = STOP_GRACE) -> int:
    """Wait for the workers; stop them all on SIGTERM / Ctrl-C or when one ends.

    Once a stop is requested the workers have `grace` seconds to end; any still
    running then is killed, so the stop has a deadline. 0 after a requested stop,
    1 when a worker ended on its own (the others are stopped).
    """
    code = 0
    alive = set(children)
    deadline = math.inf
    while alive:
        for pid, status in _reap():
            alive.discard(pid)
            if stop.requested is None:
                log.error("worker %s ended (%s); stopping the others", pid, _describe(status))
                code = 1
                stop.request("a worker ended")
        if not alive:
            break
        if stop.requested is not None and deadline == math.inf:
            deadline = time.monotonic() + grace
        if time.monotonic() >= deadline:
            log.error("%d worker(s) still running %.0f s after the stop: killed", len(alive), grace)
            for pid in alive:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + grace  # SIGKILL cannot be refused
        stop.wait(min(1.0, deadline - time.monotonic()))
    return code


def _reap() -> list[tuple[int, int]]:
    """(pid, status) of every child that has ended, without waiting."""
    ended: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        ended.append((pid, status))


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit status {os.WEXITSTATUS(status)}"


def _serve_sockets(apps, sockets, threads: int, stop: Stop) -> None:
    """One process serving every (app, socket) pair until a stop is requested."""
    from waitress import wasyncore
    from waitress.server import create_server

    from . import limits

    # One set of limits for every app served (docs/deploy.md, "Limits"), from the API's config.
    adjust = limits.settings(getattr(apps[0][0], "config", {}))
    limits.open_files()
    shared_map: dict = {}
    servers = [
        create_server(
            app, map=shared_map, sockets=group, threads=threads, ident="ledger-service", **adjust
        )
        for (app, _host, _port), group in zip(apps, sockets, strict=True)
    ]
    limits.guard(shared_map)
    stop.waker(shared_map)
    adj = servers[0].adj
    poll = wasyncore.poll2 if adj.asyncore_use_poll and hasattr(select, "poll") else wasyncore.poll
    try:
        while stop.requested is None:
            poll(adj.asyncore_loop_timeout, shared_map)
    finally:
        _shut_down(servers, shared_map)


def _shut_down(servers, shared_map: dict, grace: float = STOP_GRACE) -> None:
    """Stop every server's threads (those in a request get until the shared deadline),
    then close every socket."""
    for server in servers:
        server.task_dispatcher.set_thread_count(0)
    deadline = time.monotonic() + grace
    for server in servers:
        server.task_dispatcher.shutdown(timeout=max(0.0, deadline - time.monotonic()))
    close_sockets(shared_map)


def close_sockets(shared_map: dict) -> None:
    """Close every socket of the map (listeners, connections, the trigger), and with each
    connection the answer it has not sent yet.

    wasyncore.close_all closes a connection's socket only: an answer still waiting in it
    (a file being sent, such as the favicon, when the loop stopped first) stays open
    until the garbage collector finds it, with a ResourceWarning. HTTPChannel.handle_close
    closes those buffers and then the socket.
    """
    from waitress import wasyncore
    from waitress.channel import HTTPChannel

    for channel in list(shared_map.values()):
        if isinstance(channel, HTTPChannel):
            channel.handle_close()
    wasyncore.close_all(shared_map)
