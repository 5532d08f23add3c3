"""Acting on a statement's lines (post, match, ignore: all or nothing) and reconciling
from the statement, over HTTP on both stores (docs/statements.md)."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from app.extensions import db
from tests.services.banking.line_steps import act, snapshot, sql
from tests.services.banking.stand_in import downloaded_again, line, statement_file, upload_statement

pytestmark = pytest.mark.usefixtures("stand_in_reader")


def transaction(api, tx_id):
    """One transaction as GET /transactions lists it (None when gone)."""
    found = [t for t in api.get("/transactions").get_json() if t["id"] == tx_id]
    return found[0] if found else None


def bank_entries(api, account):
    return api.get(f"/accounts/{account}/register").get_json()["items"]


def test_post_makes_one_transaction_cleared_with_the_bank_ref(app, api, books):
    sid = upload_statement(
        api,
        books["bank"],
        statement_file(
            line("2026-03-02", 2500, "Ann Member", "R-1"),
            line("2026-03-03", -1299, None, "R-2", memo="Card purchase"),
            line("2026-03-04", -100),
            line("2026-03-05", -200, " Corner Shop ", "R-4", memo="card 1234"),
            line("2026-03-06", -300, "  ", "R-5", memo=" "),
        ),
    ).get_json()["id"]
    done = act(
        api,
        sid,
        {"line_id": 1, "action": "post", "account_id": books["dues"]},
        {"line_id": 2, "action": "post", "account_id": books["food"]},
        {"line_id": 3, "action": "post", "account_id": books["food"], "description": " Fees "},
        {"line_id": 4, "action": "post", "account_id": books["food"]},
        {"line_id": 5, "action": "post", "account_id": books["food"], "description": " "},
    )
    assert done.status_code == 200, done.get_json()
    lines = done.get_json()["lines"]
    assert [x["status"] for x in lines] == ["posted"] * 5
    txs = [transaction(api, x["transaction_id"]) for x in lines]
    # As given, else the payee and the memo joined (either alone), else the default.
    assert [t["description"] for t in txs] == [
        "Ann Member",
        "Card purchase",
        "Fees",
        "Corner Shop · card 1234",
        "Bank statement",
    ]
    assert [t["occurred_on"] for t in txs][:3] == ["2026-03-02", "2026-03-03", "2026-03-04"]
    assert sorted((e["account_id"], e["amount_cents"]) for e in txs[0]["entries"]) == sorted(
        [(books["bank"], 2500), (books["dues"], -2500)]
    )
    register = bank_entries(api, books["bank"])
    assert all(item["cleared"] for item in register)
    refs = sql(
        app, "SELECT bank_ref FROM entries WHERE account_id = :a ORDER BY id", a=books["bank"]
    )
    assert [r[0] for r in refs] == ["R-1", "R-2", None, "R-4", "R-5"]
    # Audit: one transaction.posted per line and one clearing event for the request.
    events = api.get("/audit?limit=100").get_json()["items"]
    assert sum(e["action"] == "transaction.posted" for e in events) == 5
    cleared = [e for e in events if e["action"] == "entries.cleared"]
    assert len(cleared) == 1 and cleared[0]["object"]["statement_id"] == sid


def test_the_description_is_cut_to_the_limit(api, books):
    sid = upload_statement(
        api,
        books["bank"],
        statement_file(
            line("2026-03-02", 1, "p" * 2500),
            line("2026-03-03", 2, "p" * 1998, memo="memo"),
        ),
    ).get_json()
    done = act(
        api,
        sid["id"],
        {"line_id": 1, "action": "post", "account_id": books["dues"]},
        {"line_id": 2, "action": "post", "account_id": books["dues"]},
    )
    cut = [transaction(api, x["transaction_id"])["description"] for x in done.get_json()["lines"]]
    assert cut == ["p" * 2000, "p" * 1998 + " ·"]


def test_one_bad_line_changes_nothing(app, api, books):
    sid = upload_statement(
        api,
        books["bank"],
        statement_file(line("2026-03-02", 2500, "Ann"), line("2026-03-03", -100, "Shop")),
    ).get_json()["id"]
    before = snapshot(app)
    for bad, status in (
        ({"line_id": 2, "action": "post", "account_id": 999}, 400),  # unknown account
        ({"line_id": 2, "action": "post"}, 400),  # no account
        ({"line_id": 2, "action": "post", "account_id": books["bank"]}, 400),  # itself
        ({"line_id": 2, "action": "explode"}, 400),
        ({"line_id": 7, "action": "ignore"}, 400),
        ({"line_id": 2, "action": "match"}, 400),  # no candidate
        ({"line_id": 2, "action": "match", "transaction_id": 999}, 400),
    ):
        refused = act(api, sid, {"line_id": 1, "action": "post", "account_id": books["dues"]}, bad)
        assert refused.status_code == status, (bad, refused.get_json())
        assert f"line {bad['line_id']}" in refused.get_json()["error"], refused.get_json()
        assert snapshot(app) == before
    twice = act(api, sid, {"line_id": 1, "action": "ignore"}, {"line_id": 1, "action": "ignore"})
    assert twice.status_code == 400 and "line 1" in twice.get_json()["error"]
    for body in ({}, {"lines": []}, {"lines": "x"}, {"lines": [3]}):
        assert api.post(f"/statements/{sid}/lines", json=body).status_code == 400


def test_the_lock_date_and_an_archived_account_refuse_the_whole_request(app, api, books):
    sid = upload_statement(
        api,
        books["bank"],
        statement_file(line("2026-03-02", 2500, "Ann"), line("2026-01-03", -100, "Shop")),
    ).get_json()["id"]
    # The lock date is a person's to move (a session route): set here in SQL.
    sql(app, "UPDATE settings SET locked_through = '2026-01-31'")
    before = snapshot(app)
    refused = act(
        api,
        sid,
        {"line_id": 1, "action": "post", "account_id": books["dues"]},
        {"line_id": 2, "action": "post", "account_id": books["food"]},
    )
    assert refused.status_code == 409 and "line 2" in refused.get_json()["error"]
    assert snapshot(app) == before
    sql(app, "UPDATE settings SET locked_through = NULL")
    assert api.put(f"/accounts/{books['food']}", json={"archived": True}).status_code == 200
    refused = act(api, sid, {"line_id": 2, "action": "post", "account_id": books["food"]})
    assert refused.status_code == 400 and "archived" in refused.get_json()["error"]


def test_match_the_candidate_or_a_named_transaction(api, books, post_tx):
    by_hand = post_tx("2026-03-04", "shop", (books["bank"], -1299), (books["food"], 1299))
    other = post_tx("2026-03-06", "transfer 2", (books["bank"], -1299), (books["food"], 1299))
    a, b = by_hand.get_json()["id"], other.get_json()["id"]
    body = upload_statement(
        api,
        books["bank"],
        statement_file(line("2026-03-05", -1299, "Shop", "R-1"), line("2026-03-05", -1299, "S")),
    ).get_json()
    # Line 1 shares "shop" with a alone; line 2 has no words and b, 1 day away, is the
    # only candidate left to it (a is line 1's).
    assert [(x["status"], x["transaction_id"]) for x in body["lines"]] == [
        ("match", a),
        ("match", b),
    ]
    # The second line matched to the first line's candidate: refused (taken here).
    refused = act(
        api,
        body["id"],
        {"line_id": 1, "action": "match"},
        {"line_id": 2, "action": "match", "transaction_id": a},
    )
    assert refused.status_code == 409 and "line 2" in refused.get_json()["error"]
    done = act(
        api,
        body["id"],
        {"line_id": 1, "action": "match", "transaction_id": b},
        {"line_id": 2, "action": "match", "transaction_id": a},
    )
    assert done.status_code == 200, done.get_json()
    lines = done.get_json()["lines"]
    assert [(x["status"], x["transaction_id"]) for x in lines] == [("matched", b), ("matched", a)]
    assert all(item["cleared"] for item in bank_entries(api, books["bank"]))
    # No new transaction; the clearing is the event.
    events = api.get("/audit?limit=100").get_json()["items"]
    assert sum(e["action"] == "transaction.posted" for e in events) == 2
    assert [e["action"] for e in events].count("entries.cleared") == 1
    again = act(api, body["id"], {"line_id": 1, "action": "ignore"})
    assert again.status_code == 409 and "line 1" in again.get_json()["error"]


def test_a_named_transaction_must_qualify(api, books, post_tx):
    def tx(day, cents, account="bank"):
        made = post_tx(day, "x", (books[account], cents), (books["food"], -cents))
        return made.get_json()["id"]

    wrong_amount = tx("2026-03-05", -1300)
    far = tx("2025-11-01", -1299)  # no candidate: 124 days before the line
    other_account = tx("2026-03-05", -1299, "card")
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-03-05", -1299, "S"))
    ).get_json()
    assert (sid["lines"][0]["status"], sid["lines"][0]["candidates"]) == ("new", [])
    for tx_id in (wrong_amount, other_account):
        refused = act(api, sid["id"], {"line_id": 1, "action": "match", "transaction_id": tx_id})
        assert refused.status_code == 409 and "line 1" in refused.get_json()["error"]
    refused = act(api, sid["id"], {"line_id": 1, "action": "match", "transaction_id": "7"})
    assert refused.status_code == 400
    # Named, a transaction qualifies whatever its date and words.
    done = act(api, sid["id"], {"line_id": 1, "action": "match", "transaction_id": far})
    assert done.status_code == 200, done.get_json()
    assert done.get_json()["lines"][0]["transaction_id"] == far


def test_a_duplicate_or_a_reference_now_held_is_409(api, books):
    data = statement_file(line("2026-03-02", 2500, "Ann", "R-1"))
    first = upload_statement(api, books["bank"], data).get_json()["id"]
    second = upload_statement(api, books["bank"], downloaded_again(data)).get_json()["id"]
    assert (
        act(api, first, {"line_id": 1, "action": "post", "account_id": books["dues"]}).status_code
        == 200
    )
    refused = act(api, second, {"line_id": 1, "action": "post", "account_id": books["dues"]})
    assert refused.status_code == 409 and "line 1" in refused.get_json()["error"]
    third = upload_statement(api, books["bank"], downloaded_again(data, 2)).get_json()
    assert third["lines"][0]["status"] == "duplicate"
    refused = act(api, third["id"], {"line_id": 1, "action": "ignore"})
    assert refused.status_code == 409


def test_a_bank_line_listed_twice_is_posted_once_in_one_request_as_in_two(app, api, books):
    """The file lists one bank line twice (same reference, same amount): posting both in
    one request is refused as a second request would be, naming the second line, and
    changes nothing; another line of the file is done beside it. (The same reference
    with another amount in one file would be read as none: test_statements.py.)"""
    twice = line("2026-03-02", -1000, "Cafe", "F-3")
    data = statement_file(twice, twice, line("2026-03-02", -500, "Cafe", "F-4"))
    sid = upload_statement(api, books["bank"], data).get_json()["id"]
    before = snapshot(app)
    post = {"action": "post", "account_id": books["food"]}
    refused = act(api, sid, {"line_id": 1, **post}, {"line_id": 2, **post})
    assert refused.status_code == 409, refused.get_json()
    assert refused.get_json()["error"].startswith("line 2: line 1 of this request")
    assert snapshot(app) == before
    done = act(
        api, sid, {"line_id": 1, **post}, {"line_id": 2, "action": "ignore"}, {"line_id": 3, **post}
    )
    assert done.status_code == 200, done.get_json()
    assert [x["status"] for x in done.get_json()["lines"]] == ["posted", "ignored", "posted"]


def test_ignore_then_post_later(api, books):
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", 5, "A"))
    ).get_json()["id"]
    ignored = act(api, sid, {"line_id": 1, "action": "ignore"}).get_json()
    assert ignored["lines"][0]["status"] == "ignored"
    assert api.get("/transactions").get_json() == []
    posted = act(api, sid, {"line_id": 1, "action": "post", "account_id": books["dues"]})
    assert posted.get_json()["lines"][0]["status"] == "posted"


def test_deleting_the_statement_keeps_what_it_posted(api, books):
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", 5, "A", "R"))
    ).get_json()
    tx_id = act(api, sid["id"], {"line_id": 1, "action": "post", "account_id": books["dues"]})
    tx_id = tx_id.get_json()["lines"][0]["transaction_id"]
    assert api.delete(f"/statements/{sid['id']}").status_code == 204
    assert transaction(api, tx_id) is not None


def reconcilable(api, books, account, cents, closing, **header):
    return upload_statement(
        api,
        books[account],
        statement_file(
            line("2026-03-02", cents, "A", "R-1"),
            closing_balance_cents=closing,
            closing_balance_on="2026-03-31",
            **header,
        ),
    ).get_json()["id"]


def test_reconcile_from_the_statement(api, books):
    sid = reconcilable(api, books, "bank", 2500, 2500)
    waiting = api.post(f"/statements/{sid}/reconcile")
    assert waiting.status_code == 409 and "1 line" in waiting.get_json()["error"]
    act(api, sid, {"line_id": 1, "action": "post", "account_id": books["dues"]})
    done = api.post(f"/statements/{sid}/reconcile")
    assert done.status_code == 201, done.get_json()
    assert done.get_json()["statement_date"] == "2026-03-31"
    assert done.get_json()["closing_balance_cents"] == 2500
    assert all(item["reconciled"] for item in bank_entries(api, books["bank"]))


def shop_posted_to_food(api, books):
    """A one-line statement (25.00 to Shop, closing -25.00 on 2026-03-31) whose line is
    posted to Food: the file's bytes, the statement's id and the transaction's."""
    data = statement_file(
        line("2026-03-02", -2500, "Shop", "R-1"),
        closing_balance_cents=-2500,
        closing_balance_on="2026-03-31",
    )
    sid = upload_statement(api, books["bank"], data).get_json()["id"]
    posted = act(api, sid, {"line_id": 1, "action": "post", "account_id": books["food"]})
    return data, sid, posted.get_json()["lines"][0]["transaction_id"]


