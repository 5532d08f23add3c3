"""The unit-of-work boundary around every view (app/routes/boundary.py): a writing view
the database asks to retry (PostgreSQL deadlock or serialization failure, SQLite
"database is locked") is re-run whole and answers as if nothing happened, with its work
stored once; an upload (@spooled) re-runs only its unit, reading its spooled part again
from the start; a view written the old way (committing itself) still behaves; the CLI
runs through the same runner. Every test runs on SQLite and PostgreSQL."""

from __future__ import annotations

import sqlite3

import psycopg.errors
import pytest
from flask import jsonify
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from app import store
from app.extensions import db
from app.models import Document, OAuthClient, Settings, Statement, User
from app.routes import boundary
from app.services.banking import statements
from app.services.identity import users
from app.services.ledger import documents, settings
from app.services.oauth import clients
from tests.services.banking import stand_in
from tests.testkit import PDF, upload


def _retry_error(dialect):
    if dialect == "postgresql":
        return OperationalError("UPDATE ...", {}, psycopg.errors.DeadlockDetected("deadlock"))
    return OperationalError("UPDATE ...", {}, sqlite3.OperationalError("database is locked"))


def _fails_once(monkeypatch, module, name, dialect):
    """module.name does its real work, then the database asks for a retry, once."""
    real = getattr(module, name)
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        result = real(*args, **kwargs)
        if len(calls) == 1:
            raise _retry_error(dialect)
        return result

    monkeypatch.setattr(module, name, flaky)
    return calls


def _count(app, model, *where):
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(model).where(*where))


def test_put_settings_is_rerun_when_the_database_asks(app, api, monkeypatch, dialect):
    calls = _fails_once(monkeypatch, settings, "update_settings", dialect)
    response = api.put("/settings", json={"book_style": "club"})
    assert response.status_code == 200  # a 500 before the one boundary
    assert response.get_json() == {"book_style": "club"}
    assert len(calls) == 2
    assert api.get("/settings").get_json() == {"book_style": "club"}
    assert _count(app, Settings) == 1


def test_oauth_register_is_rerun_and_registers_once(app, client, monkeypatch, dialect):
    calls = _fails_once(monkeypatch, clients, "register", dialect)
    response = client.post("/oauth/register", json={"redirect_uris": ["https://app.example/cb"]})
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["client_id"].startswith("dyn_")
    assert len(calls) == 2
    # The first attempt's client was rolled back: exactly one is stored.
    assert _count(app, OAuthClient, OAuthClient.dynamic.is_(True)) == 1


def test_a_document_upload_is_rerun_from_its_spooled_part(
    app, api, make_account, post_tx, monkeypatch, dialect
):
    bank, food = make_account("Bank", "asset"), make_account("Food", "expense")
    tx_id = post_tx("2026-03-02", "Lunch", (food, 1200), (bank, -1200)).get_json()["id"]
    calls = _fails_once(monkeypatch, documents, "upload", dialect)
    made = upload(api, tx_id)
    assert made.status_code == 201, made.get_json()
    assert len(calls) == 2
    assert made.get_json()["size"] == len(PDF)
    assert api.get(f"/documents/{made.get_json()['id']}").data == PDF
    assert _count(app, Document) == 1


def test_a_statement_upload_is_rerun_from_its_spooled_part(
    app, api, make_account, monkeypatch, dialect
):
    stand_in.install(monkeypatch)
    bank = make_account("Bank", "asset")
    calls = _fails_once(monkeypatch, statements, "upload", dialect)
    data = stand_in.statement_file(stand_in.line("2026-03-02", 2500, "Ann Member", "REF-1"))
    made = stand_in.upload_statement(api, bank, data)
    # The second attempt reads the whole file again (not the empty rest of the first read).
    assert made.status_code == 201, made.get_json()
    assert len(calls) == 2
    assert [line["amount_cents"] for line in made.get_json()["lines"]] == [2500]
    assert _count(app, Statement) == 1


@pytest.mark.own_app  # it adds a route
def test_a_view_written_the_old_way_still_commits_and_retries(app, api, monkeypatch, dialect):
    """A view that commits itself (store.run_unit / store.commit) inside the boundary."""

    def old_style():
        store.run_unit(settings.update_settings, "club")
        store.commit()
        return jsonify(settings.get_settings())

    app.add_url_rule("/test/old-style", view_func=old_style, methods=["POST"])
    boundary.apply(app)  # as register_blueprints does for every view
    calls = _fails_once(monkeypatch, settings, "update_settings", dialect)
    response = api.post("/test/old-style", json={})
    assert response.status_code == 200
    assert response.get_json() == {"book_style": "club"}
    assert len(calls) == 2  # retried once, by the inner run_unit, not again by the boundary
    assert api.get("/settings").get_json() == {"book_style": "club"}


def test_every_view_runs_in_the_boundary(app):
    assert all(getattr(view, "_unit_boundary", False) for view in app.view_functions.values())


def test_the_cli_runs_through_the_same_runner(app, runner, monkeypatch, dialect):
    calls = _fails_once(monkeypatch, users, "add_user", dialect)
    result = runner.invoke(args=["user", "add", "carol@example.com"])
    assert result.exit_code == 0, result.output
    assert len(calls) == 2
    assert _count(app, User, User.email == "carol@example.com") == 1
