"""Where the test helpers live: conftest.py holds fixtures and hooks only, and no
module imports it (pytest loads it; importing it as tests.conftest runs it a second
time as another module). Importable helpers are in tests/support.py and
tests/testkit.py; the `serve` process, free_port and throwaway databases are in
bench/server.py and bench/databases.py, shared with the benchmarks."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")])


def _imports_conftest(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[-1] == "conftest" for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        return module.split(".")[-1] == "conftest" or any(
            alias.name == "conftest" for alias in node.names
        )
    return False


def test_no_module_imports_a_conftest():
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in SOURCES
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if _imports_conftest(node)
    ]
    assert found == [], "import helpers from tests/support.py or tests/testkit.py instead"


def _is_fixture(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "fixture"


def test_conftest_files_hold_only_fixtures_and_hooks():
    extra = []
    for path in sorted((ROOT / "tests").rglob("conftest.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # the docstring
            if isinstance(node, ast.FunctionDef) and (
                node.name.startswith("pytest_") or any(map(_is_fixture, node.decorator_list))
            ):
                continue
            extra.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert extra == [], "move constants, classes and functions to tests/support.py or testkit.py"


def test_one_free_port_and_one_serve_helper():
    """free_port, Service and throwaway exist once, in bench/ (the tests import them)."""
    defined: dict[str, list[str]] = {
        "free_port": [],
        "Service": [],
        "throwaway": [],
        "throwaway_database": [],
    }
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in defined:
                defined[node.name].append(str(path.relative_to(ROOT)))
    assert defined == {
        "free_port": ["bench/server.py"],
        "Service": ["bench/server.py"],
        "throwaway": ["bench/databases.py"],
        "throwaway_database": ["tests/support.py"],
    }
