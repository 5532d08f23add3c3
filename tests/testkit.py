"""Helpers over the app for tests (importable; the fixtures that use them live in
conftest.py): the schema from the migrations, the test app and its per-test reset, the
test clients (bearer, browser sign-in, JSON-RPC) and the app under waitress in a thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask
from sqlalchemy import func, select, text

from app import create_app, store
from app.extensions import db
from app.models import Transaction
from app.services.identity import credentials
from harness.inprocess import InProcessServer
from tests.support import API_ORIGIN, PASSWORD, SESSION_COOKIE, WEB_ORIGIN

# Tables whose seeded rows survive the per-test reset (they are reset by hand).
SEEDED = {"settings", "oauth_clients"}


def row_count(app: Flask, model=Transaction) -> int:
    """How many rows model's table holds now (its own read, rolled back)."""
    with app.app_context():
        n = db.session.execute(select(func.count()).select_from(model)).scalar_one()
        db.session.rollback()
        return n


def migrate(url: str, revision: str = "head") -> None:
    from flask_migrate import upgrade

    app = create_app({"DATABASE_URL": url, "TESTING": True})
    with app.app_context():
        store.write_intent.set(True)
        upgrade(revision=revision)
        db.engine.dispose()


def config_for_tests(database_url: str, clock) -> dict:
    """The config of the `app` fixture: TESTING over the test database, the test
    origins, the given clock, the fast password hash."""
    return {
        "TESTING": True,
        "DATABASE_URL": database_url,
        "API_ORIGIN": API_ORIGIN,
        "WEB_ORIGIN": WEB_ORIGIN,
        "CLOCK": clock,
        "PASSWORD_HASH_FAST": True,
    }


def tune_for_tests(database_url: str) -> None:
    """A PostgreSQL test database commits without waiting for the disk (its sessions get
    synchronous_commit = off): what a commit makes visible, and when, is unchanged;
    only a crash of the server could lose the last commits of a database thrown away
    after the run. A test run commits thousands of times; on a loaded machine each
    flush took 30 ms. SQLite: nothing to do."""
    if not database_url.startswith("postgresql"):
        return
    import psycopg

    name = database_url.rsplit("/", 1)[1]
    plain = database_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')


@contextmanager
def app_for_test(shared: Flask, config: dict, own: bool = False) -> Iterator[Flask]:
    """The app for one test: `shared` (one app per store for the whole run) when config
    differs from its own only in CLOCK, else (or when `own`: a test that changes the app
    itself, adding a route) a new app from config.

    Building an app costs about 30 ms (Werkzeug compiles every route), more than most
    tests' bodies. What a test can change on the shared app is put back after it: its
    config (CLOCK is the test's own clock meanwhile) and its connections (disposed, so
    every test starts on new ones, as with a new app). A test that adds event listeners
    to the engine removes them itself (they would outlive it, as with any shared engine).
    """
    if own or any(
        shared.config.get(key) != value for key, value in config.items() if key != "CLOCK"
    ):
        app = create_app(config)
        try:
            yield app
        finally:
            with app.app_context():
                db.session.remove()
                db.engine.dispose()
        return
    saved = dict(shared.config)
    shared.config["CLOCK"] = config.get("CLOCK")
    try:
        yield shared
    finally:
        with shared.app_context():
            db.session.remove()
            db.engine.dispose()
        shared.config.clear()
        shared.config.update(saved)


