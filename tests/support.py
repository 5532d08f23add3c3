"""Helpers shared by tests (importable; fixtures live in conftest.py)."""

import os

import pytest


def require_postgres() -> bool:
    flag = os.environ.get("LEDGER_REQUIRE_POSTGRES") or os.environ.get("CI") or ""
    return flag.strip().lower() not in ("", "0", "false", "no")


def console_script() -> list[str]:
    """The installed `ledger-service` command (from this interpreter's environment)."""
    import shutil
    import sys
    from pathlib import Path

    beside = Path(sys.executable).parent / "ledger-service"
    found = str(beside) if beside.exists() else shutil.which("ledger-service")
    if not found:
        pytest.skip("the ledger-service console script is not installed (pip install -e .)")
    return [found]


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
