"""Fixtures shared by the statement tests that read the stand-in format (stand_in.py):
the reader itself (asked for by each such module's pytestmark, not autouse, since the
readers' own tests here read real files) and the books the statements are filed into."""

from __future__ import annotations

import pytest

from tests.services.banking import stand_in
from tests.services.banking.stand_in import BOOKS


@pytest.fixture
def stand_in_reader(monkeypatch):
    stand_in.install(monkeypatch)


@pytest.fixture
def book_accounts() -> dict[str, tuple[str, str]]:
    """key: (name, kind) of each account `books` makes, in the order it makes them."""
    return BOOKS


@pytest.fixture
def books(make_account, book_accounts):
    return {key: make_account(name, kind) for key, (name, kind) in book_accounts.items()}
