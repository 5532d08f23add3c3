"""Statements and the audit trail, on both stores: the upload and delete events carry
the file's sha256, `verify` passes after postings and matches from a statement and
exits 1 when a stored statement file or a rule changes behind the service, and backup and
restore carry statements, their files and rules across stores (docs/statements.md)."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import text

from app.extensions import db
from tests.services.banking.stand_in import line, statement_file, upload_statement
from tests.testkit import events, restored_backup

pytestmark = pytest.mark.usefixtures("stand_in_reader")


@pytest.fixture
def books(make_account):
    return {"bank": make_account("Bank", "asset"), "food": make_account("Food", "expense")}


def events_of(api, prefix):
    """The trail's events whose action starts with `prefix`, oldest first."""
    return [e for e in events(api, oldest_first=True) if e["action"].startswith(prefix)]


def tamper(app, statement, **params):
    with app.app_context(), db.engine.begin() as conn:
        conn.execute(text(statement), params)


def test_upload_and_delete_are_events_carrying_the_sha256(api, books):
    data = statement_file(line("2026-03-02", -5, "Shop"), line("2026-03-03", -6, "Shop"))
    sid = upload_statement(api, books["bank"], data).get_json()["id"]
    assert api.delete(f"/statements/{sid}").status_code == 204
    uploaded, deleted = events_of(api, "statement.")
    expected = {
        "statement": {
            "id": sid,
            "account_id": books["bank"],
            "format": "ofx",
            "bank_account": "NL91 ABNA 0417 1643 00",
            "currency": None,
            "period_from": None,
            "period_to": None,
            "opening_balance_cents": None,
            "closing_balance_cents": None,
            "closing_balance_on": None,
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "created_at": uploaded["object"]["statement"]["created_at"],
            "lines": 2,
        }
    }
    # The upload carries every line as stored, which verify replays; the deletion
    # carries the statement as it was.
    lines = [
        {
            "line_id": n,
            "booked_on": day,
            "amount_cents": cents,
            "payee": "Shop",
            "memo": None,
            "bank_ref": None,
            "status": "new",
            "transaction_id": None,
        }
        for n, day, cents in ((1, "2026-03-02", -5), (2, "2026-03-03", -6))
    ]
    assert uploaded["action"] == "statement.uploaded"
    assert uploaded["object"] == {**expected, "lines": lines}
    assert deleted["action"] == "statement.deleted" and deleted["object"] == expected


def test_verify_follows_postings_and_matches_and_catches_a_changed_file(
    app, api, books, post_tx, runner
):
    post_tx("2026-03-03", "Shop by hand", (books["bank"], -6), (books["food"], 6))
    data = statement_file(line("2026-03-02", -5, "Shop", "R-1"), line("2026-03-03", -6, "Shop"))
    sid = upload_statement(api, books["bank"], data).get_json()["id"]
    gone = upload_statement(api, books["bank"], statement_file(line("2026-03-09", 1))).get_json()[
        "id"
    ]
    assert api.delete(f"/statements/{gone}").status_code == 204
    done = api.post(
        f"/statements/{sid}/lines",
        json={
            "lines": [
                {"line_id": 1, "action": "post", "account_id": books["food"]},
                {"line_id": 2, "action": "match"},
            ]
        },
    )
    assert done.status_code == 200, done.get_json()
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 0, result.output
    api.get("/audit/head")  # seal

    tamper(app, "UPDATE statements SET content_bytes = :c WHERE id = :i", c=b"forged", i=sid)
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 1
    assert f"statement {sid}" in result.output and "SHA-256" in result.output
    tamper(app, "UPDATE statements SET content_bytes = :c WHERE id = :i", c=data, i=sid)
    assert runner.invoke(args=["verify"]).exit_code == 0

    tamper(app, "UPDATE statements SET sha256 = :h WHERE id = :i", h="0" * 64, i=sid)
    assert runner.invoke(args=["verify"]).exit_code == 1
    tamper(
        app,
        "UPDATE statements SET sha256 = :h WHERE id = :i",
        h=hashlib.sha256(data).hexdigest(),
        i=sid,
    )

    tamper(app, "DELETE FROM statement_lines WHERE statement_id = :i", i=sid)
    tamper(app, "DELETE FROM statements WHERE id = :i", i=sid)
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 1
    assert f"statement {sid}" in result.output and "missing" in result.output


