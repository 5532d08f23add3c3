"""Run the API and the web app from one process (`ledger-service serve`).

Both waitress servers share one socket map, so a single event loop in the main
thread serves both and Ctrl-C or SIGTERM stops both together: the loop ends,
then each server's worker threads are shut down.
"""

from __future__ import annotations

import gc
import signal
from urllib.parse import urlsplit

from ..config import parse_host_port

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


def serve(apps: list[tuple[object, str, int]], threads: int = 8, announce=print) -> None:
    """Serve each (wsgi_app, host, port) until interrupted; all stop together."""
    from waitress import wasyncore
    from waitress.server import create_server

    shared_map: dict = {}
    servers = []
    for app, host, port in apps:
        try:
            servers.append(create_server(app, map=shared_map, host=host, port=port,
                                         threads=threads, ident="ledger-service"))
        except OSError as err:
            for server in servers:
                server.task_dispatcher.shutdown()
            wasyncore.close_all(shared_map)
            raise ListenError(f"cannot listen on {host}:{port}: {err.strerror or err}") from err
    for server in servers:
        announce(f"listening on http://{server.effective_host}:{server.effective_port}")
    _stop_on_sigterm()
    # Everything made at start-up (modules, the apps, SQLAlchemy's metadata) lives as
    # long as the process: frozen out of the collector's generations, it is no longer
    # walked by every full collection (~110,000 objects, 25 ms a collection on the
    # development machine; a busy month's listing sets off a few).
    gc.collect()
    gc.freeze()
    first = servers[0]
    try:
        wasyncore.loop(timeout=first.adj.asyncore_loop_timeout, map=shared_map,
                       use_poll=first.adj.asyncore_use_poll)
    except (SystemExit, KeyboardInterrupt):
        pass
    finally:
        for server in servers:
            server.task_dispatcher.shutdown()
        wasyncore.close_all(shared_map)