def correct(api, books, original, cents=2500, day="2026-03-02", account="dues"):
    """A correction of a 25.00 payment posted from a line: `account` the cost."""
    response = api.post(
        "/transactions",
        json={
            "occurred_on": day,
            "description": "Shop, corrected",
            "entries": [
                {"account_id": books[account], "amount_cents": cents},
                {"account_id": books["bank"], "amount_cents": -cents},
            ],
            "replaces": original,
        },
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def test_a_corrected_reconciled_posting_keeps_the_bank_reference(api, books):
    """Correcting a reconciled transaction posted from a statement line (same date,
    same bank entry, another counter account: allowed) keeps the entry's bank
    reference with its reconciled mark, so the same file uploaded again finds the line
    a duplicate of the replacement, not a new line to post a second time."""
    data, sid, original = shop_posted_to_food(api, books)
    assert api.post(f"/statements/{sid}/reconcile").status_code == 201
    replacement = correct(api, books, original)
    [entry] = bank_entries(api, books["bank"])
    assert (entry["transaction_id"], entry["reconciled"]) == (replacement, True)
    again = upload_statement(api, books["bank"], downloaded_again(data)).get_json()["lines"][0]
    assert (again["status"], again["transaction_id"]) == ("duplicate", replacement)


def test_a_corrected_posting_moves_its_statement_line_and_the_payee_learns(api, books):
    """The treasurer posts a line to the wrong account, then corrects the transaction:
    the line names the replacement (not a deleted transaction), and the same payee's
    next line is suggested the corrected account, not the wrong one."""
    first = statement_file(line("2026-03-02", -2500, "Corner Shop", "R-1"))
    sid = upload_statement(api, books["bank"], first).get_json()["id"]
    posted = act(api, sid, {"line_id": 1, "action": "post", "account_id": books["food"]})
    original = posted.get_json()["lines"][0]["transaction_id"]
    replacement = correct(api, books, original)
    [shown] = api.get(f"/statements/{sid}").get_json()["lines"]
    assert (shown["status"], shown["transaction_id"]) == ("posted", replacement)

    later = statement_file(line("2026-04-02", -1800, "CORNER  shop", "R-2"))
    [waiting] = upload_statement(api, books["bank"], later).get_json()["lines"]
    assert waiting["status"] == "new"
    assert waiting["suggestion"]["source"] == "history"
    assert waiting["suggestion"]["account_id"] == books["dues"]

    # Deleted outright, the transaction leaves the line as it was, naming nothing.
    assert api.delete(f"/transactions/{replacement}").status_code == 204
    [shown] = api.get(f"/statements/{sid}").get_json()["lines"]
    assert (shown["status"], shown["transaction_id"]) == ("posted", None)


def test_a_posting_corrected_before_month_end_still_reconciles(api, books, runner):
    """The common month-end slip: a line posted to the wrong account, corrected before
    the statement is reconciled (here also to another day). The bank entry keeps its
    clearing and bank reference in the replacement, so the statement still reconciles
    in one call and the same file uploaded again finds a duplicate, not a line to post
    twice; verify replays the carried mark from the posting's event."""
    data, sid, original = shop_posted_to_food(api, books)
    replacement = correct(api, books, original, day="2026-03-03")

    [entry] = bank_entries(api, books["bank"])
    assert entry["transaction_id"] == replacement
    assert (entry["cleared"], entry["reconciled"]) == (True, False)
    register = api.get(f"/accounts/{books['bank']}/register").get_json()
    assert register["cleared_balance_cents"] == -2500
    posting = next(
        e
        for e in api.get("/audit").get_json()["items"]
        if e["action"] == "transaction.posted" and e["object"].get("replaces") == original
    )
    assert posting["object"]["kept_cleared"] == [entry["entry_id"]]
    assert "kept_reconciled" not in posting["object"]

    result = runner.invoke(args=["verify"])  # the carried mark, replayed from the event
    assert result.exit_code == 0, result.output

    again = upload_statement(api, books["bank"], downloaded_again(data)).get_json()["lines"][0]
    assert (again["status"], again["transaction_id"]) == ("duplicate", replacement)
    done = api.post(f"/statements/{sid}/reconcile")
    assert done.status_code == 201, done.get_json()
    assert done.get_json()["entries"] == [entry["entry_id"]]


def test_a_correction_of_the_bank_figure_waits_to_be_cleared_again(api, books, runner):
    """A correction that changes the bank entry's amount no longer holds what the bank
    showed: nothing is carried, and reconciling says by how much it is out."""
    _, sid, original = shop_posted_to_food(api, books)
    replacement = correct(api, books, original, cents=2550)

    [entry] = bank_entries(api, books["bank"])
    assert (entry["transaction_id"], entry["cleared"]) == (replacement, False)
    refused = api.post(f"/statements/{sid}/reconcile")
    assert refused.status_code == 409
    assert refused.get_json()["difference_cents"] == -2500
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 0, result.output


def test_reconcile_answers_the_difference(app, api, books):
    sid = reconcilable(api, books, "bank", 2500, 3000)
    act(api, sid, {"line_id": 1, "action": "ignore"})
    refused = api.post(f"/statements/{sid}/reconcile")
    assert refused.status_code == 409
    assert refused.get_json()["difference_cents"] == 3000
    with app.app_context():
        assert db.session.execute(text("SELECT count(*) FROM reconciliations")).scalar() == 0
        db.session.rollback()


def test_reconcile_needs_a_closing_balance_and_its_date(api, books):
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", 1, "A"))
    ).get_json()["id"]
    act(api, sid, {"line_id": 1, "action": "ignore"})
    refused = api.post(f"/statements/{sid}/reconcile")
    assert refused.status_code == 409 and "closing balance" in refused.get_json()["error"]


def test_a_card_statement_is_negated(api, books):
    # A card purchase of 500.00: the bank shows -500.00 closing; the debt is 500.00.
    sid = reconcilable(api, books, "card", -50000, -50000)
    act(api, sid, {"line_id": 1, "action": "post", "account_id": books["food"]})
    done = api.post(f"/statements/{sid}/reconcile")
    assert done.status_code == 201, done.get_json()
    assert done.get_json()["closing_balance_cents"] == 50000
