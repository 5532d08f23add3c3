"""The books' currency (docs/ledger.md, "The books' currency"): GET and PUT
/books/currency, by a token or a cookie session, one audit event per change that
`verify` replays; the exports' commodity (USD while none is set)."""

from __future__ import annotations

import io
import zipfile

import pytest
from sqlalchemy import text

from app.extensions import db
from tests.testkit import restored_backup


def currency_events(api, action="books.currency_set") -> list[dict]:
    return api.get(f"/audit?action={action}&limit=50").get_json()["items"]


def test_null_until_set_then_the_code_set_by_a_token(api):
    assert api.get("/books/currency").get_json() == {"currency": None}
    put = api.put("/books/currency", json={"currency": "EUR"})
    assert put.status_code == 200
    assert put.get_json() == {"currency": "EUR"}
    assert api.get("/books/currency").get_json() == {"currency": "EUR"}
    [event] = currency_events(api)
    assert event["object"] == {"currency": "EUR", "previous": None}
    assert event["via"] == "api"
    # The same code again changes nothing and records nothing; another is one event.
    assert api.put("/books/currency", json={"currency": "EUR"}).status_code == 200
    assert len(currency_events(api)) == 1
    assert api.put("/books/currency", json={"currency": "CHF"}).get_json() == {"currency": "CHF"}
    assert currency_events(api)[0]["object"] == {"currency": "CHF", "previous": "EUR"}


def test_a_cookie_session_sets_it_too(session_client):
    client = session_client()
    put = client.put("/books/currency", json={"currency": "GBP"})
    assert put.status_code == 200, put.get_json()
    assert client.get("/books/currency").get_json() == {"currency": "GBP"}
    [event] = client.get("/audit?action=books.currency_set").get_json()["items"]
    assert event["via"] == "web"


@pytest.mark.parametrize(
    "body",
    [
        {"currency": "eur"},
        {"currency": "Eur"},
        {"currency": "EURO"},
        {"currency": "EU"},
        {"currency": "E1R"},
        {"currency": "EUR\n"},
        {"currency": " EUR"},
        {"currency": "ÉUR"},
        {"currency": ""},
        {"currency": None},
        {"currency": 978},
        {"currency": ["EUR"]},
        {},
    ],
)
def test_anything_but_three_capital_letters_is_400_naming_the_field(api, body):
    api.put("/books/currency", json={"currency": "EUR"})
    refused = api.put("/books/currency", json=body)
    assert refused.status_code == 400
    assert set(refused.get_json()) == {"error"}
    assert "currency" in refused.get_json()["error"]
    assert api.get("/books/currency").get_json() == {"currency": "EUR"}
    assert len(currency_events(api)) == 1


def test_unauthenticated_is_401_and_changes_nothing(client, api):
    assert client.put("/books/currency", json={"currency": "EUR"}).status_code == 401
    assert client.get("/books/currency").status_code == 401
    assert api.get("/books/currency").get_json() == {"currency": None}


def _books(make_account, post_tx):
    bank, food = make_account("Bank", "asset"), make_account("Food", "expense")
    post_tx("2026-01-02", "bread", (food, 250), (bank, -250))
    post_tx("2026-02-03", "milk", (food, 120), (bank, -120))


def _amount_lines(body: str) -> list[str]:
    return [line for line in body.splitlines() if line.startswith("    ") or line.startswith("  ")]


def test_the_exports_write_the_books_currency_and_usd_until_it_is_set(api, make_account, post_tx):
    _books(make_account, post_tx)

    def export(fmt, **window):
        query = "&".join(f"{k}={v}" for k, v in window.items())
        response = api.get(f"/export?format={fmt}&{query}")
        assert response.status_code == 200
        return response.get_data(as_text=True)

    for code in ("USD", "EUR"):
        journal = export("hledger", **{"from": "2026-02-01"})  # with the opening transaction
        amounts = [line for line in _amount_lines(journal) if line.strip()]
        assert len(amounts) == 4  # the opening's two (Bank, retained earnings), milk's two
        assert all(line.endswith(f" {code}") for line in amounts), journal
        beancount = export("beancount")
        assert f'option "operating_currency" "{code}"' in beancount
        opens = [line for line in beancount.splitlines() if " open " in line]
        assert opens and all(line.endswith(f" {code}") for line in opens)
        postings = [
            line
            for line in beancount.splitlines()
            if line.startswith("  ") and "  " in line.strip()
        ]
        assert postings and all(line.endswith(f" {code}") for line in postings)
        pack = api.get("/export?format=audit-pack").get_data()
        with zipfile.ZipFile(io.BytesIO(pack)) as zipped:
            pack_journal = zipped.read("books.journal").decode()
        pack_amounts = [line for line in _amount_lines(pack_journal) if line.strip()]
        assert len(pack_amounts) == 4
        assert all(line.endswith(f" {code}") for line in pack_amounts)
        if code == "EUR":
            assert "USD" not in journal + beancount + pack_journal
        api.put("/books/currency", json={"currency": "EUR"})


def run_verify(runner):
    result = runner.invoke(args=["verify"])
    return result.exit_code, result.output.strip()


def test_verify_replays_the_currency_and_names_one_changed_behind_the_service(app, api, runner):
    assert api.put("/books/currency", json={"currency": "EUR"}).status_code == 200
    api.get("/audit/head")  # sealed into the chain (PostgreSQL)
    code, output = run_verify(runner)
    assert code == 0, output
    with app.app_context(), db.engine.begin() as conn:
        conn.execute(text("UPDATE settings SET currency = 'USD' WHERE id = 1"))
    code, output = run_verify(runner)
    assert code == 1
    assert "currency is USD in the ledger but EUR after event seq 1" in output, output


# slow: a restore into a new PostgreSQL database (created, migrated, dropped) takes seconds
@pytest.mark.parametrize("target", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_a_backup_carries_the_currency_and_the_restore_verifies(
    runner, api, app_config, tmp_path, target
):
    assert api.put("/books/currency", json={"currency": "JPY"}).status_code == 200
    with restored_backup(runner, app_config, tmp_path, target, "ledger_currency_restore_") as (
        restored,
        _cli,
        _verified,
    ):
        client = restored.test_client()
        headers = {"Authorization": f"Bearer {api.token}"}
        assert client.get("/books/currency", headers=headers).get_json() == {"currency": "JPY"}
        with restored.app_context():
            db.session.remove()
            db.engine.dispose()
