"""A waiting line's candidates and its certain `match` (docs/statements.md, "What each
line's status means"): the words, the window (60 days back, 7 forward) and the 3 days
of a line without words at their edges, the ranking, over HTTP on both stores."""

from __future__ import annotations

import pytest

from tests.services.banking.line_steps import act, sql
from tests.services.banking.stand_in import line, statement_file, upload_statement

pytestmark = pytest.mark.usefixtures("stand_in_reader")


def recorded(post_tx, books, day, description, cents=-1500):
    """A payment of the bank account recorded by hand: its id."""
    made = post_tx(day, description, (books["bank"], cents), (books["food"], -cents))
    assert made.status_code == 201, made.get_json()
    return made.get_json()["id"]


def filed(api, books, *lines, **header):
    made = upload_statement(api, books["bank"], statement_file(*lines, **header))
    assert made.status_code == 201, made.get_json()
    return made.get_json()


def states(body):
    return [(x["status"], x["transaction_id"]) for x in body["lines"]]


def candidate_ids(served_line):
    return [c["transaction_id"] for c in served_line["candidates"]]


def test_a_payee_sharing_no_word_is_no_certain_match(api, books, post_tx):
    """The treasurer's trap: K JONES 15.00 was matched to "Subs L Garcia 15.00", the
    nearest in date. The entry sharing a word is the match, however much further; the
    nearest stays a candidate shown with its count of shared words."""
    garcia = recorded(post_tx, books, "2026-03-09", "Subs L Garcia")
    jones = recorded(post_tx, books, "2026-02-20", "Subs K Jones")
    body = filed(api, books, line("2026-03-10", -1500, "K JONES"))
    assert states(body) == [("match", jones)]
    assert body["lines"][0]["candidates"] == [
        {
            "transaction_id": jones,
            "occurred_on": "2026-02-20",
            "description": "Subs K Jones",
            "shared_words": 1,
        },
        {
            "transaction_id": garcia,
            "occurred_on": "2026-03-09",
            "description": "Subs L Garcia",
            "shared_words": 0,
        },
    ]
    # A payee sharing a word with neither: new, both offered, the nearest first.
    other = filed(api, books, line("2026-03-10", -1500, "M SMITH", "R2"))
    assert other["lines"][0]["status"] == "new"
    assert candidate_ids(other["lines"][0]) == [garcia, jones]


def test_candidates_rank_by_words_then_days_then_id_and_a_match_is_taken_once(api, books, post_tx):
    far_shop = recorded(post_tx, books, "2026-03-08", "Shop")  # 3 days: after the 1-day ones
    best = recorded(post_tx, books, "2026-02-10", "Corner shop groceries")  # two words
    shop_a = recorded(post_tx, books, "2026-03-04", "shop")
    shop_b = recorded(post_tx, books, "2026-03-06", "SHOP!")
    other_amount = recorded(post_tx, books, "2026-03-05", "Corner shop", cents=-1501)
    body = filed(
        api,
        books,
        line("2026-03-05", -1500, "Corner Shop"),
        line("2026-03-05", -1500, "Shop"),
    )
    first, second = body["lines"]
    assert (first["status"], first["transaction_id"]) == ("match", best)
    assert candidate_ids(first) == [best, shop_a, shop_b, far_shop]
    assert [c["shared_words"] for c in first["candidates"]] == [2, 1, 1, 1]
    # The second line's candidates leave out the first's match; three share one word
    # each with it: none is certain, so the line is new and keeps them.
    assert (second["status"], second["transaction_id"]) == ("new", None)
    assert candidate_ids(second) == [shop_a, shop_b, far_shop]
    assert other_amount not in candidate_ids(first) + candidate_ids(second)


@pytest.mark.parametrize("widened", [False, True], ids=["one-day", "widened"])
def test_the_window_is_60_days_back_and_7_forward(api, books, post_tx, widened):
    """Entries 60 days before the line and 7 after are candidates (here certain: they
    share the word); 61 before and 8 after are none. `widened`: lines months either
    side, so the statement's window holds all four and the edges are each line's own."""
    made = {}
    for n, day in enumerate(("2026-01-14", "2026-01-13", "2026-03-22", "2026-03-23")):
        made[day] = recorded(post_tx, books, day, "Rent", cents=-(1000 + n))
    lines = [line("2026-03-15", -(1000 + n), "Rent") for n in range(4)]
    if widened:
        lines += [line("2025-10-01", 1, "Early"), line("2026-06-30", 1, "Late")]
    body = filed(api, books, *lines)
    assert states(body)[:4] == [
        ("match", made["2026-01-14"]),  # 60 days before
        ("new", None),  # 61
        ("match", made["2026-03-22"]),  # 7 days after
        ("new", None),  # 8
    ]
    assert [candidate_ids(x) for x in body["lines"][:4]] == [
        [made["2026-01-14"]],
        [],
        [made["2026-03-22"]],
        [],
    ]


@pytest.mark.parametrize(("days", "certain"), [(3, True), (4, False), (-3, True), (-4, False)])
def test_a_line_without_words_matches_its_only_candidate_within_3_days(
    api, books, post_tx, days, certain
):
    """ "S", "12" and "-" are no words (fewer than three letters or digits)."""
    day = f"2026-03-{10 + days:02d}"
    tx_id = recorded(post_tx, books, day, "Groceries")
    body = filed(api, books, line("2026-03-10", -1500, "S", "12", memo="-"))
    assert states(body) == [("match", tx_id) if certain else ("new", None)]
    assert candidate_ids(body["lines"][0]) == [tx_id]


