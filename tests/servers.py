"""Real service processes for tests: `ledger-service serve` under waitress, and HTTP helpers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request

from tests.support import console_script, free_port

PASSWORD = "correct horse battery staple"


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
            status, raw, ctype = response.status, response.read(), response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as err:
        status, raw, ctype = err.code, err.read(), err.headers.get("Content-Type", "")
        err.close()
    if "json" in ctype and raw:
        return status, json.loads(raw)
    return status, raw.decode()


class Service:
    """One `ledger-service serve` process on a free loopback port."""

    def __init__(self, database_url, instance_path, port=None, **env):
        self.port = port or free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ)
        self.env.update({
            "DATABASE_URL": database_url,
            "LEDGER_INSTANCE_PATH": str(instance_path),
            "BIND_ADDR": f"127.0.0.1:{self.port}",
            "API_ORIGIN": self.origin,
            # These processes test the API; the web app would otherwise take WEB_ORIGIN's
            # default port 38080 in every one of them (tests/test_web_serve.py covers it).
            "WEB_BIND_ADDR": "off",
        })
        self.env.update(env)
        self.proc = None

    def cli(self, *args, stdin=None):
        result = subprocess.run(console_script() + list(args), env=self.env, input=stdin,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    def user_with_token(self, email="alice@example.com"):
        self.cli("user", "add", email, "--password", "-", stdin=PASSWORD + "\n")
        return self.cli("mint-token", email)

    def start(self, timeout=60):
        self.proc = subprocess.Popen(console_script() + ["serve"], env=self.env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                _, err = self.proc.communicate()
                raise AssertionError(f"serve exited early: {err}")
            try:
                if http("GET", self.origin + "/health", timeout=2) == (200, "ok"):
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        raise AssertionError("serve did not answer in time")

    def kill(self):
        """SIGKILL: no shutdown handlers, no flushing: a crash."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.communicate(timeout=30)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
        elif self.proc:
            self.proc.communicate()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
