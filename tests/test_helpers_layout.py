"""Where the test helpers live: conftest.py holds fixtures and hooks only, and no
module imports it (pytest loads it; importing it as tests.conftest runs it a second
time as another module). Importable helpers are in tests/support.py and
tests/testkit.py; what the tests share with the benchmarks (the `serve` process,
free_port, throwaway databases, the fuzzing, the in-process server) is in harness/,
which bench/ imports too: bench never imports tests. The tests live in folders that
mirror app/, with few files left at the top."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(
    [
        *(ROOT / "tests").rglob("*.py"),
        *(ROOT / "bench").rglob("*.py"),
        *(ROOT / "harness").rglob("*.py"),
    ]
)


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
    """free_port, Service and throwaway exist once, in harness/ (tests and bench import them)."""
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
        "free_port": ["harness/server.py"],
        "Service": ["harness/server.py"],
        "throwaway": ["harness/databases.py"],
        "throwaway_database": ["tests/support.py"],
    }


def _imported_modules(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
    return found


def _test_modules_imported(path: Path) -> list[str]:
    """The test modules (tests...test_*) `path` imports, at any depth of the file: by
    `import tests.x.test_y`, `from tests.x.test_y import ...` or `from tests.x import
    test_y`, absolute or relative."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            modules = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        tests_modules = [
            module
            for module in modules
            if module.split(".")[0] == "tests" and module.split(".")[-1].startswith("test_")
        ]
        if tests_modules:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {tests_modules[0]}")
    return found


def test_no_test_module_imports_another():
    """No module under tests/ (a test module, a helper, a conftest) imports a test module:
    what several test modules share lives in a helper module (tests/README.md, "Helpers":
    tests/support.py, tests/testkit.py, a folder's own such as tests/web/web_support.py or
    tests/services/oauth/flow.py), fixtures in a conftest.py. A helper kept in a test
    module ties its importers to that module's tests, and a fixture taken in by import
    hides where it comes from."""
    found = [
        line
        for path in SOURCES
        if path.relative_to(ROOT).parts[0] == "tests"
        for line in _test_modules_imported(path)
    ]
    assert found == [], "move the shared helper out of the test module it is imported from"


def test_bench_and_harness_never_import_tests():
    """The shared pieces are in harness/; bench/ and harness/ never reach into tests/."""
    found = [
        f"{path.relative_to(ROOT)}: {module}"
        for path in SOURCES
        if path.relative_to(ROOT).parts[0] in ("bench", "harness")
        for module in _imported_modules(path)
        if module == "tests" or module.startswith("tests.")
    ]
    assert found == [], "move what bench needs from tests/ to harness/"


def test_harness_never_imports_bench():
    found = [
        f"{path.relative_to(ROOT)}: {module}"
        for path in SOURCES
        if path.relative_to(ROOT).parts[0] == "harness"
        for module in _imported_modules(path)
        if module == "bench" or module.startswith("bench.")
    ]
    assert found == []


def test_tests_are_grouped_in_folders():
    """At most 15 files at the top of tests/ (the rest in folders that mirror app/),
    each folder of Python tests a package (the tests are imported as `tests...`)."""
    top = [path.name for path in (ROOT / "tests").iterdir() if path.is_file()]
    assert len(top) <= 15, sorted(top)
    folders = {path.parent for path in (ROOT / "tests").rglob("*.py")}
    assert (
        sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").exists()) == []
    )


def test_one_in_process_server():
    """waitress's create_server is called in one place: harness/inprocess.py."""
    calls = [
        str(path.relative_to(ROOT))
        for path in SOURCES
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == "create_server")
            or (
                isinstance(node.func, ast.Attribute)
                and node.func.attr == "create_server"
                and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "socket")
            )
        )
    ]
    assert calls == ["harness/inprocess.py"]


def test_shared_test_helpers_are_defined_once():
    """The helpers many tests use are defined once (tests/README.md, "Helpers"): the
    plain ones in tests/testkit.py, the browser tests' sizes, person and waits in
    tests/web/web_support.py, their page checks in tests/web/pages.py and their
    fixtures in tests/web/conftest.py."""
    functions = (
        *("upload", "multipart", "events", "person_at", "expect_text"),
        *("sign_in", "go", "all_big_enough", "browser", "live", "size", "treasurer"),
    )
    defined: dict[str, list[str]] = {name: [] for name in (*functions, "SIZES")}
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name in functions:
                defined[node.name].append(str(path.relative_to(ROOT)))
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                if "SIZES" in names:
                    defined["SIZES"].append(str(path.relative_to(ROOT)))
    assert defined == {
        "upload": ["tests/testkit.py"],
        "multipart": ["tests/testkit.py"],
        "events": ["tests/testkit.py"],
        "person_at": ["tests/web/web_support.py"],
        "expect_text": ["tests/web/web_support.py"],
        "SIZES": ["harness/browser.py", "tests/web/web_support.py"],
        "sign_in": ["tests/web/pages.py"],
        "go": ["tests/web/pages.py"],
        "all_big_enough": ["tests/web/pages.py"],
        "browser": ["tests/web/conftest.py"],
        "live": ["tests/web/conftest.py"],
        "size": ["tests/web/conftest.py"],
        "treasurer": ["tests/web/conftest.py"],
    }
