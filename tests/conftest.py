"""Fixtures: every test that touches the app runs once on SQLite and once on PostgreSQL.

The schema comes from the migrations (never create_all). PostgreSQL gets a
throwaway database per test run. If PostgreSQL is unreachable its runs are
skipped with a visible reason, unless CI (or LEDGER_REQUIRE_POSTGRES) is set,
in which case they fail.
"""

from __future__ import annotations

import pytest

from app import create_app, store
from app.extensions import db
from app.services.identity import credentials, users
from app.services.ledger import accounts
from tests.document_server import DocumentServer
from tests.support import (
    API_ORIGIN,
    PASSWORD,
    SESSION_COOKIE,
    WEB_ORIGIN,
    FakeClock,
    throwaway_database,
)
from tests.testkit import (
    ApiClient,
    LiveServer,
    Rpc,
    SignIn,
    app_for_test,
    config_for_tests,
    migrate,
    reset_database,
    tune_for_tests,
)


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def database_url(request, tmp_path_factory):
    with throwaway_database(request.param, tmp_path_factory.mktemp("db")) as url:
        migrate(url)
        tune_for_tests(url)
        yield url


@pytest.fixture
def dialect(database_url) -> str:
    return "postgresql" if database_url.startswith("postgresql") else "sqlite"


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def app_config(database_url, clock):
    return config_for_tests(database_url, clock)


@pytest.fixture(scope="session")
def shared_app(database_url):
    """The one app per store that `app` lends to each test (tests/testkit.app_for_test)."""
    shared = create_app(config_for_tests(database_url, FakeClock()))
    yield shared
    with shared.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def app(request, shared_app, app_config):
    """The app over the emptied test database: the shared one unless the test's
    app_config changes more than the clock or the test is marked `own_app` (then a
    new one)."""
    own = request.node.get_closest_marker("own_app") is not None
    with app_for_test(shared_app, app_config, own) as app:
        with app.app_context():
            reset_database()
        yield app


@pytest.fixture
def generic_500(app):
    """The app answers an unexpected error with the generic 500, as in production.

    Without it, under TESTING the catch-all re-raises so the test shows the traceback
    (app/errors.py); only a test that asserts the generic 500 itself asks for this.
    """
    app.config["GENERIC_500_UNDER_TEST"] = True
    return app


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


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
def document_server(tmp_path):
    """A local HTTPS server for client ID metadata documents (tests/document_server.py);
    give the service its CA with SSL_CERT_FILE."""
    server = DocumentServer(tmp_path)
    yield server
    server.stop()


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


@pytest.fixture
def signin(client, authenticator, make_user):
    """Alice exists; `signin.full()` gives a full session through the real ceremonies."""
    make_user()
    return SignIn(client, authenticator)


@pytest.fixture
def rpc(api):
    return Rpc(api)


@pytest.fixture
def spec_tools() -> set[str]:
    """The six tool names docs/mcp.md lists, written out independently of app.mcp.tools."""
    return {
        "list_accounts",
        "account_balances",
        "income_statement",
        "balance_sheet",
        "list_transactions",
        "record_transaction",
    }


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
        (
            "2026-01-04",
            'Aldi "big" shop; milk\nand eggs',
            ("Groceries & food", 4321),
            ("Checking", -4321),
        ),
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


@pytest.fixture
def sql_sent(app):
    """Every SQL statement the app sends while the test runs, in order (one per cursor
    execution, white space collapsed): for tests that pin how many statements a request
    takes, or that it sends the same text whatever its bounds."""
    from sqlalchemy import event

    seen: list[str] = []

    def record(_conn, _cursor, statement, _params, _context, _executemany):
        seen.append(" ".join(statement.split()))

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", record)
    yield seen
    event.remove(engine, "before_cursor_execute", record)
