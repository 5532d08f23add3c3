"""Dates must lie in the years 1900 to 2200 on every path: HTTP (400 naming the field),
MCP (-32602) and import (the line number). Both stores."""

from __future__ import annotations

import textwrap

import pytest

from app import store
from app.services.errors import ServiceError
from app.services.interchange import importer


@pytest.mark.parametrize("day", ["0202-05-01", "1899-12-31", "2201-01-01", "9999-12-31"])
def test_posting_outside_the_years_is_refused(api, rpc, make_account, post_tx, day):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    r = post_tx(day, "typo", (food, 5), (bank, -5))
    assert r.status_code == 400
    assert "'occurred_on'" in r.get_json()["error"] and "1900 to 2200" in r.get_json()["error"]
    reply = rpc.call(
        "record_transaction",
        {
            "occurred_on": day,
            "description": "typo",
            "entries": [
                {"account_id": food, "amount_cents": 5},
                {"account_id": bank, "amount_cents": -5},
            ],
        },
    )
    assert reply["error"]["code"] == -32602 and "'occurred_on'" in reply["error"]["message"]
    assert api.get("/transactions").get_json() == []


@pytest.mark.parametrize("day", ["1900-01-01", "2200-12-31"])
def test_the_edges_are_accepted(make_account, post_tx, day):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    assert post_tx(day, "edge", (food, 5), (bank, -5)).status_code == 201


@pytest.mark.parametrize(
    "path,field",
    [
        ("/reports/balances?from=1899-01-01", "from"),
        ("/reports/balances?to=2300-01-01", "to"),
        ("/reports/income-statement?from=2026-01-01&to=2201-01-01", "to"),
        ("/reports/balance-sheet?as_of=0001-01-01", "as_of"),
        ("/transactions?from=1000-01-01", "from"),
    ],
)
def test_report_and_listing_windows_name_the_field(api, path, field):
    r = api.get(path)
    assert r.status_code == 400 and f"'{field}'" in r.get_json()["error"]


def test_mcp_report_arguments_outside_the_years_are_32602(rpc):
    reply = rpc.call("balance_sheet", {"as_of": "2201-01-01"})
    assert reply["error"]["code"] == -32602 and "'as_of'" in reply["error"]["message"]


@pytest.mark.parametrize(
    "fmt,text,line",
    [
        (
            "hledger",
            "2026-01-01 ok\n    assets:Bank  1.00\n    income:Gift\n\n"
            "0202-01-01 typo\n    assets:Bank  1.00\n    income:Gift\n",
            5,
        ),
        (
            "beancount",
            "2026-01-01 open Assets:Bank\n2026-01-01 open Income:Gift\n"
            '2201-01-01 * "typo"\n  Assets:Bank  1.00 USD\n  Income:Gift\n',
            3,
        ),
        (
            "csv",
            "transaction_id,date,description,author,account,kind,cents\n"
            "1,1899-12-31,typo,,Bank,asset,100\n1,1899-12-31,typo,,Gift,income,-100\n",
            2,
        ),
    ],
)
def test_import_names_the_line(app, api, fmt, text, line):
    with app.app_context():
        with pytest.raises(ServiceError) as info:
            importer.import_text(textwrap.dedent(text), fmt)
        store.rollback()
    assert info.value.message.startswith(f"line {line}: "), info.value.message
    assert "1900 to 2200" in info.value.message
    assert api.get("/transactions").get_json() == []
