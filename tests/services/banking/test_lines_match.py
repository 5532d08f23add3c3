"""Matching a statement line to a transaction: the lock date at its edges
(docs/statements.md, "Acting on the lines"), over HTTP on both stores. Which
transactions are a line's candidates, and when one is certain: test_lines_candidates.py."""

from __future__ import annotations

import pytest

from tests.services.banking.line_steps import act, snapshot, sql
from tests.services.banking.stand_in import line, statement_file, upload_statement

pytestmark = pytest.mark.usefixtures("stand_in_reader")


def by_hand(post_tx, books, day, cents=-1299):
    """A payment of the bank account recorded by hand on `day`: its id."""
    made = post_tx(day, "shop", (books["bank"], cents), (books["food"], -cents))
    assert made.status_code == 201, made.get_json()
    return made.get_json()["id"]


@pytest.mark.parametrize(
    ("tx_day", "line_day"),
    [
        ("2026-03-04", "2026-03-05"),  # the transaction on the lock date, the line after
        ("2026-03-06", "2026-03-04"),  # the line on the lock date, the transaction after
        ("2026-03-02", "2026-03-03"),  # both before it
    ],
)
@pytest.mark.parametrize("named", [False, True], ids=["candidate", "named"])
def test_a_match_on_a_locked_day_is_409_naming_the_line_and_changes_nothing(
    app, api, books, post_tx, tx_day, line_day, named
):
    """Locked through 2026-03-04, neither the transaction's day nor the line's may be on
    or before it: a match clears an entry for that bank line, as a post would book it,
    and a locked month's bank lines are what its reconciliation saw."""
    tx_id = by_hand(post_tx, books, tx_day)
    body = upload_statement(
        api,
        books["bank"],
        statement_file(line("2026-03-09", 700, "Other"), line(line_day, -1299, "Shop", "R-1")),
    ).get_json()
    assert (body["lines"][1]["status"], body["lines"][1]["transaction_id"]) == ("match", tx_id)
    sql(app, "UPDATE settings SET locked_through = '2026-03-04'")
    before = snapshot(app)
    matched = {"line_id": 2, "action": "match"}
    if named:
        matched["transaction_id"] = tx_id
    refused = act(api, body["id"], {"line_id": 1, "action": "ignore"}, matched)
    assert refused.status_code == 409, refused.get_json()
    error = refused.get_json()["error"]
    assert error.startswith("line 2: the books are locked through 2026-03-04"), error
    assert snapshot(app) == before
    # Unlocked, the same request is done.
    sql(app, "UPDATE settings SET locked_through = NULL")
    done = act(api, body["id"], {"line_id": 1, "action": "ignore"}, matched)
    assert done.status_code == 200, done.get_json()
    assert done.get_json()["lines"][1]["status"] == "matched"


def test_a_match_the_day_after_the_lock_date_is_done(app, api, books, post_tx):
    tx_id = by_hand(post_tx, books, "2026-03-05")
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-03-05", -1299, "Shop", "R-1"))
    ).get_json()["id"]
    sql(app, "UPDATE settings SET locked_through = '2026-03-04'")
    done = act(api, sid, {"line_id": 1, "action": "match", "transaction_id": tx_id})
    assert done.status_code == 200, done.get_json()
    assert done.get_json()["lines"][0]["status"] == "matched"
