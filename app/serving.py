"""The process supervisor of `ledger-service serve`: sockets, workers, signals.

Run the API and the web app from one process, or from N forked workers (--workers).
Both waitress servers share one socket map, so a single event loop in the main
thread serves both and Ctrl-C or SIGTERM stops both together: the loop ends,
then each server's worker threads are shut down.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
import time
from urllib.parse import urlsplit

from .config import parse_host_port

log = logging.getLogger(__name__)

DEFAULT_PORTS = {"http": 80, "https": 443}


def web_bind_addr(config, no_web: bool = False) -> tuple[str, int] | None:
    """Where the web app listens, or None when it is switched off.

    WEB_BIND_ADDR `off` (any case) or `serve --no-web` → None; unset → all
    interfaces on WEB_ORIGIN's port (CONTRACT); otherwise `host:port`.
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


def _stop_on_sigterm() -> None:
    def handler(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, handler)


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
) -> None:
    """Serve each (wsgi_app, host, port) until interrupted; all stop together.

    workers > 1: the listening sockets are made here, then that many processes are
    forked, each serving every socket with its own threads (the kernel hands each
    new connection to one of them). This process only supervises: SIGTERM or Ctrl-C
    stops every worker; a worker that dies stops the rest, and serve exits 1 so
    that the supervisor (systemd, a container runtime) restarts the service.
    before_fork() runs first (close database connections a child must not share).
    """
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
    if workers == 1:
        _serve_sockets(apps, sockets, threads)
        return
    announce(f"{workers} worker processes, {threads} threads each")
    children = []
    supervisor = os.getpid()
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # a worker
            code = 0
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the supervisor stops us
                _end_with(supervisor)
                _serve_sockets(apps, sockets, threads)
            except BaseException:  # noqa: BLE001 - reported, then this worker ends
                log.exception("worker %s failed", os.getpid())
                code = 1
            finally:
                os._exit(code)
        children.append(pid)
    sys.exit(_supervise(children))


def _end_with(supervisor: int) -> None:
    """A worker stops itself (as on SIGTERM) once its supervisor is gone, even if the
    supervisor was killed outright and could not stop it."""
    import threading

    def watch() -> None:
        while os.getppid() == supervisor:
            time.sleep(1)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="supervisor-watch", daemon=True).start()


def _supervise(children: list[int]) -> int:
    """Wait for the workers; stop them all on SIGTERM / Ctrl-C or when one ends."""
    stopping = False

    def stop(signum=None, frame=None):
        nonlocal stopping
        stopping = True
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    code = 0
    alive = set(children)
    while alive:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        alive.discard(pid)
        if not stopping:
            log.error("worker %s ended (%s); stopping the others", pid, _describe(status))
            code = 1
            stop()
    return code


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit status {os.WEXITSTATUS(status)}"


def _serve_sockets(apps, sockets, threads: int) -> None:
    """One process serving every (app, socket) pair until SIGTERM or Ctrl-C."""
    from waitress import wasyncore
    from waitress.server import create_server

    shared_map: dict = {}
    servers = [
        create_server(app, map=shared_map, sockets=group, threads=threads, ident="ledger-service")
        for (app, _host, _port), group in zip(apps, sockets, strict=True)
    ]
    _stop_on_sigterm()
    first = servers[0]
    try:
        wasyncore.loop(
            timeout=first.adj.asyncore_loop_timeout,
            map=shared_map,
            use_poll=first.adj.asyncore_use_poll,
        )
    except (SystemExit, KeyboardInterrupt):
        pass
    finally:
        for server in servers:
            server.task_dispatcher.shutdown()
        wasyncore.close_all(shared_map)
