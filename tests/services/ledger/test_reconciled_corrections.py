"""Corrections of reconciled transactions (docs/ledger.md): `replaces` naming a
transaction with reconciled entries is accepted when the replacement keeps its date and,
for every reconciled entry, an entry of the same account and amount, which stays
reconciled; any other correction of it is 409 with nothing stored. An adjustment's
`adjusts` link travels in its event. HTTP and the record_transaction tool, both stores."""

from __future__ import annotations

import pytest

from app.models import Reconciliation
from tests.services.ledger.correction_steps import body, ids, post, posted, reconcile
from tests.testkit import events, row_count


@pytest.fixture
def books(make_account):
    return {
        "bank": make_account("Bank", "asset"),
        "card": make_account("Card", "liability"),
        "hall": make_account("Hall hire", "expense"),
        "food": make_account("Food", "expense"),
    }


def register(api, account_id) -> dict:
    return api.get(f"/accounts/{account_id}/register").get_json()


def bank_item(api, books, tx_id) -> dict:
    return next(i for i in register(api, books["bank"])["items"] if i["transaction_id"] == tx_id)


def corrected(books, original, hall="food", description="Room hire", cents=6098, day=None):
    """A correction of the reconciled 60.98 hall hire: `hall` names the cost account."""
    out = body(books, cents=cents, description=description, replaces=original)
    out["entries"][0]["account_id"] = books[hall]
    if day is not None:
        out["occurred_on"] = day
    return out


def test_a_correction_keeping_the_reconciled_entry_keeps_it_reconciled(app, api, books, runner):
    original = posted(api, books)
    reconcile(api, books["bank"], original)
    before = register(api, books["bank"])
    response = post(api, corrected(books, original))
    assert response.status_code == 201, response.get_json()
    new_id = response.get_json()["id"]
    assert ids(api) == [new_id]
    (listed,) = api.get("/transactions").get_json()
    assert listed["description"] == "Room hire"
    assert [e["account_id"] for e in listed["entries"]] == [books["food"], books["bank"]]

    item = bank_item(api, books, new_id)
    assert item["reconciled"] is True and item["cleared"] is True
    after = register(api, books["bank"])
    assert after["balance_cents"] == before["balance_cents"] == -6098
    assert after["cleared_balance_cents"] == before["cleared_balance_cents"] == -6098
    assert row_count(app, Reconciliation) == 1
    # The statement's figure still holds: the next statement reconciles on top of it.
    again = api.post(
        f"/accounts/{books['bank']}/reconciliations",
        json={"statement_date": "2026-03-31", "closing_balance_cents": -6098},
    )
    assert again.status_code == 201 and again.get_json()["entries"] == []

    posting, deletion = [
        e for e in events(api, oldest_first=True) if e["action"].startswith("transaction.")
    ][-2:]
    assert posting["object"]["replaces"] == original
    assert posting["object"]["kept_reconciled"] == [item["entry_id"]]
    assert deletion["object"]["transaction"]["id"] == original

    # Corrected once more (still keeping the bank entry), then verify replays it all.
    twice = post(api, corrected(books, new_id, hall="hall", description="Hall hire (Feb)"))
    assert twice.status_code == 201, twice.get_json()
    assert bank_item(api, books, twice.get_json()["id"])["reconciled"] is True
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 0, result.output


def test_a_split_may_change_around_the_kept_entry(api, books):
    original = posted(api, books)
    reconcile(api, books["bank"], original)
    split = corrected(books, original)
    split["entries"][0]["amount_cents"] = 4000
    split["entries"].insert(1, {"account_id": books["hall"], "amount_cents": 2098})
    response = post(api, split)
    assert response.status_code == 201, response.get_json()
    assert bank_item(api, books, response.get_json()["id"])["reconciled"] is True


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"day": "2026-02-11"}, "2026-02-10"),  # the date moved
        ({"cents": 6100}, "amount"),  # the amount the bank saw changed
        ({"bank": "card"}, "account"),  # the reconciled account dropped
    ],
)
def test_any_other_correction_of_a_reconciled_transaction_is_409(app, api, books, change, needle):
    original = posted(api, books)
    reconcile(api, books["bank"], original)
    trail = len(events(api))
    payload = corrected(books, original, cents=change.get("cents", 6098), day=change.get("day"))
    if "bank" in change:
        payload["entries"][1]["account_id"] = books[change["bank"]]
    response = post(api, payload)
    assert response.status_code == 409, response.get_json()
    assert needle in response.get_json()["error"]
    assert ids(api) == [original]
    assert len(events(api)) == trail
    assert bank_item(api, books, original)["reconciled"] is True


