"""A statement in another currency than the books' (docs/statements.md, "The books'
currency"): 400 naming both, nothing stored; the books' own currency, a statement
saying none, or books without a currency set, are taken as before."""

from __future__ import annotations

import pytest

from tests.services.banking.stand_in import line, statement_file, upload_statement

pytestmark = pytest.mark.usefixtures("stand_in_reader")


def _file(currency):
    header = {} if currency is None else {"currency": currency}
    return statement_file(line("2026-03-02", -1250, "Bakery"), **header)


def test_a_statement_in_another_currency_is_400_naming_both_and_nothing_stored(api, books):
    assert api.put("/books/currency", json={"currency": "EUR"}).status_code == 200
    head = api.get("/audit/head").get_json()
    refused = upload_statement(api, books["bank"], _file("USD"))
    assert refused.status_code == 400
    assert set(refused.get_json()) == {"error"}
    error = refused.get_json()["error"]
    assert "USD" in error and "EUR" in error
    assert api.get("/statements").get_json() == []
    assert api.get("/audit/head").get_json() == head


@pytest.mark.parametrize("currency", ["EUR", "eur", None])
def test_the_books_own_currency_or_none_said_is_taken(api, books, currency):
    assert api.put("/books/currency", json={"currency": "EUR"}).status_code == 200
    taken = upload_statement(api, books["bank"], _file(currency))
    assert taken.status_code == 201, taken.get_json()


def test_books_without_a_currency_take_a_statement_in_any(api, books):
    for n, currency in enumerate(("USD", "GBP")):
        data = statement_file(line("2026-03-02", -100 - n, "Bakery"), currency=currency)
        assert upload_statement(api, books["bank"], data).status_code == 201
    assert api.get("/books/currency").get_json() == {"currency": None}
