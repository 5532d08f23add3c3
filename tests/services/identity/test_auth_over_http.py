"""The whole sign-in over real HTTP: waitress on a free 127.0.0.1 port, a plain HTTP
client carrying the cookie exactly as the server set it."""

import http.client
import json

import pytest

from harness.inprocess import InProcessServer
from tests.support import PASSWORD


@pytest.fixture
def server(app):
    """waitress on a free port (harness/inprocess.py); yields the port."""
    with InProcessServer(app, threads=2) as srv:
        yield srv.port


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
