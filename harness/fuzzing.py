"""Shared pieces of the fuzzing: the schemathesis config, the leak check, the seeded ledger.

Used by tests/system/test_fuzz.py and by `python -m bench.fuzz` (which prints the figures),
both serving the app with harness/inprocess.py's InProcessServer.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DESCRIPTION = ROOT / "app" / "openapi.yaml"

# Bounded and reproducible: a fixed seed, a fixed number of generated cases per
# operation (the examples and coverage phases add their own finite, deterministic
# cases), no example database, no shrinking past the first failure's minimal form.
SEED = 20261121
MAX_EXAMPLES = 50

# Text that must never reach a client: SQL, driver, traceback, or schema names.
# Table names come from the live metadata (see leak_pattern()); these are the rest.
# Driver, ORM and traceback text: never legitimately in any body.
_DRIVER_WORDS = [
    r"\bIntegrityError\b",
    r"\bOperationalError\b",
    r"\bProgrammingError\b",
    r"\bDataError\b",
    r"\bDBAPIError\b",
    r"\bpsycopg\b",
    r"\bsqlite3?\b",
    r"\bsqlalchemy\b",
    r"\bSQLSTATE\b",
    r"Traceback \(most recent call last\)",
    r"\bFile \"/",
    r"\.py\", line \d+",
    r"\bbackground on this error\b",
]
# SQL words: never in an error body (a success body may echo what a user typed).
_SQL_WORDS = _DRIVER_WORDS + [
    r"\bSELECT\b",
    r"\bINSERT\s+INTO\b",
    r"\bUPDATE\s+\w+\s+SET\b",
    r"\bDELETE\s+FROM\b",
    r"\bWHERE\b",
    r"\bRETURNING\b",
    r"\bCONSTRAINT\b",
    r"\bFOREIGN KEY\b",
    r"\bUNIQUE constraint\b",
    r"\bNOT NULL constraint\b",
    r"\bP0001\b",
]
DRIVER_PATTERN = re.compile("|".join(_DRIVER_WORDS), re.IGNORECASE)


def table_and_column_names() -> set[str]:
    """Every table and column name, from the models and from the live database (app context)."""
    from sqlalchemy import inspect

    import app.models  # noqa: F401 - every model, so the metadata is complete
    from app.extensions import db

    names = set()
    for table in db.metadata.tables.values():
        names.add(table.name)
        names.update(c.name for c in table.columns)
    # Tables only the migrations create (SQLite's balance bookkeeping, alembic's own).
    inspector = inspect(db.engine)
    for table in inspector.get_table_names():
        names.add(table)
        names.update(c["name"] for c in inspector.get_columns(table))
    return names


def public_names(description: dict) -> set[str]:
    """Every property and parameter name the description publishes, and every string
    value an enum lists (`interval=month`): fine in any body."""
    names = set()

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("properties"), dict):
                names.update(node["properties"])
            if isinstance(node.get("enum"), list):
                names.update(value for value in node["enum"] if isinstance(value, str))
            if node.get("in") in ("query", "path", "header", "cookie") and "name" in node:
                names.add(node["name"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(description)
    return names


def leak_pattern() -> re.Pattern:
    """For error bodies: SQL and driver words, and every table and column name the API
    does not publish. (Success bodies are held to DRIVER_PATTERN only: they echo user
    data, and an export's CSV header is its own vocabulary.)"""
    public = public_names(load_description())
    internal = sorted(n for n in table_and_column_names() if n not in public)
    words = _SQL_WORDS + [rf"\b{re.escape(n)}\b" for n in internal if len(n) > 3]
    return re.compile("|".join(words), re.IGNORECASE)


def load_description() -> dict:
    return yaml.safe_load(DESCRIPTION.read_text(encoding="utf-8"))


AUTOMATIC_METHODS = {"HEAD", "OPTIONS"}
HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


def shape(path: str) -> str:
    """A path with every parameter name erased: /transactions/{} for both spellings."""
    path = re.sub(r"<(?:[^:<>]+:)?[^<>]+>", "{}", path)  # Flask: <int:tx_id>
    return re.sub(r"\{[^{}]+\}", "{}", path)  # OpenAPI: {id}


def routed_operations(app) -> set[tuple[str, str]]:
    """(METHOD, path shape) for every route of the app's URL map but static files."""
    found = set()
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        for method in rule.methods - AUTOMATIC_METHODS:
            found.add((method, shape(rule.rule)))
    return found


def described_operations(description: dict) -> set[tuple[str, str]]:
    return {
        (method.upper(), shape(path))
        for path, item in description["paths"].items()
        for method in item
        if method in HTTP_METHODS
    }


def only_routed(description: dict, app) -> tuple[dict, list[str]]:
    """The description cut down to operations the app routes, and the names of the rest."""
    routed = routed_operations(app)
    kept, dropped = {}, []
    for path, item in description["paths"].items():
        ops = {}
        for key, value in item.items():
            if key in HTTP_METHODS and (key.upper(), shape(path)) not in routed:
                dropped.append(f"{key.upper()} {path}")
            else:
                ops[key] = value
        if any(k in HTTP_METHODS for k in ops):
            kept[path] = ops
    return {**description, "paths": kept}, dropped


CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "no_internal_text",
)


