"""Issues 19 and 20 together: every change of the books at scale (rename, archive,
cleared marks, reconciliation) is one audit event that `verify` replays; the lock date
also stops clearing and reconciling; tampering with the new columns is caught. Both
stores."""

from __future__ import annotations

import hashlib
import json

import pytest
from sqlalchemy import text

from app.extensions import db

LOCKED = "2026-01-31"


@pytest.fixture
def person(api, session_client):
    """alice's full cookie session (the bearer `api` is alice too)."""
    return session_client(mfa_complete=True)


def run_verify(runner):
    result = runner.invoke(args=["verify"])
    return result.exit_code, result.output.strip()


def sql(app, statement, **params):
    with app.app_context(), db.engine.begin() as conn:
        conn.execute(text(statement), params)


def register(api, account):
    response = api.get(f"/accounts/{account}/register")
    assert response.status_code == 200, response.get_json()
    return response.get_json()


@pytest.fixture
def lived_in(api, make_account, post_tx):
    """Books that went through every kind of change issue 20 added."""
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    old = make_account("old box", "asset")
    january = post_tx("2026-01-10", "January shop", (food, 1500), (bank, -1500)).get_json()["id"]
    february = post_tx("2026-02-10", "February shop", (food, 700), (bank, -700)).get_json()["id"]
    assert api.put(f"/accounts/{old}", json={"name": "Cash box"}).status_code == 200
    assert api.put(f"/accounts/{old}", json={"archived": True}).status_code == 200
    assert api.put(f"/accounts/{old}", json={"archived": False}).status_code == 200
    assert api.put(f"/accounts/{old}", json={"archived": True}).status_code == 200
    entries = {item["transaction_id"]: item["entry_id"] for item in register(api, bank)["items"]}
    cleared = api.post(
        f"/accounts/{bank}/cleared",
        json={"entry_ids": [entries[january], entries[february]], "cleared": True},
    )
    assert cleared.status_code == 204
    uncleared = api.post(
        f"/accounts/{bank}/cleared", json={"entry_ids": [entries[february]], "cleared": False}
    )
    assert uncleared.status_code == 204
    # Bank is an asset: its balance is the raw sum, -15.00 after the January shop.
    reconciled = api.post(
        f"/accounts/{bank}/reconciliations",
        json={"statement_date": "2026-01-31", "closing_balance_cents": -1500},
    )
    assert reconciled.status_code == 201, reconciled.get_json()
    return {
        "bank": bank,
        "food": food,
        "old": old,
        "january": january,
        "february": february,
        "entries": entries,
    }


def test_every_change_is_one_event_and_verify_replays_them(runner, api, person, lived_in):
    assert person.put("/books/lock", json={"locked_through": LOCKED}).status_code == 200
    code, output = run_verify(runner)
    assert code == 0, output

    events = api.get("/audit?limit=500").get_json()["items"]
    actions = [event["action"] for event in reversed(events)]
    assert actions == [
        "account.created",
        "account.created",
        "account.created",
        "transaction.posted",
        "transaction.posted",
        "account.renamed",
        "account.archived",
        "account.unarchived",
        "account.archived",
        "entries.cleared",
        "entries.cleared",
        "entries.reconciled",
        "books.locked",
    ]
    by_action = {event["action"]: event for event in events}
    assert by_action["account.renamed"]["object"]["previous_name"] == "old box"
    assert by_action["account.renamed"]["object"]["account"]["name"] == "Cash box"
    assert by_action["entries.reconciled"]["object"]["entry_ids"] == [
        lived_in["entries"][lived_in["january"]]
    ]
    assert by_action["books.locked"]["object"] == {"locked_through": LOCKED, "previous": None}
    assert by_action["books.locked"]["via"] == "web"
    assert by_action["entries.cleared"]["via"] == "api"

    # The chain recomputes from what is served, whatever the action.
    previous = "0" * 64
    for event in reversed(events):
        body = {k: v for k, v in event.items() if k != "hash"}
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert event["hash"] == hashlib.sha256((previous + canonical).encode()).hexdigest()
        previous = event["hash"]


def test_the_lock_stops_clearing_and_reconciling_too(api, person, lived_in):
    bank, entries = lived_in["bank"], lived_in["entries"]
    assert person.put("/books/lock", json={"locked_through": "2026-02-28"}).status_code == 200
    before = register(api, bank)

    refused = api.post(
        f"/accounts/{bank}/cleared",
        json={"entry_ids": [entries[lived_in["february"]]], "cleared": True},
    )
    assert refused.status_code == 409
    assert "2026-02-28" in refused.get_json()["error"]
    refused = api.post(
        f"/accounts/{bank}/reconciliations",
        json={"statement_date": "2026-02-28", "closing_balance_cents": -1500},
    )
    assert refused.status_code == 409
    assert "2026-02-28" in refused.get_json()["error"]
    assert register(api, bank) == before  # nothing changed

    # After the lock, both go on as before.
    assert person.put("/books/lock", json={"locked_through": "2026-01-31"}).status_code == 200
    allowed = api.post(
        f"/accounts/{bank}/cleared",
        json={"entry_ids": [entries[lived_in["february"]]], "cleared": True},
    )
    assert allowed.status_code == 204


def test_an_archived_account_refuses_postings_and_verify_knows_it(
    runner, app, api, post_tx, lived_in
):
    refused = post_tx(
        "2026-03-01", "into the old box", (lived_in["old"], 100), (lived_in["bank"], -100)
    )
    assert refused.status_code == 400
    assert "archived" in refused.get_json()["error"]

    sql(app, "UPDATE accounts SET archived = :no WHERE id = :a", no=False, a=lived_in["old"])
    code, output = run_verify(runner)
    assert code == 1
    assert f"account {lived_in['old']}" in output and "archived" in output, output


@pytest.mark.parametrize("column", ["cleared", "reconciled"])
def test_a_cleared_or_reconciled_mark_changed_by_sql_is_named(runner, app, lived_in, column):
    entry = lived_in["entries"][lived_in["february"]]
    marks = "cleared = :yes" if column == "cleared" else "cleared = :yes, reconciled = :yes"
    sql(app, f"UPDATE entries SET {marks} WHERE id = :e", yes=True, e=entry)
    code, output = run_verify(runner)
    assert code == 1
    assert f"entry {entry}" in output, output
