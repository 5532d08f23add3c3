"""Test helper: drive the OAuth endpoints the way a client and a human would, and `race`
one request from several threads at once (the races of tests/services/oauth/ and the
concurrent uploads of tests/services/ledger/test_documents.py)."""

from __future__ import annotations

import base64
import hashlib
import secrets
import threading
from urllib.parse import parse_qs, urlsplit

API_ORIGIN = "http://localhost:38081"
REDIRECT = "http://127.0.0.1:53682/callback"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
FORM = "application/x-www-form-urlencoded"


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.rstrip(b"=").decode()


def query_of(url: str) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


class OAuthFlow:
    """Wraps one test client; `human()` gives it a full cookie session."""

    def __init__(self, client, session_client):
        self.client = client
        self._session_client = session_client
        self.verifier, self.challenge = pkce_pair()

    def human(self, email="alice@example.com"):
        self._session_client(mfa_complete=True, email=email)
        return self

    def params(self, **overrides) -> dict:
        params = {
            "client_id": "svc-cli",
            "redirect_uri": REDIRECT,
            "response_type": "code",
            "code_challenge": self.challenge,
            "code_challenge_method": "S256",
            "resource": API_ORIGIN,
            "state": "xyz",
        }
        params.update(overrides)
        return {k: v for k, v in params.items() if v is not None}

    def approve(self, approve=True, **overrides):
        return self.client.post(
            "/oauth/authorize/approve", json={**self.params(**overrides), "approve": approve}
        )

    def code(self, **overrides) -> str:
        response = self.approve(True, **overrides)
        assert response.status_code == 200, response.get_json()
        return query_of(response.get_json()["redirect"])["code"]

    def token(self, **form):
        return self.client.post("/oauth/token", data=form, content_type=FORM)

    def exchange(self, code, **overrides):
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "client_id": "svc-cli",
            "code_verifier": self.verifier,
        }
        form.update(overrides)
        return self.token(**{k: v for k, v in form.items() if v is not None})

    def pair(self, **overrides) -> dict:
        bound = {k: overrides[k] for k in ("client_id", "redirect_uri") if k in overrides}
        response = self.exchange(self.code(**overrides), **bound)
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    def refresh(self, refresh_token, client_id="svc-cli", **extra):
        return self.token(
            grant_type="refresh_token", refresh_token=refresh_token, client_id=client_id, **extra
        )

    def revoke(self, **form):
        return self.client.post("/oauth/revoke", data=form, content_type=FORM)

    def device_start(self, client_id="svc-cli", resource=API_ORIGIN, address=None):
        """POST /oauth/device_authorization, from `address` (REMOTE_ADDR) when given."""
        extra = {"environ_base": {"REMOTE_ADDR": address}} if address else {}
        return self.client.post(
            "/oauth/device_authorization",
            data={"client_id": client_id, "resource": resource},
            content_type=FORM,
            **extra,
        )

    def poll(self, device_code, client_id="svc-cli", **extra):
        return self.token(
            grant_type=DEVICE_GRANT, device_code=device_code, client_id=client_id, **extra
        )

    def works(self, access_token) -> bool:
        """Whether an access token opens a full-tier ledger route."""
        response = self.client.get("/accounts", headers={"Authorization": f"Bearer {access_token}"})
        assert response.status_code in (200, 401)
        return response.status_code == 200


def assert_oauth_error(response, error: str, status: int = 400):
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True))
    body = response.get_json()
    assert body["error"] == error, body
    assert isinstance(body["error_description"], str) and body["error_description"]
    assert response.headers["Cache-Control"] == "no-store"
    return body


NEW_PASSWORD = "a brand new secret"


def change_alice_password(how: str, client, runner) -> None:
    """Change alice's password over HTTP (her cookie session) or by `user passwd`."""
    from tests.support import PASSWORD

    if how == "http":
        response = client.post(
            "/auth/password", json={"current_password": PASSWORD, "new_password": NEW_PASSWORD}
        )
        assert response.status_code == 204, response.get_data(as_text=True)
    else:
        result = runner.invoke(
            args=["user", "passwd", "alice@example.com", "--password", "-"],
            input=NEW_PASSWORD + "\n",
        )
        assert result.exit_code == 0, result.output


THREADS = 4


def race(app, form=None, send=None, threads=THREADS) -> list:
    """Send the same request from `threads` threads at once; returns (status, body) pairs.

    By default the request is a token request with `form`; `send(client, i)` overrides
    it (i: the thread's number).
    """
    barrier = threading.Barrier(threads)
    results, errors = [None] * threads, []
    if send is None:

        def send(client, i):
            return client.post("/oauth/token", data=form, content_type=FORM)

    def run(i):
        client = app.test_client()
        try:
            barrier.wait(timeout=30)
            response = send(client, i)
            results[i] = (response.status_code, response.get_json())
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(timeout=120)
    assert not errors, errors
    return results
