"""Duplicates a bank reference cannot tell (docs/statements.md, "What each line's status
means"): a line without a reference that earlier statements of the account already
filed, counted alike line by alike line, and a line whose reference and amount an
earlier statement's line had and was ignored; over HTTP on both stores."""

from __future__ import annotations

import pytest

from tests.services.banking.line_steps import act
from tests.services.banking.stand_in import line, statement_file, upload_statement

pytestmark = pytest.mark.usefixtures("stand_in_reader")


def coffee(memo="card 1234"):
    return line("2026-03-04", -350, "Cafe", memo=memo)


def sent(api, books, *lines, **header):
    made = upload_statement(api, books["bank"], statement_file(*lines, **header))
    assert made.status_code == 201, made.get_json()
    return made.get_json()


def states(body):
    return [(x["status"], x["transaction_id"]) for x in body["lines"]]


def test_alike_lines_without_a_reference_count_one_for_one(api, books):
    """Three coffees of one day in March's file: one posted, one ignored, one still
    waiting. The overlapping file of March and April holds the three again: two were
    filed before, so the first two are duplicates and the third is not (the waiting one
    was never filed); a coffee with another memo is no duplicate."""
    march = sent(api, books, coffee(), coffee(), coffee(), period_to="2026-03-31")
    done = act(
        api,
        march["id"],
        {"line_id": 1, "action": "post", "account_id": books["food"]},
        {"line_id": 2, "action": "ignore"},
    )
    assert done.status_code == 200, done.get_json()
    spring = sent(
        api,
        books,
        coffee(),
        coffee(),
        coffee(),
        coffee(memo="card 9999"),
        period_to="2026-04-30",
    )
    assert [x["status"] for x in spring["lines"]] == ["duplicate", "duplicate", "new", "new"]
    assert [x["transaction_id"] for x in spring["lines"]] == [None] * 4
    # Read again, the same: a stored duplicate stays, the waiting line is not one.
    assert states(api.get(f"/statements/{spring['id']}").get_json()) == states(spring)
    refused = act(api, spring["id"], {"line_id": 1, "action": "ignore"})
    assert refused.status_code == 409, refused.get_json()


def test_a_reference_ignored_before_is_a_duplicate_until_the_ignore_is_undone(api, books):
    march = sent(
        api, books, line("2026-03-05", -700, "Transfer", "X-1"), line("2026-03-06", -1, "Fee")
    )
    # Uploaded before March's line is ignored: waiting, and worked out on each read.
    waiting = sent(api, books, line("2026-03-05", -700, "Transfer", "X-1"), period_to="2026-04-30")
    assert states(waiting) == [("new", None)]
    assert act(api, march["id"], {"line_id": 1, "action": "ignore"}).status_code == 200
    later = sent(
        api,
        books,
        line("2026-03-05", -700, "Transfer", "X-1"),
        line("2026-03-05", -800, "Transfer", "X-1"),  # another amount: not that line
        period_to="2026-05-31",
    )
    assert states(later) == [("duplicate", None), ("new", None)]
    assert later["lines"][0]["candidates"] == []
    assert states(api.get(f"/statements/{waiting['id']}").get_json()) == [("duplicate", None)]
    # The ignore undone, March's line waits again: the waiting line is no duplicate of
    # it any more; the one stored as a duplicate at upload stays one.
    undone = act(api, march["id"], {"line_id": 1, "action": "undo"})
    assert undone.status_code == 200, undone.get_json()
    assert states(api.get(f"/statements/{waiting['id']}").get_json()) == [("new", None)]
    assert states(api.get(f"/statements/{later['id']}").get_json())[0] == ("duplicate", None)
