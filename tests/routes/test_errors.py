"""Error hygiene: faults give one generic sentence; details only reach the log."""

import logging

import pytest
from sqlalchemy.exc import OperationalError

from app.errors import GENERIC_500

LEAKY_WORDS = ["select", "insert", "sqlite", "psycopg", "table", "column", "traceback", "entries"]


def test_store_fault_gives_the_generic_500_and_logs_details(generic_500, api, monkeypatch, caplog):
    from app.services.ledger import accounts

    def broken():
        raise OperationalError(
            "SELECT id FROM accounts", {}, Exception("disk I/O error in table accounts")
        )

    monkeypatch.setattr(accounts, "list_accounts", broken)
    with caplog.at_level(logging.ERROR, logger="app.errors"):
        response = api.get("/accounts")
    assert response.status_code == 500
    assert response.get_json() == {"error": GENERIC_500}
    body = response.get_data(as_text=True).lower()
    for word in LEAKY_WORDS:
        assert word not in body
    assert "disk I/O error" in caplog.text


def test_unexpected_exception_is_generic_too(generic_500, api, monkeypatch):
    from app.services.ledger import reports

    monkeypatch.setattr(reports, "balances", lambda *a: 1 / 0)
    response = api.get("/reports/balances")
    assert response.status_code == 500
    assert response.get_json() == {"error": GENERIC_500}


def test_unknown_route_is_json_404(api):
    response = api.get("/nope")
    assert response.status_code == 404
    assert response.get_json() == {"error": "not found"}


def test_wrong_method_is_json_405(api):
    response = api.post("/reports/balances", json={})
    assert response.status_code == 405
    assert "error" in response.get_json()


@pytest.mark.parametrize(
    "payload",
    [
        {"name": "x' OR 1=1 --", "kind": "asset"},
        {"name": "Robert'); DROP TABLE accounts;--", "kind": "asset"},
    ],
)
def test_hostile_names_are_stored_verbatim(api, payload):
    response = api.post("/accounts", json=payload)
    assert response.status_code == 201
    assert response.get_json()["name"] == payload["name"]
    assert [a["name"] for a in api.get("/accounts").get_json()] == [payload["name"]]


def test_nul_characters_are_refused_not_500(api):
    response = api.post("/accounts", json={"name": "a\x00b", "kind": "asset"})
    assert response.status_code == 400
