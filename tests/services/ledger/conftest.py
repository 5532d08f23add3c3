"""Fixtures the ledger service's tests share (fixtures only: tests/README.md)."""

from __future__ import annotations

import pytest


@pytest.fixture
def club_books(make_account):
    """A club's bank account, its dues income and its rent expense (the schedules'
    tests: dues expected into the bank, rent leaving it)."""
    return {
        "bank": make_account("Bank", "asset"),
        "dues": make_account("Dues", "income"),
        "rent": make_account("Rent", "expense"),
    }