def schemathesis_config(
    base_url: str, token: str, seed: int = SEED, max_examples: int = MAX_EXAMPLES
):
    import schemathesis

    checks = {"enabled": False}
    checks.update({name: {"enabled": True} for name in CHECKS})
    return schemathesis.Config.from_dict(
        {
            "seed": seed,
            "base-url": base_url,
            "headers": {"Authorization": f"Bearer {token}"},
            "generation": {
                "mode": "all",  # valid and invalid inputs
                "max-examples": max_examples,
                "deterministic": True,
                "with-security-parameters": False,
                "database": "none",
            },
            "phases": {
                "examples": {"enabled": True},
                "coverage": {"enabled": True},
                "fuzzing": {"enabled": True},
                "stateful": {"enabled": False},
            },
            "checks": checks,
            "operations": [
                {
                    # JSON-RPC answers every body, parseable or not, with HTTP 200 and the
                    # error in the envelope (docs/mcp.md "Errors"); "rejection" there
                    # is -32700/-32600, checked by the response schema, not by a 4xx.
                    "include-path": "/mcp",
                    "checks": {"negative_data_rejection": {"enabled": False}},
                }
            ],
            "request-timeout": 30,
            "workers": 1,
        }
    )


_LEAK: dict = {}


def register_leak_check(pattern: re.Pattern) -> None:
    """A schemathesis check: no response body carries internal text (registered once)."""
    registered = "pattern" in _LEAK
    _LEAK["pattern"] = pattern
    if registered:
        return
    import schemathesis

    @schemathesis.check
    def no_internal_text(ctx, response, case):
        if not _is_text(response):
            return None  # a receipt's bytes, an audit pack's zip: the caller's own data
        pattern = _LEAK["pattern"] if response.status_code >= 400 else DRIVER_PATTERN
        found = pattern.search(response.text or "")
        if found:
            raise AssertionError(
                f"the body carries internal text {found.group(0)!r}: {response.text[:300]!r}"
            )
        return


def _is_text(response) -> bool:
    """JSON and text bodies are checked; binary ones (documents, zips) are not text."""
    value = response.headers.get("Content-Type") or response.headers.get("content-type") or ""
    if isinstance(value, list):
        value = value[0] if value else ""
    value = value.lower()
    return not value or "json" in value or value.startswith("text/")


class FuzzResult:
    def __init__(self):
        self.cases = 0
        self.by_status: dict[int, int] = {}
        self.failures: list[str] = []
        self.errors: list[str] = []
        self.operations: set[str] = set()
        self.seconds = 0.0

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.by_status.items() if status >= 500)

    def summary(self) -> str:
        return (
            f"{len(self.operations)} operations, {self.cases} cases, "
            f"{self.server_errors} responses 5xx, {len(self.failures)} failed checks, "
            f"{len(self.errors)} errors, {self.seconds:.0f} s"
        )


def run_fuzz(
    base_url: str,
    token: str,
    description: dict,
    leak: re.Pattern,
    *,
    seed: int = SEED,
    max_examples: int = MAX_EXAMPLES,
) -> FuzzResult:
    """Run every phase but stateful over every operation; collect cases and failures.

    `leak` is leak_pattern(), computed in an app context (it reads the live schema).
    """
    import time

    import schemathesis
    from schemathesis.engine import events, from_schema

    register_leak_check(leak)
    schema = schemathesis.openapi.from_dict(
        description, config=schemathesis_config(base_url, token, seed, max_examples)
    )
    result = FuzzResult()
    started = time.monotonic()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            recorder = event.recorder
            result.operations.add(recorder.label)
            for interaction in recorder.interactions.values():
                if interaction.response is None:
                    continue
                result.cases += 1
                status = interaction.response.status_code
                result.by_status[status] = result.by_status.get(status, 0) + 1
            for nodes in recorder.checks.values():
                for node in nodes:
                    if node.status == "error":
                        result.errors.append(f"{recorder.label}: check {node.name} crashed")
                    if node.failure_info is not None:
                        result.failures.append(
                            f"{recorder.label} [{node.name}] {node.failure_info.failure.title}: "
                            f"{node.failure_info.failure.message[:400]} | reproduce: "
                            f"{node.failure_info.code_sample[:600]}"
                        )
        elif isinstance(event, events.NonFatalError):
            result.errors.append(f"{event.label}: {event.info.title}: {event.info.message[:400]}")
        elif isinstance(event, events.FatalError):
            result.errors.append(f"fatal: {event.exception!r}")
    result.seconds = time.monotonic() - started
    return result


SEED_ACCOUNTS = (
    ("Checking", "asset"),
    ("Card", "liability"),
    ("Opening", "equity"),
    ("Salary", "income"),
    ("Groceries", "expense"),
)


def seed_ledger() -> None:
    """A small ledger (one account of each kind, one posting), so generated ids and
    bodies meet real rows now and then. Call inside an app context; commits."""
    from app import store
    from app.services.ledger import accounts, transactions

    with store.writing():
        ids = [accounts.create_account(name, kind)["id"] for name, kind in SEED_ACCOUNTS]
        transactions.record_transaction(
            "2026-01-31",
            "Seed",
            [
                {"account_id": ids[0], "amount_cents": 100},
                {"account_id": ids[3], "amount_cents": -100},
            ],
            None,
        )
        store.commit()
