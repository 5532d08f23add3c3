"""Undoing a posted, matched or ignored statement line (docs/statements.md, "Acting on
the lines"): the line waits again, what it did to the books is taken back, and a
reconciled or locked transaction refuses, over HTTP on both stores."""

from __future__ import annotations

import pytest

from tests.services.banking.line_steps import act, snapshot, sql
from tests.services.banking.stand_in import line, statement_file, upload_statement

pytestmark = pytest.mark.usefixtures("stand_in_reader")


def three_lines(api, books, post_tx, **header):
    """A statement whose lines are posted, matched and ignored: (its id, the
    transaction posted, the one matched)."""
    typed = post_tx("2026-03-03", "Shop by hand", (books["bank"], -600), (books["food"], 600))
    typed = typed.get_json()["id"]
    data = statement_file(
        line("2026-03-02", -500, "Gym", "R-1"),
        line("2026-03-03", -600, "Shop", "R-2"),
        line("2026-03-04", -700, "Cafe", "R-3"),
        **header,
    )
    sid = upload_statement(api, books["bank"], data).get_json()["id"]
    done = act(
        api,
        sid,
        {"line_id": 1, "action": "post", "account_id": books["food"]},
        {"line_id": 2, "action": "match"},
        {"line_id": 3, "action": "ignore"},
    )
    assert done.status_code == 200, done.get_json()
    lines = done.get_json()["lines"]
    assert [x["status"] for x in lines] == ["posted", "matched", "ignored"]
    return sid, lines[0]["transaction_id"], typed


def bank_entry(app, tx_id):
    return tuple(
        sql(
            app,
            "SELECT e.cleared, e.bank_ref FROM entries e JOIN accounts a ON a.id = e.account_id"
            " WHERE e.transaction_id = :t AND a.name = 'Bank'",
            t=tx_id,
        )[0]
    )


def events_of(api, action):
    items = api.get("/audit?limit=200").get_json()["items"]
    return [e for e in items if e["action"] == action]


def test_undo_takes_back_a_posting_a_match_and_an_ignore(app, api, books, post_tx):
    sid, posted, typed = three_lines(api, books, post_tx)
    assert bank_entry(app, typed) in ((True, "R-2"), (1, "R-2"))
    undone = act(
        api,
        sid,
        {"line_id": 1, "action": "undo"},
        {"line_id": 2, "action": "undo"},
        {"line_id": 3, "action": "undo"},
    )
    assert undone.status_code == 200, undone.get_json()
    lines = undone.get_json()["lines"]
    # Waiting again, worked out as at upload: the typed payment is line 2's match.
    assert [(x["status"], x["transaction_id"]) for x in lines] == [
        ("new", None),
        ("match", typed),
        ("new", None),
    ]
    # The posting is deleted through the ledger (its own event); the match's entry
    # is no longer cleared and gave its bank reference back; the typed one stays.
    assert sql(app, "SELECT count(*) FROM transactions WHERE id = :t", t=posted) == [(0,)]
    assert [e["object"]["transaction"]["id"] for e in events_of(api, "transaction.deleted")] == [
        posted
    ]
    assert bank_entry(app, typed) in ((False, None), (0, None))
    assert (
        sql(app, "SELECT status, transaction_id FROM statement_lines ORDER BY line_id")
        == [("new", None)] * 3
    )
    # One event per line, saying what was undone.
    by_line = {
        e["object"]["line"]["line_id"]: e["object"] for e in events_of(api, "statement_line.undone")
    }
    assert by_line[2] == {
        "line": {
            "statement_id": sid,
            "line_id": 2,
            "booked_on": "2026-03-03",
            "amount_cents": -600,
            "payee": "Shop",
            "memo": None,
            "bank_ref": "R-2",
            "status": "new",
            "transaction_id": None,
        },
        "undone": {
            "status": "matched",
            "transaction_id": typed,
            "entry_id": by_line[2]["undone"]["entry_id"],
        },
    }
    assert by_line[2]["undone"]["entry_id"] is not None
    assert by_line[1]["undone"]["status"] == "posted"
    assert by_line[1]["undone"]["transaction_id"] == posted
    assert by_line[3]["undone"] == {"status": "ignored", "transaction_id": None, "entry_id": None}
    # The lines may be filed again.
    again = act(
        api,
        sid,
        {"line_id": 1, "action": "post", "account_id": books["food"]},
        {"line_id": 2, "action": "match"},
    )
    assert again.status_code == 200, again.get_json()
    assert bank_entry(app, typed) in ((True, "R-2"), (1, "R-2"))


def test_only_a_posted_matched_or_ignored_line_is_undone(app, api, books):
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", -500, "Gym", "R-1"))
    ).get_json()["id"]
    before = snapshot(app)
    refused = act(api, sid, {"line_id": 1, "action": "undo"})
    assert refused.status_code == 409, refused.get_json()
    assert refused.get_json()["error"].startswith("line 1: "), refused.get_json()
    assert snapshot(app) == before


@pytest.mark.parametrize("line_id", [1, 2], ids=["posted", "matched"])
def test_undo_of_a_reconciled_transaction_is_409_naming_the_line(app, api, books, post_tx, line_id):
    sid, _, _ = three_lines(
        api, books, post_tx, closing_balance_cents=-1100, closing_balance_on="2026-03-31"
    )
    assert api.post(f"/statements/{sid}/reconcile").status_code == 201
    before = snapshot(app)
    refused = act(
        api, sid, {"line_id": 3, "action": "undo"}, {"line_id": line_id, "action": "undo"}
    )
    assert refused.status_code == 409, refused.get_json()
    error = refused.get_json()["error"]
    assert error.startswith(f"line {line_id}: ") and "reconciled" in error, error
    assert snapshot(app) == before


@pytest.mark.parametrize("line_id", [1, 2], ids=["posted", "matched"])
def test_undo_on_or_before_the_lock_date_is_409_naming_the_line(app, api, books, post_tx, line_id):
    sid, _, _ = three_lines(api, books, post_tx)
    sql(app, "UPDATE settings SET locked_through = '2026-03-03'")
    before = snapshot(app)
    refused = act(api, sid, {"line_id": line_id, "action": "undo"})
    assert refused.status_code == 409, refused.get_json()
    error = refused.get_json()["error"]
    assert error.startswith(f"line {line_id}: the books are locked through 2026-03-03"), error
    assert snapshot(app) == before
    # Ignoring touched no books: undone whatever the lock date.
    assert act(api, sid, {"line_id": 3, "action": "undo"}).status_code == 200
