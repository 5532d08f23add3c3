"""Configuration: defaults <- instance/config.py <- environment <- test mapping.

Origins are canonicalised once here (scheme and host lowercased, trailing slash
removed) and every other module reads the canonical values from app.config.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ENV_KEYS = (
    "DATABASE_URL",
    "BIND_ADDR",
    "WEB_BIND_ADDR",
    "API_ORIGIN",
    "WEB_ORIGIN",
    "SESSION_TTL_DAYS",
    "OAUTH_CLIENT_COMPAT",
    "OAUTH_CIMD_ALLOW_PRIVATE",
    "TRUSTED_PROXIES",
    "MAX_BODY_BYTES",
    "MAX_DOCUMENT_BYTES",
    "MAX_STATEMENT_BYTES",
    "MAX_STATEMENT_LINES",
    "REQUEST_TIMEOUT_SECONDS",
    "MAX_DOCUMENTS_PER_TRANSACTION",
    "MAX_DOCUMENT_STORE_BYTES",
    "WORKERS",
)

DEFAULTS = {
    "DATABASE_URL": None,  # None: a SQLite file in the instance folder
    "BIND_ADDR": "0.0.0.0:38081",
    "WEB_BIND_ADDR": None,  # None: all interfaces on WEB_ORIGIN's port
    "API_ORIGIN": None,  # None: from BIND_ADDR (api_origin_from_bind), http://localhost:38081
    "WEB_ORIGIN": "http://localhost:38080",
    "SESSION_TTL_DAYS": 30,
    "OAUTH_CLIENT_COMPAT": False,
    # Client ID metadata documents may be fetched from loopback, private and other
    # non-global addresses (tests, intranets); off: only global addresses are reached.
    "OAUTH_CIMD_ALLOW_PRIVATE": False,
    # How many reverse proxies in front are trusted to set X-Forwarded-* (0: none).
    "TRUSTED_PROXIES": 0,
    # Largest request body accepted; larger ones get 413 in the ledger error shape.
    "MAX_BODY_BYTES": 1024 * 1024,
    # Largest document (receipt) a POST /transactions/{id}/documents accepts (413 above).
    "MAX_DOCUMENT_BYTES": 10 * 1024 * 1024,
    # Largest bank statement file a POST /accounts/{id}/statements accepts (413 above).
    "MAX_STATEMENT_BYTES": 5 * 1024 * 1024,
    # The most lines one bank statement may hold (413 above, counted as it is read).
    "MAX_STATEMENT_LINES": 20_000,
    # The embedded server drops a connection idle, or a request not received whole,
    # for this many seconds (app/cli/limits.py; docs/deploy.md "Limits").
    "REQUEST_TIMEOUT_SECONDS": 30,
    # The most documents one transaction may have (409 past it), and the most bytes
    # of documents stored in all (507 past it).
    "MAX_DOCUMENTS_PER_TRANSACTION": 50,
    "MAX_DOCUMENT_STORE_BYTES": 2 * 1024 * 1024 * 1024,
    # Serving processes started by `serve` (checked there: 1 to 64).
    "WORKERS": 1,
    # Tests may set a callable returning an aware UTC datetime (an injectable clock).
    "CLOCK": None,
    # Tests lower argon2's cost; production never sets this.
    "PASSWORD_HASH_FAST": False,
}

# Room for the multipart framing (boundaries, part headers) around an uploaded file.
MULTIPART_ALLOWANCE = 64 * 1024

TRUE_WORDS = {"1", "true", "yes", "on"}


def largest_body(config) -> int:
    """The largest request body any route accepts: a JSON body (MAX_BODY_BYTES), or a
    document or statement upload with its multipart framing. The embedded server
    refuses anything larger before reading it (app/cli/limits.py)."""
    upload = max(int(config[key]) for key in ("MAX_DOCUMENT_BYTES", "MAX_STATEMENT_BYTES"))
    return max(int(config["MAX_BODY_BYTES"]), upload + MULTIPART_ALLOWANCE)


def canonical_origin(value: str) -> str:
    """Lowercase scheme and host, drop one trailing slash (the canonical form every origin
    comparison uses)."""
    value = value.strip()
    parts = urlsplit(value)
    if not parts.scheme or not parts.netloc:
        raise ValueError(f"not an absolute URL: {value!r}")
    path = parts.path[:-1] if parts.path.endswith("/") else parts.path
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def normalise_database_url(url: str) -> str:
    """Route every PostgreSQL URL to psycopg 3; leave SQLite URLs alone."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def parse_host_port(value: str, default_host: str = "0.0.0.0") -> tuple[str, int]:
    """Parse 'host:port' (or '[::1]:port', or ':port') into a pair."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"expected host:port, got {value!r}")
    host = host.strip("[]") or default_host
    return host, int(port)


LOCAL_HOSTS = {"0.0.0.0", "::", "127.0.0.1", "::1", "localhost"}
DEFAULT_BIND_ADDR = str(DEFAULTS["BIND_ADDR"])


def api_origin_from_bind(bind_addr: str) -> str:
    """API_ORIGIN when none is set: http:// and BIND_ADDR's port, on `localhost` when
    the API listens on every interface or on loopback (the web app's default host, which
    the session cookie needs: docs/web.md), else on the host it listens on. A BIND_ADDR
    that is not host:port gives the default's (serve refuses it later)."""
    try:
        host, port = parse_host_port(bind_addr)
    except ValueError:
        host, port = parse_host_port(DEFAULT_BIND_ADDR)
    if host.lower() in LOCAL_HOSTS:
        host = "localhost"
    elif ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def load(app, test_config=None) -> None:
    """Fill app.config from the layers and canonicalise what needs it."""
    app.config.from_mapping(DEFAULTS)
    app.config.from_pyfile("config.py", silent=True)
    for key in ENV_KEYS:
        if key in os.environ and os.environ[key] != "":
            app.config[key] = os.environ[key]
    if test_config:
        app.config.from_mapping(test_config)

    cfg = app.config
    if not cfg["DATABASE_URL"]:
        cfg["DATABASE_URL"] = "sqlite:///" + str(Path(app.instance_path) / "ledger.db")
    cfg["DATABASE_URL"] = normalise_database_url(cfg["DATABASE_URL"])
    # Unset: derived from BIND_ADDR, and serve says so at start (API_ORIGIN_DERIVED).
    cfg["API_ORIGIN_DERIVED"] = not cfg["API_ORIGIN"]
    if cfg["API_ORIGIN_DERIVED"]:
        cfg["API_ORIGIN"] = api_origin_from_bind(str(cfg["BIND_ADDR"]))
    cfg["API_ORIGIN"] = canonical_origin(cfg["API_ORIGIN"])
    cfg["WEB_ORIGIN"] = canonical_origin(cfg["WEB_ORIGIN"])
    cfg["SESSION_TTL_DAYS"] = int(cfg["SESSION_TTL_DAYS"])
    cfg["TRUSTED_PROXIES"] = int(cfg["TRUSTED_PROXIES"])
    cfg["MAX_CONTENT_LENGTH"] = int(cfg["MAX_BODY_BYTES"])
    cfg["MAX_DOCUMENT_BYTES"] = int(cfg["MAX_DOCUMENT_BYTES"])
    cfg["MAX_STATEMENT_BYTES"] = int(cfg["MAX_STATEMENT_BYTES"])
    cfg["MAX_STATEMENT_LINES"] = max(1, int(cfg["MAX_STATEMENT_LINES"]))
    cfg["REQUEST_TIMEOUT_SECONDS"] = max(1, int(cfg["REQUEST_TIMEOUT_SECONDS"]))
    cfg["MAX_DOCUMENTS_PER_TRANSACTION"] = int(cfg["MAX_DOCUMENTS_PER_TRANSACTION"])
    cfg["MAX_DOCUMENT_STORE_BYTES"] = int(cfg["MAX_DOCUMENT_STORE_BYTES"])
    for switch in ("OAUTH_CLIENT_COMPAT", "OAUTH_CIMD_ALLOW_PRIVATE"):
        if isinstance(cfg[switch], str):
            cfg[switch] = cfg[switch].strip().lower() in TRUE_WORDS

    cfg["SQLALCHEMY_DATABASE_URI"] = cfg["DATABASE_URL"]
    # No pool pre-ping: on PostgreSQL app.store.postgresql pings a pooled connection
    # only when it sat idle (one round trip saved per busy request, docs/performance.md
    # "The write path, issue 30"); a SQLite file has no connection to lose.
    engine_options: dict[str, Any] = {"pool_pre_ping": False}
    if cfg["DATABASE_URL"].startswith("sqlite"):
        # One connection per thread is fine for SQLite; waits are handled by busy_timeout.
        engine_options["connect_args"] = {"timeout": 30}
    else:
        # Bounded waits when the database is unreachable: fail with a 500, never hang.
        engine_options["connect_args"] = {"connect_timeout": 10}
    cfg.setdefault("SQLALCHEMY_ENGINE_OPTIONS", engine_options)
    cfg["SQLALCHEMY_TRACK_MODIFICATIONS"] = False
    cfg["JSON_SORT_KEYS"] = False
    app.json.sort_keys = False
