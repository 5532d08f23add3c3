"""pyproject.toml's ranges and constraints.txt's pins agree, and installs use the pins.

constraints.txt pins the exact version of every package `pip install -e '.[test]'` pulls
in (README, "Dependencies"); pyproject.toml keeps the supported ranges. A dependency
added or re-ranged in one and not the other fails here instead of in a later install.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints.txt"


def declared_strings() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = [r for group in project["optional-dependencies"].values() for r in group]
    return project["dependencies"] + extras


def declared() -> list[Requirement]:
    return [Requirement(r) for r in declared_strings()]


def pins(text: str) -> dict[str, Version]:
    found = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", line)
        assert match, f"constraints.txt line {number} is not an exact pin (name==version): {line}"
        name = canonicalize_name(match.group(1))
        assert name not in found, f"constraints.txt pins {name} twice"
        found[name] = Version(match.group(2))
    return found


def disagreements(requirements: list[Requirement], pinned: dict[str, Version]) -> list[str]:
    problems = []
    for req in requirements:
        name = canonicalize_name(req.name)
        if name not in pinned:
            problems.append(f"{req} has no pin in constraints.txt")
        elif not req.specifier.contains(pinned[name], prereleases=True):
            problems.append(f"constraints.txt pins {name}=={pinned[name]}, outside {req}")
        if name == "psycopg" and "binary" in req.extras and "psycopg-binary" not in pinned:
            problems.append("psycopg[binary] is declared but psycopg-binary has no pin")
    return problems


def test_every_dependency_is_pinned_within_its_range():
    problems = disagreements(declared(), pins(CONSTRAINTS.read_text(encoding="utf-8")))
    assert not problems, "\n".join(problems)


def test_the_check_catches_a_missing_pin_and_a_pin_out_of_range():
    requirements = [Requirement("flask>=3.1,<4"), Requirement("psycopg[binary]>=3.2,<4")]
    pinned = pins("# header\nFlask==3.1.3\npsycopg==3.3.9\npsycopg-binary==3.3.9\n")
    assert disagreements(requirements, pinned) == []
    assert disagreements(requirements, {**pinned, "flask": Version("4.0.0")}) == [
        "constraints.txt pins flask==4.0.0, outside flask<4,>=3.1"
    ]
    del pinned["psycopg-binary"]
    assert disagreements(requirements[1:], pinned) == [
        "psycopg[binary] is declared but psycopg-binary has no pin"
    ]
    assert disagreements(requirements[:1], {}) == ["flask<4,>=3.1 has no pin in constraints.txt"]


def test_every_dependency_has_an_upper_bound_or_a_reason():
    """A new major release must not reach an unconstrained install unannounced."""
    lines = (ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines()
    for declared_as in declared_strings():
        req = Requirement(declared_as)
        if not any(spec.operator in ("<", "<=", "==", "~=") for spec in req.specifier):
            (line,) = [li for li in lines if f'"{declared_as}"' in li]
            assert "constraints.txt" in line, f"{req}: add an upper bound or say why not"


def test_readme_commands_install_with_the_constraints_and_ci_runs_the_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    installs = [line for line in readme.splitlines() if "pip install -e" in line]
    assert installs and all("-c constraints.txt" in line for line in installs), installs
    test_command = next(line for line in installs if ".[test]" in line and "pytest" in line)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command in ci.splitlines(), "the README's test command is not in .ci/run verbatim"
