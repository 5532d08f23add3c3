"""WSGI apps under waitress in a background thread of this process (tests and bench).

The one in-process server: `InProcessServer(app)` listens on a free loopback port (or
on the given ports, one per app; several apps share one socket map and one loop
thread, as `serve` runs the API and the web app). Used as a context manager, or with
`start()` and `stop()`:

    with InProcessServer(app) as server:
        http.client.HTTPConnection("127.0.0.1", server.port).request("GET", "/health")

`start()` returns once the loop is polling and every port accepts a connection;
`stop()` ends the loop, closes every socket (listeners, kept-alive channels, the
trigger), shuts down the worker threads and joins the loop thread. The real `serve`
command in a subprocess is harness/server.py's `Service`.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from waitress.task import ThreadedTaskDispatcher

HOST = "127.0.0.1"


class InProcessServer:
    """waitress serving `apps` in one thread; `ports` (one per app) default to free ones.

    `port`, `origin` and `base_url` are the first app's; `ports` and `origins` all of them.
    """

    def __init__(
        self,
        *apps: Any,
        ports: list[int] | None = None,
        host: str = HOST,
        threads: int = 4,
        ident: str = "ledger-service-test",
        adjust: dict[str, Any] | None = None,
    ) -> None:
        from waitress.server import create_server
        from waitress.task import ThreadedTaskDispatcher

        from app.cli import limits

        if not apps:
            raise ValueError("InProcessServer needs at least one app")
        wanted = list(ports) if ports is not None else [0] * len(apps)
        if len(wanted) != len(apps):
            raise ValueError("one port per app")
        self.host = host
        self.map: dict[int, Any] = {}
        # The limits `serve` applies (app/cli/limits.py), from the first app's config
        # (a plain WSGI app: the defaults); `adjust` overrides any of waitress's settings.
        settings = {**limits.settings(getattr(apps[0], "config", {})), **(adjust or {})}
        self.servers: list[Any] = []
        # Each app's workers, started here rather than inside create_server, so that a
        # server whose port is taken has its threads stopped too.
        self.dispatchers: list[ThreadedTaskDispatcher] = []
        try:
            for app, port in zip(apps, wanted, strict=True):
                dispatcher = ThreadedTaskDispatcher()
                self.dispatchers.append(dispatcher)
                dispatcher.set_thread_count(threads)
                self.servers.append(
                    create_server(
                        app,
                        map=self.map,
                        _dispatcher=dispatcher,
                        host=host,
                        port=port,
                        threads=threads,
                        ident=ident,
                        **settings,
                    )
                )
        except BaseException:
            # A port already taken: close what was opened before it (listeners, the
            # trigger, the worker threads), or they are left to the garbage collector.
            self._close()
            raise
        limits.guard(self.map)
        self.ports = [server.effective_port for server in self.servers]
        self.origins = [f"http://{host}:{port}" for port in self.ports]
        self.port = self.ports[0]
        self.origin = self.base_url = self.origins[0]
        self._stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="waitress-in-process", daemon=True)

    def _loop(self) -> None:
        from waitress import wasyncore

        while not self._stopping.is_set():
            wasyncore.loop(timeout=0.05, map=self.map, use_poll=True, count=1)

    def start(self, timeout: float = 10.0) -> InProcessServer:
        """Start the loop thread; return once it polls and every port accepts."""
        polling = threading.Event()
        self.thread.start()
        self.servers[0].trigger.pull_trigger(polling.set)  # runs inside the loop
        if not polling.wait(timeout):
            self.stop()
            raise RuntimeError("the in-process server's loop did not start")
        deadline = time.monotonic() + timeout
        for port in self.ports:
            while True:
                try:
                    socket.create_connection((self.host, port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        self.stop()
                        raise
                    time.sleep(0.02)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """End the loop, join its thread, stop the workers and close every socket."""
        self._stopping.set()
        if self.thread.is_alive():
            self.servers[0].trigger.pull_trigger()  # wake the loop now
            self.thread.join(timeout=timeout)
        self._close()
        assert not self.thread.is_alive(), "the in-process server did not stop"

    def _close(self) -> None:
        from app.cli.serving import close_sockets

        for dispatcher in self.dispatchers:
            dispatcher.shutdown(timeout=5)
        close_sockets(self.map)  # and the answers not sent yet, as `serve` does

    def __enter__(self) -> InProcessServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
