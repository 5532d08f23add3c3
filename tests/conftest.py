"""Fixtures: every test that touches the app runs once on SQLite and once on PostgreSQL.

The schema comes from the migrations (never create_all). PostgreSQL gets a
throwaway database per test run. If PostgreSQL is unreachable its runs are
skipped with a visible reason, unless CI (or LEDGER_REQUIRE_POSTGRES) is set,
in which case they fail.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from app import create_app
from app import store
from app.extensions import db
from app.services.ledger import accounts
from app.services.identity import credentials, users
from tests.support import (  # noqa: F401 - re-exported for the tests
    PG_ADMIN_URL,
    console_script,
    free_port,
    require_postgres,
    throwaway_database,
)

API_ORIGIN = "http://localhost:38081"
WEB_ORIGIN = "http://localhost:38080"
PASSWORD = "correct horse battery staple"
# Tables whose seeded rows survive the per-test reset (they are reset by hand).
SEEDED = {"settings", "oauth_clients"}


class FakeClock:
    """An injectable clock: starts at a fixed instant, moves only when told."""

    def __init__(self, start: datetime | None = None):
        self.current = start or datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.current

    def advance(self, seconds: float = 0, **kwargs) -> datetime:
        self.current += timedelta(seconds=seconds, **kwargs)
        return self.current


def _migrate(url: str) -> None:
    from flask_migrate import upgrade

    app = create_app({"DATABASE_URL": url, "TESTING": True})
    with app.app_context():
        store.write_intent.set(True)
        upgrade()
        db.engine.dispose()


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def database_url(request, tmp_path_factory):
    with throwaway_database(request.param, tmp_path_factory.mktemp("db")) as url:
        _migrate(url)
        yield url


@pytest.fixture
def dialect(database_url) -> str:
    return "postgresql" if database_url.startswith("postgresql") else "sqlite"


def reset_database() -> None:
    """Empty every table but keep the seeds, as a freshly migrated database has them."""
    engine = db.engine
    tables = [t.name for t in reversed(db.metadata.sorted_tables) if t.name not in SEEDED]
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(text("TRUNCATE " + ", ".join(tables) + " RESTART IDENTITY CASCADE"))
        else:
            # Emptying entries runs the derived-balance triggers entry by entry; with
            # books near the 64-bit limits a partial state could trip the range
            # triggers (migration 0003), so they are set aside while everything goes.
            guards = conn.execute(text(
                "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"
                " AND name LIKE '%_range'")).all()
            for name, _ in guards:
                conn.execute(text(f'DROP TRIGGER "{name}"'))
            for name in tables + ["ledger_balance_pending"]:
                conn.execute(text(f"DELETE FROM {name}"))
            for _, sql in guards:
                conn.execute(text(sql))
        conn.execute(text("DELETE FROM oauth_clients WHERE dynamic"))
        conn.execute(text("UPDATE oauth_clients SET first_used_at = NULL, last_used_at = NULL"))
        conn.execute(text("UPDATE settings SET book_style = 'personal'"))


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def app_config(database_url, clock):
    return {
        "TESTING": True,
        "DATABASE_URL": database_url,
        "API_ORIGIN": API_ORIGIN,
        "WEB_ORIGIN": WEB_ORIGIN,
        "CLOCK": clock,
        "PASSWORD_HASH_FAST": True,
    }


@pytest.fixture
def app(app_config):
    app = create_app(app_config)
    with app.app_context():
        reset_database()
    yield app
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


class ApiClient:
    """A test client that sends a bearer token with every request."""

    def __init__(self, client, token: str):
        self.client = client
        self.token = token

    def _headers(self, headers):
        merged = {"Authorization": f"Bearer {self.token}"}
        merged.update(headers or {})
        return merged

    def get(self, path, **kw):
        return self.client.get(path, headers=self._headers(kw.pop("headers", None)), **kw)

    def post(self, path, **kw):
        return self.client.post(path, headers=self._headers(kw.pop("headers", None)), **kw)

    def put(self, path, **kw):
        return self.client.put(path, headers=self._headers(kw.pop("headers", None)), **kw)

    def delete(self, path, **kw):
        return self.client.delete(path, headers=self._headers(kw.pop("headers", None)), **kw)


@pytest.fixture
def make_user(app):
    def make(email="alice@example.com", password=PASSWORD):
        with app.app_context():
            user = users.add_user(email, password)
            store.commit()
            return user.id

    return make


@pytest.fixture
def mint(app):
    def mint_for(email="alice@example.com", label=None, days=365):
        with app.app_context():
            token = credentials.mint_token(email, label=label, days=days, audience=API_ORIGIN)
            store.commit()
            return token

    return mint_for


@pytest.fixture
def api(client, make_user, mint):
    """A bearer-authenticated client for alice@example.com."""
    make_user()
    return ApiClient(client, mint())


@pytest.fixture
def make_account(api):
    def make(name, kind):
        response = api.post("/accounts", json={"name": name, "kind": kind})
        assert response.status_code == 201, response.get_json()
        return response.get_json()["id"]

    return make


@pytest.fixture
def post_tx(api):
    """Post a transaction; returns the response."""

    def post(occurred_on, description, *entries):
        return api.post(
            "/transactions",
            json={
                "occurred_on": occurred_on,
                "description": description,
                "entries": [{"account_id": a, "amount_cents": c} for a, c in entries],
            },
        )

    return post


@pytest.fixture
def service_account(app):
    """Create an account through the service directly (for tests that bypass HTTP)."""

    def make(name, kind):
        with app.app_context():
            account = accounts.create_account(name, kind)
            store.commit()
            return account["id"]

    return make


SESSION_COOKIE = "svc_session"


@pytest.fixture
def session_client(app, client, make_user):
    """A client holding a cookie session for alice@example.com.

    Call it with mfa_complete=True for a full session (as if the passkey ceremony
    had succeeded) or False for a half-session (password only).
    """
    from app.services.identity import sessions

    def make(mfa_complete=True, email="alice@example.com"):
        with app.app_context():
            user = users.find_user(email)
            user_id = user.id if user else None
        if user_id is None:
            user_id = make_user(email)
        with app.app_context():
            cookie = sessions.create(user_id, mfa_complete=mfa_complete)
            store.commit()
        client.set_cookie(SESSION_COOKIE, cookie, domain="localhost")
        return client

    return make


@pytest.fixture
def scratch_database_url(dialect, tmp_path):
    """A fresh, empty (unmigrated) database of the current dialect, dropped afterwards."""
    with throwaway_database(dialect, tmp_path, "ledger_scratch_") as url:
        yield url


@pytest.fixture
def make_app(app_config):
    """Build extra apps over the test database with config overrides; disposed afterwards."""
    made = []

    def build(**overrides):
        extra = create_app({**app_config, **overrides})
        made.append(extra)
        return extra

    yield build
    for extra in made:
        with extra.app_context():
            db.session.remove()
            db.engine.dispose()


# --- sign-in helpers (issue 3) ---------------------------------------------------


@pytest.fixture
def authenticator():
    """A software WebAuthn authenticator for the test RP (tests/authenticator.py)."""
    from tests.authenticator import SoftAuthenticator

    return SoftAuthenticator(rp_id="localhost", origin=WEB_ORIGIN)


class SignIn:
    """The browser side of sign-in, through the real endpoints."""

    def __init__(self, client, authenticator):
        self.client = client
        self.authenticator = authenticator

    def cookie(self) -> str | None:
        found = self.client.get_cookie(SESSION_COOKIE, domain="localhost")
        return found.value if found else None

    def password(self, email="alice@example.com", password=PASSWORD):
        return self.client.post("/auth/login", json={"email": email, "password": password})

    def register(self, name=None, **knobs):
        begin = self.client.post("/auth/webauthn/register/begin")
        assert begin.status_code == 200, begin.get_json()
        body = self.authenticator.create(begin.get_json(), **knobs)
        if name is not None:
            body["name"] = name
        return self.client.post("/auth/webauthn/register/finish", json=body)

    def assert_passkey(self, **knobs):
        begin = self.client.post("/auth/webauthn/auth/begin")
        assert begin.status_code == 200, begin.get_json()
        body = self.authenticator.get(begin.get_json(), **knobs)
        return self.client.post("/auth/webauthn/auth/finish", json=body)

    def full(self, email="alice@example.com", password=PASSWORD):
        """Password, then the first passkey (or an existing one): a full session."""
        login = self.password(email, password)
        assert login.status_code == 200, login.get_json()
        finish = self.assert_passkey() if login.get_json()["has_passkeys"] else self.register()
        assert finish.status_code == 200, finish.get_json()
        return self.client


@pytest.fixture
def signin(client, authenticator, make_user):
    """Alice exists; `signin.full()` gives a full session through the real ceremonies."""
    make_user()
    return SignIn(client, authenticator)
class Rpc:
    """JSON-RPC 2.0 over POST /mcp with alice's bearer token (the tool endpoint)."""

    def __init__(self, api: ApiClient):
        self.api = api
        self.next_id = 0

    def post(self, payload=None, *, data=None, headers=None):
        if data is not None:
            return self.api.post("/mcp", data=data, headers=headers)
        return self.api.post("/mcp", json=payload, headers=headers)

    def request(self, method, params=None):
        """The whole reply envelope; asserts the HTTP layer answered 200 JSON."""
        self.next_id += 1
        payload = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            payload["params"] = params
        response = self.post(payload)
        assert response.status_code == 200, response.data
        assert response.is_json, response.data
        reply = response.get_json()
        assert reply["jsonrpc"] == "2.0" and reply["id"] == self.next_id, reply
        return reply

    def call(self, tool, arguments=None):
        """tools/call; returns the whole reply (result or error)."""
        params = {"name": tool}
        if arguments is not None:
            params["arguments"] = arguments
        return self.request("tools/call", params)

    def result(self, tool, arguments=None):
        """tools/call that must succeed; returns structuredContent (lists unwrapped)."""
        reply = self.call(tool, arguments)
        assert "result" in reply, reply
        structured = reply["result"]["structuredContent"]
        return structured["result"] if set(structured) == {"result"} else structured


