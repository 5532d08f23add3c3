"""Many entries cleared in one request are one change: one audit event (docs/web.md,
"The month's work: import and reconcile"; openapi `POST /accounts/{id}/cleared`). The web app's
"tick everything up to this date" sends one such request, so a month of ticks is one
line of the trail, and `ledger-service verify` replays it. Trails written before, with
one event per ticked entry, still verify. Both stores."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from app.extensions import db
from tests.testkit import events


@pytest.fixture
def month(make_account, post_tx):
    """A bank with eight January dues, entry ids of the bank side in date order."""
    bank = make_account("Bank", "asset")
    dues = make_account("Dues", "income")
    tx_ids = [
        post_tx(
            f"2026-01-{day:02d}", f"dues {day}", (bank, 1000 + day), (dues, -1000 - day)
        ).get_json()["id"]
        for day in range(1, 9)
    ]
    return {"bank": bank, "dues": dues, "tx": tx_ids}


def bank_entries(api, bank):
    items = api.get(f"/accounts/{bank}/register?limit=100").get_json()["items"]
    return [i["entry_id"] for i in sorted(items, key=lambda i: i["occurred_on"])]


def verify(runner):
    result = runner.invoke(args=["verify"])
    return result.exit_code, result.output.strip()


def test_many_entries_cleared_at_once_are_one_event_that_verify_replays(api, runner, month):
    ids = bank_entries(api, month["bank"])
    before = api.get("/audit/head").get_json()["seq"]

    r = api.post(f"/accounts/{month['bank']}/cleared", json={"entry_ids": ids, "cleared": True})

    assert r.status_code == 204
    head = api.get("/audit/head").get_json()["seq"]
    assert head == before + 1  # one change, one event, however many entries
    (event,) = events(api, "entries.cleared")
    assert event["seq"] == head
    assert event["object"] == {"account_id": month["bank"], "entry_ids": ids, "cleared": True}
    body = api.get(f"/accounts/{month['bank']}/register").get_json()
    assert all(i["cleared"] for i in body["items"])
    assert body["cleared_balance_cents"] == sum(1000 + d for d in range(1, 9))
    code, output = verify(runner)
    assert code == 0, output

    # Unticking several at once is one event too; the replay follows both.
    untick = {"entry_ids": ids[:3], "cleared": False}
    r = api.post(f"/accounts/{month['bank']}/cleared", json=untick)
    assert r.status_code == 204
    assert api.get("/audit/head").get_json()["seq"] == head + 1
    code, output = verify(runner)
    assert code == 0, output


def test_one_event_per_entry_trails_still_verify(api, runner, month):
    """Entries ticked one by one (as the web app did before): one event each, verified."""
    ids = bank_entries(api, month["bank"])
    for entry_id in ids[:4]:
        r = api.post(
            f"/accounts/{month['bank']}/cleared", json={"entry_ids": [entry_id], "cleared": True}
        )
        assert r.status_code == 204
    ticked = [e["object"]["entry_ids"] for e in reversed(events(api, "entries.cleared"))]
    assert ticked == [[i] for i in ids[:4]]
    code, output = verify(runner)
    assert code == 0, output


def test_a_batch_changed_behind_the_service_is_caught(app, api, runner, month):
    ids = bank_entries(api, month["bank"])
    api.post(f"/accounts/{month['bank']}/cleared", json={"entry_ids": ids, "cleared": True})
    with app.app_context(), db.engine.begin() as conn:
        conn.execute(text("UPDATE entries SET cleared = false WHERE id = :id"), {"id": ids[5]})
    code, output = verify(runner)
    assert code == 1
    assert str(ids[5]) in output


def test_a_refused_batch_writes_no_event_and_clears_nothing(api, runner, month):
    ids = bank_entries(api, month["bank"])
    dues_entry = api.get(f"/accounts/{month['dues']}/register").get_json()["items"][0]["entry_id"]
    before = api.get("/audit/head").get_json()["seq"]

    batch = {"entry_ids": ids + [dues_entry], "cleared": True}
    r = api.post(f"/accounts/{month['bank']}/cleared", json=batch)

    assert r.status_code == 400
    assert str(dues_entry) in r.get_json()["error"]
    assert api.get("/audit/head").get_json()["seq"] == before
    assert events(api, "entries.cleared") == []
    assert api.get(f"/accounts/{month['bank']}/register").get_json()["cleared_balance_cents"] == 0
    code, output = verify(runner)
    assert code == 0, output