def test_the_tool_shares_the_rule(api, rpc, books):
    original = rpc.result("record_transaction", body(books))["id"]
    reconcile(api, books["bank"], original)
    refused = rpc.call("record_transaction", corrected(books, original, cents=6100))
    assert refused["error"]["code"] == -32602 and "amount" in refused["error"]["message"]
    result = rpc.result("record_transaction", corrected(books, original))
    assert result["replaced"] == original
    assert bank_item(api, books, result["id"])["reconciled"] is True


def test_an_adjustment_names_the_transaction_it_adjusts(app, api, books, runner):
    original = posted(api, books)
    reconcile(api, books["bank"], original)
    adjustment = body(books, cents=2, description="Bank charged 0.02 more")
    response = post(api, adjustment | {"adjusts": original})
    assert response.status_code == 201, response.get_json()
    posting = events(api, "transaction.posted")[0]
    assert posting["object"]["adjusts"] == original
    assert posting["object"]["transaction"]["id"] == response.get_json()["id"]
    for bad, needle in ((0, "positive integer"), ("1", "positive integer"), (999_999, "999999")):
        refused = post(api, adjustment | {"adjusts": bad})
        assert refused.status_code == 400 and "'adjusts'" in refused.get_json()["error"]
        assert needle in refused.get_json()["error"]
    assert len(ids(api)) == 2
    result = runner.invoke(args=["verify"])  # the event as hashed (PostgreSQL: built in SQL)
    assert result.exit_code == 0, result.output


def clear(api, books, tx_id, account="bank"):
    entry = next(
        i["entry_id"]
        for i in register(api, books[account])["items"]
        if i["transaction_id"] == tx_id
    )
    done = api.post(
        f"/accounts/{books[account]}/cleared", json={"entry_ids": [entry], "cleared": True}
    )
    assert done.status_code == 204, done.get_json()


def test_a_cleared_entry_keeps_its_mark_through_a_correction(api, rpc, books, runner):
    """docs/ledger.md, "Corrections of cleared transactions": an entry cleared by hand
    (no reconciliation yet) stays cleared in the replacement's entry of the same
    account and amount, on another date too, over HTTP and through the tool; one whose
    amount changed is not carried; an entry that was not cleared is not cleared by
    being corrected."""
    original = posted(api, books)
    clear(api, books, original)
    moved = post(api, corrected(books, original, day="2026-02-14"))
    assert moved.status_code == 201, moved.get_json()
    first = moved.get_json()["id"]
    item = bank_item(api, books, first)
    assert (item["cleared"], item["reconciled"]) == (True, False)
    assert register(api, books["bank"])["cleared_balance_cents"] == -6098
    # The cost side was never cleared and stays so.
    hall = [i for i in register(api, books["food"])["items"] if i["transaction_id"] == first]
    assert [i["cleared"] for i in hall] == [False]

    second = rpc.result("record_transaction", corrected(books, first, hall="hall"))["id"]
    assert bank_item(api, books, second)["cleared"] is True
    posting = events(api, "transaction.posted")[0]
    assert posting["object"]["kept_cleared"] == [bank_item(api, books, second)["entry_id"]]
    result = runner.invoke(args=["verify"])  # the carried mark, replayed from the event
    assert result.exit_code == 0, result.output

    third = post(api, corrected(books, second, cents=6100)).get_json()["id"]
    assert bank_item(api, books, third)["cleared"] is False
    assert register(api, books["bank"])["cleared_balance_cents"] == 0
    assert "kept_cleared" not in events(api, "transaction.posted")[0]["object"]

    fourth = post(api, corrected(books, third, cents=6100)).get_json()["id"]
    assert bank_item(api, books, fourth)["cleared"] is False
