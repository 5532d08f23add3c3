"""The OpenAPI description (app/openapi.yaml, copied to docs/openapi.yaml) matches the app.

Every route/method of the API's URL map is described, and the description names
no route/method the app does not have. Flask's automatic HEAD and OPTIONS are not
operations of their own (OPTIONS is the CORS preflight, described in the text).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
import yaml

from app import create_app
from harness.fuzzing import described_operations, load_description, routed_operations

ROOT = Path(__file__).resolve().parent.parent
CANONICAL = ROOT / "app" / "openapi.yaml"
DOCS_COPY = ROOT / "docs" / "openapi.yaml"


@pytest.fixture(scope="module")
def url_map_app(tmp_path_factory):
    # Routing needs no database: an app over an unused SQLite path is enough.
    db = tmp_path_factory.mktemp("openapi") / "unused.db"
    return create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{db}"})


def _description(which: Path) -> dict:
    return yaml.safe_load(which.read_text(encoding="utf-8"))


# Both files are checked against the URL map (not only the copy against the original), so
# a route missing from either is named here rather than only as "the copy differs".
DESCRIPTIONS = pytest.mark.parametrize("which", [CANONICAL, DOCS_COPY], ids=["app", "docs"])


@DESCRIPTIONS
def test_every_routed_operation_is_described(url_map_app, which):
    missing = routed_operations(url_map_app) - described_operations(_description(which))
    assert not missing, f"routes missing from {which.relative_to(ROOT)}: {sorted(missing)}"


@DESCRIPTIONS
def test_every_described_operation_is_routed(url_map_app, which):
    extra = described_operations(_description(which)) - routed_operations(url_map_app)
    assert not extra, (
        f"{which.relative_to(ROOT)} names routes the app does not have: {sorted(extra)}"
    )


def test_description_is_valid_openapi_3_1():
    import schemathesis

    description = load_description()
    assert description["openapi"].startswith("3.1")
    schemathesis.openapi.from_dict(description).validate()


def test_docs_copy_is_identical():
    assert DOCS_COPY.read_bytes() == CANONICAL.read_bytes(), (
        "docs/openapi.yaml differs from app/openapi.yaml: cp app/openapi.yaml docs/openapi.yaml"
    )


def test_description_ships_in_the_package():
    shipped = resources.files("app").joinpath("openapi.yaml").read_bytes()
    assert shipped == CANONICAL.read_bytes()
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "openapi.yaml" in pyproject["tool"]["setuptools"]["package-data"]["app"], (
        "openapi.yaml must be package data so a wheel carries it"
    )


def test_security_tiers_follow_the_spec():
    """Open routes say security: []; session-only and half-session ones list only the cookie."""
    paths = load_description()["paths"]
    open_ops = {
        ("GET", "/health"),
        ("POST", "/auth/login"),
        ("POST", "/auth/logout"),
        ("GET", "/.well-known/oauth-protected-resource"),
        ("GET", "/.well-known/oauth-authorization-server"),
        ("GET", "/oauth/authorize"),
        ("POST", "/oauth/token"),
        ("POST", "/oauth/device_authorization"),
        ("POST", "/oauth/register"),
        ("POST", "/oauth/revoke"),
    }
    cookie_only = {
        ("POST", "/auth/password"),
        ("DELETE", "/auth/passkeys/{id}"),
        ("DELETE", "/auth/tokens/{id}"),
        ("POST", "/oauth/authorize/approve"),
        ("GET", "/oauth/device_info"),
        ("POST", "/oauth/device/approve"),
        ("PUT", "/books/lock"),
        ("POST", "/budgets/{id}/approve"),
        ("POST", "/auth/webauthn/register/begin"),
        ("POST", "/auth/webauthn/register/finish"),
        ("POST", "/auth/webauthn/auth/begin"),
        ("POST", "/auth/webauthn/auth/finish"),
    }
    for path, item in paths.items():
        for method, op in item.items():
            key = (method.upper(), path)
            if key in open_ops:
                assert op.get("security") == [], key
            elif key in cookie_only:
                assert op.get("security") == [{"sessionCookie": []}], key
            else:
                assert "security" not in op, f"{key} is full tier: the global security applies"
                assert "401" in op["responses"], f"{key} must document the 401 challenge"


class _DuplicateKeys(yaml.SafeLoader):
    """A loader that records every key given twice in one mapping (yaml.safe_load
    keeps the last silently: two schemas of one name left one of them unused)."""

    duplicates: list[str]


def _record_duplicates(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            loader.duplicates.append(f"{key} (line {key_node.start_mark.line + 1})")
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


_DuplicateKeys.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _record_duplicates)


@DESCRIPTIONS
def test_no_key_is_given_twice(which):
    loader = _DuplicateKeys(which.read_text(encoding="utf-8"))
    loader.duplicates = []
    try:
        loader.get_single_data()
    finally:
        loader.dispose()
    assert not loader.duplicates, f"{which.relative_to(ROOT)}: {loader.duplicates}"


def _inlined(node, schemas: dict):
    """The schema with every #/components/schemas/ reference replaced by its target."""
    if isinstance(node, dict):
        ref = node.get("$ref", "")
        if ref.startswith("#/components/schemas/"):
            return _inlined(schemas[ref.rsplit("/", 1)[1]], schemas)
        return {key: _inlined(value, schemas) for key, value in node.items()}
    if isinstance(node, list):
        return [_inlined(item, schemas) for item in node]
    return node


def test_a_served_bank_statement_is_what_the_description_says():
    """A statement with a line, built by the service's own serializers, validates against
    the described Statement (its lines were once resolved to the income statement's)."""
    from datetime import date, datetime
    from types import SimpleNamespace

    import jsonschema

    from app.services.banking.statements import served_header, served_line

    header = SimpleNamespace(
        id=1, account_id=2, format="camt.053", bank_account="DE89370400440532013000",
        currency="EUR", period_from=date(2026, 11, 1), period_to=date(2026, 11, 30),
        opening_balance_cents=10000, closing_balance_cents=4000,
        closing_balance_on=date(2026, 11, 30), sha256="0" * 64,
        created_at=datetime(2026, 11, 28, 4, 46, 10),
    )  # fmt: skip
    line = SimpleNamespace(
        line_id=1, booked_on=date(2026, 11, 4), amount_cents=-5000, payee="Grocer",
        memo="part one", bank_ref="A1", status="new", transaction_id=None,
    )  # fmt: skip
    statement = {**served_header(header), "lines": [served_line(line)]}
    statement["lines"][0]["suggestion"] = {"account_id": 3, "source": "rule", "rule_id": 1}
    schemas = _description(CANONICAL)["components"]["schemas"]
    jsonschema.Draft202012Validator(_inlined(schemas["Statement"], schemas)).validate(statement)
