"""Helpers shared by the web app tests (JavaScript units and browser scenarios)."""

import os


def require_browser_tools() -> bool:
    """True where node and Chromium must be present (CI installs them): skip → fail.

    LEDGER_REQUIRE_BROWSER wins when set (0/false/no turns the requirement off);
    otherwise CI or LEDGER_REQUIRE_POSTGRES, the flags `.ci/run` sets, imply it.
    """
    explicit = os.environ.get("LEDGER_REQUIRE_BROWSER")
    if explicit is not None and explicit.strip() != "":
        return explicit.strip().lower() not in ("0", "false", "no")
    flag = os.environ.get("CI") or os.environ.get("LEDGER_REQUIRE_POSTGRES") or ""
    return flag.strip().lower() not in ("", "0", "false", "no")


CHROMIUM = os.environ.get("LEDGER_CHROMIUM", "/usr/bin/chromium")
# BROWSER-TESTING.md: Debian's Chromium driven by Playwright, no browser download.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class ThreadedServers:
    """The API and the web app on waitress in one background thread (shared socket map).

    Same wiring as `serve` (app.serving), but stoppable from the test: the
    loop runs one poll at a time and checks a stop flag in between.
    """

    def __init__(self, apps):
        import threading

        from waitress.server import create_server

        self.map = {}
        self.servers = [
            create_server(
                app, map=self.map, listen=f"{host}:{port}", threads=4, ident="ledger-service-test"
            )
            for app, host, port in apps
        ]
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        from waitress import wasyncore

        while not self.stopping.is_set():
            wasyncore.loop(timeout=0.1, map=self.map, count=1)

    def close(self):
        from waitress import wasyncore

        self.stopping.set()
        self.thread.join(timeout=10)
        for server in self.servers:
            server.task_dispatcher.shutdown()
        wasyncore.close_all(self.map)