@pytest.fixture
def rpc(api):
    return Rpc(api)


@pytest.fixture
def spec_tools() -> set[str]:
    """The six tool names SPEC lists, written out independently of app.mcp.tools."""
    return {
        "list_accounts",
        "account_balances",
        "income_statement",
        "balance_sheet",
        "list_transactions",
        "record_transaction",
    }


class LiveServer:
    """The app under waitress in a thread, on 127.0.0.1 and a free port.

    API_ORIGIN is switched to this server's own address (what a real client connects
    to), so tokens must be minted for `origin`: use `mint()`.
    """

    def __init__(self, app):
        import threading

        import waitress

        self.app = app
        self.server = waitress.create_server(
            app, host="127.0.0.1", port=0, threads=4, ident="ledger-service-test"
        )
        self.port = self.server.effective_port
        self.origin = f"http://127.0.0.1:{self.port}"
        self.url = self.origin + "/mcp"
        app.config["API_ORIGIN"] = self.origin
        self.thread = threading.Thread(target=self.server.run, name="waitress-test", daemon=True)
        self.thread.start()

    def mint(self, email="alice@example.com", label=None) -> str:
        with self.app.app_context():
            token = credentials.mint_token(email, label=label, days=365, audience=self.origin)
            store.commit()
            return token

    def stop(self) -> None:
        server = self.server

        def close_everything():  # runs inside the server's own loop thread
            for dispatcher in list(server._map.values()):
                dispatcher.close()

        server.trigger.pull_trigger(close_everything)
        self.thread.join(timeout=10)
        server.task_dispatcher.shutdown(timeout=5)
        assert not self.thread.is_alive(), "the test server did not stop"


