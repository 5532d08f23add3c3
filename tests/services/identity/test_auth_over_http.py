"""The whole sign-in over real HTTP: waitress on a free 127.0.0.1 port, a plain HTTP
client carrying the cookie exactly as the server set it."""

import http.client
import json
import threading

import pytest
from waitress import wasyncore
from waitress.server import create_server

from tests.support import PASSWORD


@pytest.fixture
def server(app):
    """waitress on a free port; its loop runs in short slices so it stops cleanly."""
    srv = create_server(app, host="127.0.0.1", port=0, threads=2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            srv.asyncore.loop(timeout=0.05, map=srv._map, count=1)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield srv.effective_port
    stop.set()
    thread.join(timeout=10)
    srv.task_dispatcher.shutdown()
    wasyncore.close_all(srv._map)  # the listener, the trigger and any kept-alive channel


class Browser:
    """Keeps the svc_session cookie the way a browser would (host-only, Path=/)."""

    def __init__(self, port):
        self.port = port
        self.cookie = None

    def call(self, method, path, body=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if self.cookie:
            headers["Cookie"] = f"svc_session={self.cookie}"
        conn.request(method, path, json.dumps(body) if body is not None else None, headers)
        response = conn.getresponse()
        data = response.read()
        for header in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            if name == "svc_session":
                value = rest.split(";", 1)[0]
                self.cookie = value or None
        conn.close()
        return response.status, json.loads(data) if data else None


def test_sign_in_over_http(server, make_user, authenticator):
    make_user()
    browser = Browser(server)
    assert browser.call("GET", "/accounts")[0] == 401
    status, body = browser.call(
        "POST", "/auth/login", {"email": "alice@example.com", "password": PASSWORD}
    )
    assert (status, body) == (200, {"has_passkeys": False, "mfa_complete": False})
    half = browser.cookie
    assert browser.call("GET", "/accounts")[0] == 401
    status, options = browser.call("POST", "/auth/webauthn/register/begin")
    assert status == 200
    status, body = browser.call(
        "POST", "/auth/webauthn/register/finish", authenticator.create(options)
    )
    assert (status, body) == (200, {"mfa_complete": True})
    assert browser.cookie != half
    assert browser.call("GET", "/accounts") == (200, [])
    assert browser.call("POST", "/auth/logout")[0] == 204
    assert browser.cookie is None
    assert browser.call("GET", "/accounts")[0] == 401