def reset_database() -> None:
    """Empty every table but keep the seeds, as a freshly migrated database has them."""
    engine = db.engine
    tables = [t.name for t in reversed(db.metadata.sorted_tables) if t.name not in SEEDED]
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            _empty_postgresql(conn, tables)
        else:
            # Emptying entries runs the derived-balance triggers entry by entry; with
            # books near the 64-bit limits a partial state could trip the range
            # triggers (migration 0003), so they are set aside while everything goes
            # (when there are entries at all: dropping and making them costs more
            # than the rest of the reset).
            has_entries = conn.execute(text("SELECT EXISTS (SELECT 1 FROM entries)")).scalar()
            guards = (
                conn.execute(
                    text(
                        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"
                        " AND name LIKE '%_range'"
                    )
                ).all()
                if has_entries
                else []
            )
            for name, _ in guards:
                conn.execute(text(f'DROP TRIGGER "{name}"'))
            for name in [*tables, "ledger_balance_pending"]:
                conn.execute(text(f"DELETE FROM {name}"))
            for _, sql in guards:
                conn.execute(text(sql))
            # The description index's mark (migration 0017) as migrated: ids start at 1
            # again, and a test of the batches counts from there.
            marked = text("SELECT 1 FROM sqlite_master WHERE name = 'search_indexed'")
            if conn.execute(marked).first():
                conn.execute(text("UPDATE search_indexed SET upto = 0"))
        conn.execute(text("DELETE FROM oauth_clients WHERE dynamic"))
        conn.execute(text("UPDATE oauth_clients SET first_used_at = NULL, last_used_at = NULL"))
        conn.execute(
            text(
                "UPDATE settings"
                " SET book_style = 'personal', locked_through = NULL, currency = NULL"
            )
        )


# The sequences each PostgreSQL test database's emptied tables own, read once per database.
_SEQUENCES: dict[str, list[str]] = {}


def _empty_postgresql(conn, tables: list[str]) -> None:
    """What `TRUNCATE ... RESTART IDENTITY CASCADE` does, at a fraction of its cost.

    TRUNCATE gives every table and index a new file, 0.2 s for these 24 tables on an
    idle machine and 0.7 s under load: most of a test's time. A test leaves a few
    rows, so DELETE is cheap; with triggers and foreign keys off for the transaction
    (session_replication_role, a superuser's setting: the test server's postgres)
    order does not matter and no derived-balance trigger runs on rows about to go.
    The identities restart as TRUNCATE's RESTART IDENTITY would. Without superuser
    rights it falls back to TRUNCATE.
    """
    if conn.execute(text("SELECT current_setting('is_superuser')")).scalar() != "on":
        conn.execute(text("TRUNCATE " + ", ".join(tables) + " RESTART IDENTITY CASCADE"))
        return
    key = str(conn.engine.url)
    if key not in _SEQUENCES:
        _SEQUENCES[key] = list(
            conn.execute(
                text(
                    "SELECT s.relname FROM pg_class s"
                    " JOIN pg_depend d ON d.objid = s.oid AND d.deptype IN ('a', 'i')"
                    " JOIN pg_class t ON t.oid = d.refobjid"
                    " WHERE s.relkind = 'S' AND t.relname = ANY(:tables)"
                ),
                {"tables": tables},
            ).scalars()
        )
    conn.execute(text("SET LOCAL session_replication_role = replica"))
    conn.execute(text("; ".join(f"DELETE FROM {name}" for name in tables)))
    if _SEQUENCES[key]:
        conn.execute(text("; ".join(f"ALTER SEQUENCE {s} RESTART" for s in _SEQUENCES[key])))
    conn.execute(text("SET LOCAL session_replication_role = DEFAULT"))


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

    def post_2026(self, method, params=None, *, version="2026-07-28", headers=None, meta=None):
        """A 2026-07-28 request as the official SDK sends it: the `_meta` envelope plus the
        MCP-Protocol-Version / Mcp-Method / Mcp-Name headers (`headers` overrides them; a
        None value leaves one out). Returns the HTTP response (-32020/-32022 come with 400).
        """
        from mcp.shared.inbound import encode_header_value

        self.next_id += 1
        params = dict(params or {})
        params["_meta"] = (
            meta
            if meta is not None
            else {
                "io.modelcontextprotocol/protocolVersion": version,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
            }
        )
        sent = {"MCP-Protocol-Version": version, "Mcp-Method": method}
        if method == "tools/call":
            sent["Mcp-Name"] = encode_header_value(params["name"])
        sent.update(headers or {})
        sent = {name: value for name, value in sent.items() if value is not None}
        payload = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        return self.post(payload, headers=sent)

    def call_2026(self, tool, arguments=None):
        """tools/call under 2026-07-28; the whole reply, its HTTP status asserted 200."""
        params = {"name": tool}
        if arguments is not None:
            params["arguments"] = arguments
        response = self.post_2026("tools/call", params)
        assert response.status_code == 200, response.data
        return response.get_json()

    def result(self, tool, arguments=None):
        """tools/call that must succeed; returns structuredContent (lists unwrapped)."""
        reply = self.call(tool, arguments)
        assert "result" in reply, reply
        structured = reply["result"]["structuredContent"]
        return structured["result"] if set(structured) == {"result"} else structured