@pytest.fixture
def live_server(app):
    server = LiveServer(app)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def sample_books(make_account, post_tx):
    """A small ledger with all five kinds and names that need escaping in the exports.

    Returns {name: account_id}. One account (Unused fund) never gets a posting.
    """
    kinds = {
        "Checking": "asset",
        "Petty cash": "asset",
        "Bank:Savings": "asset",
        "Visa card": "liability",
        "Opening balances": "equity",
        "Unused fund": "equity",
        "Salary": "income",
        "Dues; late fees": "income",
        "Groceries & food": "expense",
        "50% off stuff": "expense",
        "co-op": "expense",
    }
    ids = {name: make_account(name, kind) for name, kind in kinds.items()}
    postings = [
        ("2026-01-01", "Opening", ("Checking", 100000), ("Opening balances", -100000)),
        ("2026-01-03", "Pay day", ("Checking", 250000), ("Salary", -250000)),
        ("2026-01-04", 'Aldi "big" shop; milk\nand eggs', ("Groceries & food", 4321),
         ("Checking", -4321)),
        ("2026-01-05", "Card purchase", ("50% off stuff", 1999), ("Visa card", -1999)),
        ("2026-01-05", "Card purchase", ("50% off stuff", 1999), ("Visa card", -1999)),
        ("2026-01-07", "Split", ("co-op", 5), ("Petty cash", 95), ("Checking", -100)),
        ("2026-02-01", "Late dues 100% paid", ("Checking", 1), ("Dues; late fees", -1)),
        ("2026-02-02", "To savings", ("Bank:Savings", 50000), ("Checking", -50000)),
    ]
    for day, description, *entries in postings:
        response = post_tx(day, description, *[(ids[n], c) for n, c in entries])
        assert response.status_code == 201, response.get_json()
    return ids