def test_verify_names_a_statement_added_behind_the_service(app, books, runner):
    tamper(
        app,
        "INSERT INTO statements (id, account_id, format, size, sha256, created_at,"
        " content_bytes) VALUES (77, :a, 'ofx', 1, :h, '2026-01-01 00:00:00', :c)",
        a=books["bank"],
        h=hashlib.sha256(b"x").hexdigest(),
        c=b"x",
    )
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 1 and "statement 77 is in the ledger" in result.output


def test_verify_holds_every_rule_to_its_last_event(app, api, books, runner):
    """A rule decides where the bank's lines go, so verify replays rule.created,
    rule.changed and rule.deleted and names a rule changed, added or removed behind
    the service (docs/statements.md, "Checking")."""

    def make(name, payee):
        body = {
            "name": name,
            "counter_account_id": books["food"],
            "conditions": {"payee_is": payee},
        }
        made = api.post("/rules", json=body)
        assert made.status_code == 201, made.get_json()
        return made.get_json()["id"]

    shop, fuel, gone = make("Shop", "Shop"), make("Fuel", "Garage"), make("Gone", "Old")
    assert api.put(f"/rules/{fuel}", json={"priority": 5}).status_code == 200
    assert api.delete(f"/rules/{gone}").status_code == 204
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 0, result.output
    assert ", 2 rules;" in result.output
    api.get("/audit/head")  # seal

    with app.app_context():
        (conditions,) = db.session.execute(
            text("SELECT conditions FROM rules WHERE id = :i"), {"i": shop}
        ).one()
        db.session.rollback()
    for column, forged, put_back in (
        ("conditions", '{"payee_contains":"S"}', conditions),
        ("priority", 1, 100),
        ("active", False, True),
    ):
        tamper(app, f"UPDATE rules SET {column} = :v WHERE id = :i", v=forged, i=shop)
        result = runner.invoke(args=["verify"])
        assert result.exit_code == 1, (column, result.output)
        assert f"rule {shop}: {column} is" in result.output, result.output
        tamper(app, f"UPDATE rules SET {column} = :v WHERE id = :i", v=put_back, i=shop)
        assert runner.invoke(args=["verify"]).exit_code == 0

    tamper(
        app,
        "INSERT INTO rules (id, name, name_key, priority, conditions, counter_account_id,"
        " active, created_at) VALUES (77, 'Sneaky', 'sneaky', 1, :c, :f, :t,"
        " '2026-01-01 00:00:00')",
        c='{"payee_contains":"a"}',
        f=books["food"],
        t=True,
    )
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 1 and "rule 77 is in the ledger" in result.output
    tamper(app, "DELETE FROM rules WHERE id IN (77, :i)", i=fuel)
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 1
    assert f"rule {fuel} (event seq" in result.output and "missing" in result.output


# slow: a restore into a new PostgreSQL database (created, migrated, dropped) takes seconds
@pytest.mark.parametrize("target", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_backup_and_restore_carry_statements_files_and_rules(
    api, books, runner, app_config, tmp_path, target
):
    data = statement_file(line("2026-03-02", -5, "Shop", "R-1"), line("2026-03-03", -6, "Bakery"))
    sid = upload_statement(api, books["bank"], data).get_json()["id"]
    api.post(
        f"/statements/{sid}/lines",
        json={"lines": [{"line_id": 1, "action": "post", "account_id": books["food"]}]},
    )
    made = api.post(
        "/rules",
        json={
            "name": "Bread",
            "counter_account_id": books["food"],
            "conditions": {"payee_is": "bakery"},
        },
    ).get_json()
    before = api.get(f"/statements/{sid}").get_json()
    assert before["lines"][1]["suggestion"]["rule_id"] == made["id"]
    with restored_backup(runner, app_config, tmp_path, target, "ledger_statements_restore_") as (
        restored,
        _,
        _,
    ):
        client = restored.test_client()
        headers = {"Authorization": f"Bearer {api.token}"}
        assert client.get(f"/statements/{sid}", headers=headers).get_json() == before
        assert client.get(f"/statements/{sid}/file", headers=headers).data == data
        assert client.get("/rules", headers=headers).get_json() == [made]
        # The bank reference came along on its entry.
        with restored.app_context():
            refs = db.session.execute(
                text("SELECT bank_ref FROM entries WHERE bank_ref IS NOT NULL")
            ).all()
            assert refs == [("R-1",)]
            db.session.rollback()
            db.engine.dispose()