class LiveServer:
    """The app under waitress in a thread, on 127.0.0.1 and a free port
    (harness/inprocess.py's InProcessServer, started).

    API_ORIGIN is switched to this server's own address (what a real client connects
    to), so tokens must be minted for `origin`: use `mint()`.
    """

    def __init__(self, app):
        self.app = app
        self.server = InProcessServer(app)
        self.port = self.server.port
        self.origin = self.server.origin
        self.url = self.origin + "/mcp"
        app.config["API_ORIGIN"] = self.origin
        self.server.start()

    def mint(self, email="alice@example.com", label=None) -> str:
        with self.app.app_context():
            token = credentials.mint_token(email, label=label, days=365, audience=self.origin)
            store.commit()
            return token

    def stop(self) -> None:
        self.server.stop()


# --- requests many tests make --------------------------------------------------------

# Receipts as their first bytes say (the service reads the type from them).
PDF = b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01" + b"\x00" * 64
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 32
BOUNDARY = "----receipts-test-boundary"


def multipart(
    data: bytes, filename: str, content_type: str, name: str = "file", fields: dict | None = None
) -> bytes:
    """A multipart/form-data body (boundary BOUNDARY) of plain `fields` then one file
    part, built by hand (the test client spools large form bodies to a file it never
    closes)."""
    quoted = filename.replace("\\", "\\\\").replace('"', '\\"')
    plain = "".join(
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'
        for key, value in (fields or {}).items()
    )
    head = (
        f'{plain}--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"; '
        f'filename="{quoted}"\r\nContent-Type: {content_type}\r\n\r\n'
    )
    return head.encode() + data + f"\r\n--{BOUNDARY}--\r\n".encode()


def upload(api, tx_id, data=PDF, filename="receipt.pdf", content_type="application/pdf"):
    """POST /transactions/{tx_id}/documents with one file, through a test client."""
    return api.post(
        f"/transactions/{tx_id}/documents",
        data=multipart(data, filename, content_type),
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
    )


def events(api, action: str | None = None, *, oldest_first: bool = False) -> list[dict]:
    """The audit trail as GET /audit serves it, newest first (the newest 500); only
    `action`'s events when given (the server's filter); oldest_first: reversed."""
    response = api.get("/audit?limit=500" + (f"&action={action}" if action else ""))
    assert response.status_code == 200, response.get_json()
    items = response.get_json()["items"]
    return items[::-1] if oldest_first else items


@contextmanager
def restored_backup(
    runner, app_config: dict, folder, dialect: str, prefix: str
) -> Iterator[tuple[Flask, object, str]]:
    """The test's books backed up (`ledger-service backup`), restored into a new
    database of dialect (dropped afterwards) and verified there: both commands must
    succeed. Yields the restored app, its CLI runner and verify's output."""
    from tests.support import throwaway_database

    path = folder / "books.backup"
    assert runner.invoke(args=["backup", str(path)]).exit_code == 0
    with throwaway_database(dialect, folder, prefix) as url:
        restored = create_app({**app_config, "DATABASE_URL": url})
        cli = restored.test_cli_runner()
        result = cli.invoke(args=["restore", str(path)])
        assert result.exit_code == 0, result.output
        verified = cli.invoke(args=["verify"])
        assert verified.exit_code == 0, verified.output
        yield restored, cli, verified.output