def test_a_line_without_words_and_two_candidates_is_new(api, books, post_tx):
    a = recorded(post_tx, books, "2026-03-10", "Groceries")
    b = recorded(post_tx, books, "2026-03-12", "Fuel")
    body = filed(api, books, line("2026-03-10", -1500))
    assert states(body) == [("new", None)]
    assert candidate_ids(body["lines"][0]) == [a, b]
    # The person chooses: a named match works on a new line.
    done = act(api, body["id"], {"line_id": 1, "action": "match", "transaction_id": b})
    assert done.status_code == 200, done.get_json()
    assert states(done.get_json()) == [("matched", b)]
    assert done.get_json()["lines"][0]["candidates"] == []


def test_at_most_five_candidates_are_shown(api, books, post_tx):
    ids = [recorded(post_tx, books, f"2026-03-{n + 1:02d}", "Subs") for n in range(7)]
    body = filed(api, books, line("2026-03-07", -1500, "Subs"))
    assert states(body) == [("new", None)]
    assert candidate_ids(body["lines"][0]) == [ids[6], ids[5], ids[4], ids[3], ids[2]]


def test_the_transaction_of_a_posted_line_is_no_candidate(api, books, post_tx):
    """A line without a bank reference leaves its entry without one: still, what a
    line posted or matched is taken, for every later statement of the account."""
    first = filed(api, books, line("2026-03-10", -1500, "Gym"))
    posted = act(
        api, first["id"], {"line_id": 1, "action": "post", "account_id": books["food"]}
    ).get_json()
    tx_id = posted["lines"][0]["transaction_id"]
    later = filed(api, books, line("2026-03-11", -1500, "Gym"))
    assert states(later) == [("new", None)]
    assert later["lines"][0]["candidates"] == []
    refused = act(api, later["id"], {"line_id": 1, "action": "match", "transaction_id": tx_id})
    assert refused.status_code == 409, refused.get_json()
    assert refused.get_json()["error"].startswith("line 1: "), refused.get_json()


def stored_status(app, sid, line_id=1):
    rows = sql(
        app,
        "SELECT status, transaction_id FROM statement_lines"
        " WHERE statement_id = :s AND line_id = :l",
        s=sid,
        l=line_id,
    )
    return tuple(rows[0])


def test_a_bill_corrected_after_the_upload_is_found_on_the_next_read(app, api, books, post_tx):
    """The treasurer's trap: a bill typed as 62.40, the bank's line 64.20, corrected
    after the upload. The waiting line is worked out again when read; nothing of it is
    written by the read."""
    typed = recorded(post_tx, books, "2026-03-02", "Electric bill", cents=-6240)
    body = filed(api, books, line("2026-03-04", -6420, "ELECTRIC CO", memo="bill 0326"))
    assert (states(body), body["lines"][0]["candidates"]) == ([("new", None)], [])
    fixed = api.post(
        "/transactions",
        json={
            "occurred_on": "2026-03-02",
            "description": "Electric bill",
            "entries": [
                {"account_id": books["bank"], "amount_cents": -6420},
                {"account_id": books["food"], "amount_cents": 6420},
            ],
            "replaces": typed,
        },
    )
    assert fixed.status_code == 201, fixed.get_json()
    corrected = fixed.get_json()["id"]
    read = api.get(f"/statements/{body['id']}").get_json()
    assert states(read) == [("match", corrected)]
    assert candidate_ids(read["lines"][0]) == [corrected]
    assert stored_status(app, body["id"]) == ("new", None)
    # Acting goes by what is worked out now: the line's own candidate is matched.
    done = act(api, body["id"], {"line_id": 1, "action": "match"})
    assert done.status_code == 200, done.get_json()
    assert states(done.get_json()) == [("matched", corrected)]
    assert stored_status(app, body["id"]) == ("matched", corrected)


def test_an_entry_recorded_after_the_upload_is_found_and_one_deleted_is_lost(api, books, post_tx):
    body = filed(api, books, line("2026-03-04", -1500, "Window cleaner"))
    assert states(body) == [("new", None)]
    made = recorded(post_tx, books, "2026-03-01", "Window cleaner March")
    assert states(api.get(f"/statements/{body['id']}").get_json()) == [("match", made)]
    assert api.delete(f"/transactions/{made}").status_code == 204
    read = api.get(f"/statements/{body['id']}").get_json()
    assert (states(read), read["lines"][0]["candidates"]) == ([("new", None)], [])


def test_a_line_booked_from_another_statement_meanwhile_reads_as_its_duplicate(app, api, books):
    """Two statements overlapping (one bank line in both), both uploaded before either
    is filed: once one posts it, the other reads it as a duplicate and reconciling
    does not wait for it."""
    first = filed(api, books, line("2026-03-04", -700, "Gym", "G-1"))
    second = filed(
        api,
        books,
        line("2026-03-04", -700, "Gym", "G-1"),
        closing_balance_cents=-700,
        closing_balance_on="2026-03-31",
    )
    posted = act(api, first["id"], {"line_id": 1, "action": "post", "account_id": books["food"]})
    tx_id = posted.get_json()["lines"][0]["transaction_id"]
    read = api.get(f"/statements/{second['id']}").get_json()
    assert states(read) == [("duplicate", tx_id)]
    assert stored_status(app, second["id"])[0] == "new"
    refused = act(api, second["id"], {"line_id": 1, "action": "post", "account_id": books["food"]})
    assert refused.status_code == 409, refused.get_json()
    assert api.post(f"/statements/{second['id']}/reconcile").status_code == 201
