"""The store's dialect helper (app/store/dialect.py): services ask it, never read
`dialect.name` themselves, and its ON CONFLICT builder writes the same SQL on both
stores as the statements it replaced (docs/architecture.md, "What services ask of the
store")."""

import re
from pathlib import Path

from sqlalchemy.dialects import postgresql, sqlite

from app.models import ClientDocument, LoginThrottle
from app.store import dialect

ROOT = Path(__file__).resolve().parents[2]
DIALECTS = {"postgresql": postgresql.dialect(), "sqlite": sqlite.dialect()}


def test_services_ask_the_store_not_dialect_name():
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "app").rglob("*.py"))
        if "store" not in path.relative_to(ROOT / "app").parts[:1]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\.dialect\.name\b(?!\()", line)
    ]
    assert found == [], "ask app.store.dialect (is_postgresql, is_sqlite, name) instead"


def _sql(statement, name):
    return str(statement.compile(dialect=DIALECTS[name]))


def test_upsert_writes_insert_on_conflict_on_both_stores(monkeypatch):
    for name, module in (("postgresql", postgresql), ("sqlite", sqlite)):
        monkeypatch.setattr(dialect, "name", lambda bind=None, name=name: name)
        values = {"email": "a@example.com", "failures": 0, "locked_until": None}
        skip = dialect.upsert(LoginThrottle, values, key=["email"])
        by_hand = module.insert(LoginThrottle).values(**values)
        assert _sql(skip, name) == _sql(
            by_hand.on_conflict_do_nothing(index_elements=["email"]), name
        )
        assert "ON CONFLICT (email) DO NOTHING" in _sql(skip, name)
        copy = {"document": "{}"}
        update = dialect.upsert(ClientDocument, {"url": "https://c.example/", **copy}, set_=copy)
        by_hand = module.insert(ClientDocument).values(url="https://c.example/", **copy)
        assert _sql(update, name) == _sql(
            by_hand.on_conflict_do_update(index_elements=["url"], set_=copy), name
        )
        assert "ON CONFLICT (url) DO UPDATE SET document" in _sql(update, name)


def test_per_dialect_builds_one_statement_for_each_store():
    built = dialect.per_dialect(lambda insert: insert(LoginThrottle).on_conflict_do_nothing())
    assert set(built) == set(dialect.DIALECTS)
    for name, statement in built.items():
        assert "ON CONFLICT DO NOTHING" in _sql(statement, name)


def test_an_integer_array_is_one_text_literal_built_in_one_place():
    assert dialect.int_array([]) == "{}"
    assert dialect.int_array(iter([3, -(2**63), 2**63 - 1, True])) == (
        "{3,-9223372036854775808,9223372036854775807,1}"
    )
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "app").rglob("*.py"))
        if path != ROOT / "app" / "store" / "dialect.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"""["']\{["']\s*\+\s*["'],["']\.join""", line)
    ]
    assert found == [], "build a PostgreSQL integer array with app.store.dialect.int_array"
