"""Filing rules and suggestions over HTTP, on both stores: the rule's shape and
refusals, the order of suggestions (rule by priority then id, else history), a new
rule applying to waiting lines at once, the preview (docs/statements.md, "Rules")."""

from __future__ import annotations

import pytest

from tests.services.banking.stand_in import BOOKS, line, statement_file, upload_statement

pytestmark = pytest.mark.usefixtures("stand_in_reader")


@pytest.fixture
def book_accounts():
    """The shared books with a second expense account, Fuel, made before Dues."""
    bank, card, food, dues = BOOKS.items()
    return dict([bank, card, food, ("fuel", ("Fuel", "expense")), dues])


def rule(api, **body):
    return api.post("/rules", json=body)


def test_a_rule_with_its_defaults(api, books, clock):
    made = rule(
        api, name="Shop", counter_account_id=books["food"], conditions={"payee_contains": "shop"}
    )
    assert made.status_code == 201, made.get_json()
    body = made.get_json()
    assert body == {
        "id": body["id"],
        "name": "Shop",
        "priority": 100,
        "account_id": None,
        "conditions": {"payee_contains": "shop"},
        "counter_account_id": books["food"],
        "description": None,
        "active": True,
        "created_at": body["created_at"],
    }
    assert api.get("/rules").get_json() == [body]


def test_rules_are_listed_by_priority_then_id(api, books):
    ids = [
        rule(
            api, name=n, priority=p, counter_account_id=books["food"], conditions={"min_cents": 1}
        ).get_json()["id"]
        for n, p in (("a", 50), ("b", 10), ("c", 50))
    ]
    assert [r["id"] for r in api.get("/rules").get_json()] == [ids[1], ids[0], ids[2]]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"conditions": {}}, "conditions"),
        ({"conditions": {"payee_starts": "x"}}, "payee_starts"),
        ({"conditions": {"min_cents": 5, "max_cents": 4}}, "min_cents"),
        ({"conditions": {"payee_is": "x" * 201}}, "payee_is"),
        ({"conditions": {"min_cents": "5"}}, "min_cents"),
        ({"counter_account_id": 999}, "counter_account_id"),
        ({"counter_account_id": None}, "counter_account_id"),
        ({"account_id": "bank", "counter_account_id": "bank"}, "counter_account_id"),
        ({"account_id": 999}, "account_id"),
        ({"name": "  "}, "name"),
        ({"name": "n" * 201}, "name"),
        ({"priority": 1.5}, "priority"),
        ({"active": "yes"}, "active"),
    ],
)
def test_refusals_name_the_field(api, books, body, field):
    base = {"name": "R", "counter_account_id": books["food"], "conditions": {"payee_is": "x"}}
    for key in ("account_id", "counter_account_id"):
        if isinstance(body.get(key), str):
            body = {**body, key: books[body[key]]}
    refused = rule(api, **{**base, **body})
    assert refused.status_code == 400, refused.get_json()
    assert field in refused.get_json()["error"]
    assert api.get("/rules").get_json() == []


def test_one_bound_alone_is_no_range_to_check(api, books):
    """min_cents above max_cents is refused only when both are given: a lone negative
    max_cents (every payment of at least 50.00) or a lone min_cents is a rule."""
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", -6000, "Garage"))
    ).get_json()["id"]
    for name, conditions in (("Big out", {"max_cents": -5000}), ("Big in", {"min_cents": 5000})):
        made = rule(api, name=name, counter_account_id=books["food"], conditions=conditions)
        assert made.status_code == 201, made.get_json()
        assert made.get_json()["conditions"] == conditions
    line_of = api.get(f"/statements/{sid}").get_json()["lines"][0]
    assert line_of["suggestion"]["rule_id"] == api.get("/rules").get_json()[0]["id"]


def test_archived_counter_account_and_taken_name_are_refused(api, books):
    assert api.put(f"/accounts/{books['fuel']}", json={"archived": True}).status_code == 200
    refused = rule(api, name="R", counter_account_id=books["fuel"], conditions={"min_cents": 0})
    assert refused.status_code == 400 and "counter_account_id" in refused.get_json()["error"]
    assert (
        rule(
            api, name="Shop", counter_account_id=books["food"], conditions={"min_cents": 0}
        ).status_code
        == 201
    )
    taken = rule(api, name=" shop ", counter_account_id=books["food"], conditions={"min_cents": 0})
    assert taken.status_code == 400 and "name" in taken.get_json()["error"]


def test_put_keeps_what_is_left_out_and_delete(api, books):
    made = rule(
        api, name="Shop", counter_account_id=books["food"], conditions={"payee_is": "A"}
    ).get_json()
    changed = api.put(f"/rules/{made['id']}", json={"priority": 5, "active": False})
    assert changed.status_code == 200, changed.get_json()
    assert changed.get_json() == {**made, "priority": 5, "active": False}
    refused = api.put(f"/rules/{made['id']}", json={"conditions": {}})
    assert refused.status_code == 400 and "conditions" in refused.get_json()["error"]
    assert api.put("/rules/999", json={}).status_code == 404
    assert api.delete(f"/rules/{made['id']}").status_code == 204
    assert api.delete(f"/rules/{made['id']}").status_code == 404
    actions = [e["action"] for e in api.get("/audit?limit=50").get_json()["items"]]
    assert [a for a in actions if a.startswith("rule.")] == [  # newest first
        "rule.deleted",
        "rule.changed",
        "rule.created",
    ]


def suggestion_of(api, sid, line_id=1):
    return api.get(f"/statements/{sid}").get_json()["lines"][line_id - 1]["suggestion"]


def test_the_first_rule_by_priority_then_id_whose_every_condition_holds(api, books):
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", -4500, "SHELL  Station 12"))
    ).get_json()["id"]
    assert suggestion_of(api, sid) is None
    # Applies at once to the waiting line: suggestions are worked out when read.
    later = rule(
        api, name="b", priority=20, counter_account_id=books["food"], conditions={"max_cents": 0}
    ).get_json()
    assert suggestion_of(api, sid) == {
        "account_id": books["food"],
        "source": "rule",
        "rule_id": later["id"],
    }
    first = rule(
        api,
        name="a",
        priority=10,
        counter_account_id=books["fuel"],
        conditions={"payee_contains": "shell station", "min_cents": -5000, "max_cents": -4000},
    ).get_json()
    assert suggestion_of(api, sid)["rule_id"] == first["id"]
    # Equal priority: the lower id first.
    rule(api, name="c", priority=10, counter_account_id=books["food"], conditions={"max_cents": 0})
    assert suggestion_of(api, sid)["rule_id"] == first["id"]
    # One condition failing: not that rule.
    api.put(f"/rules/{first['id']}", json={"conditions": {"payee_is": "shell", "max_cents": 0}})
    assert suggestion_of(api, sid)["rule_id"] != first["id"]
    # Inactive and limited to another account: skipped.
    api.put(f"/rules/{first['id']}", json={"conditions": {"payee_is": "Shell Station 12"}})
    assert suggestion_of(api, sid)["rule_id"] == first["id"]
    api.put(f"/rules/{first['id']}", json={"active": False})
    assert suggestion_of(api, sid)["rule_id"] != first["id"]
    api.put(f"/rules/{first['id']}", json={"active": True, "account_id": books["card"]})
    assert suggestion_of(api, sid)["rule_id"] != first["id"]


def test_history_the_newest_two_entry_posting_with_the_same_payee(api, books):
    old = upload_statement(
        api,
        books["bank"],
        statement_file(
            line("2026-02-01", -900, "Corner Shop"), line("2026-02-20", -500, "corner  SHOP")
        ),
    ).get_json()["id"]
    api.post(
        f"/statements/{old}/lines",
        json={
            "lines": [
                {"line_id": 1, "action": "post", "account_id": books["fuel"]},
                {"line_id": 2, "action": "post", "account_id": books["food"]},
            ]
        },
    )
    sid = upload_statement(
        api,
        books["bank"],
        statement_file(line("2026-03-02", -700, " CORNER shop "), line("2026-03-02", -7, "Other")),
    ).get_json()["id"]
    lines = api.get(f"/statements/{sid}").get_json()["lines"]
    assert lines[0]["suggestion"] == {
        "account_id": books["food"],
        "source": "history",
        "rule_id": None,
    }
    assert lines[1]["suggestion"] is None
    # A rule comes before history.
    made = rule(api, name="r", counter_account_id=books["fuel"], conditions={"max_cents": 0})
    assert suggestion_of(api, sid) == {
        "account_id": books["fuel"],
        "source": "rule",
        "rule_id": made.get_json()["id"],
    }
    # The card's lines do not learn from the bank's history.
    card = upload_statement(
        api, books["card"], statement_file(line("2026-03-02", -700, "Corner Shop"))
    )
    api.delete(f"/rules/{made.get_json()['id']}")
    assert suggestion_of(api, card.get_json()["id"]) is None


def test_matched_lines_teach_history_too_and_only_new_lines_get_a_suggestion(api, books, post_tx):
    post_tx("2026-02-01", "Shop by hand", (books["bank"], -900), (books["fuel"], 900))
    old = upload_statement(
        api, books["bank"], statement_file(line("2026-02-01", -900, "Shop"))
    ).get_json()
    assert old["lines"][0]["status"] == "match"
    api.post(f"/statements/{old['id']}/lines", json={"lines": [{"line_id": 1, "action": "match"}]})
    rule(api, name="r", counter_account_id=books["food"], conditions={"max_cents": 0})
    assert suggestion_of(api, old["id"]) is None  # matched: no suggestion
    api.delete("/rules/1")
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", -7, "Shop"))
    ).get_json()
    # The matched transaction ("by hand": no word of the payee) teaches the payee.
    assert suggestion_of(api, sid["id"]) == {
        "account_id": books["fuel"],
        "source": "history",
        "rule_id": None,
    }


def test_preview_lists_the_waiting_lines_it_would_now_file(api, books):
    sid = upload_statement(
        api,
        books["bank"],
        statement_file(
            line("2026-03-02", -4500, "Shell"),
            line("2026-03-03", -100, "Bakery"),
            line("2026-03-04", -4600, "Shell"),
        ),
    ).get_json()["id"]
    api.post(f"/statements/{sid}/lines", json={"lines": [{"line_id": 3, "action": "ignore"}]})
    body = {
        "name": "Fuel",
        "counter_account_id": books["fuel"],
        "conditions": {"payee_is": "shell"},
    }
    got = api.post("/rules/preview", json=body)
    assert got.status_code == 200, got.get_json()
    assert got.get_json() == {
        "matches": [
            {
                "statement_id": sid,
                "line_id": 1,
                "booked_on": "2026-03-02",
                "amount_cents": -4500,
                "payee": "Shell",
            }
        ],
        "truncated": False,
    }
    assert api.get("/rules").get_json() == []  # not stored
    # A stored rule that comes first takes the line.
    rule(api, name="Any", priority=1, counter_account_id=books["food"], conditions={"max_cents": 0})
    assert api.post("/rules/preview", json=body).get_json() == {"matches": [], "truncated": False}
    refused = api.post("/rules/preview", json={**body, "conditions": {}})
    assert refused.status_code == 400


def test_rules_need_the_full_tier(client):
    assert client.get("/rules").status_code == 401
    assert client.post("/rules/preview", json={}).status_code == 401


def preview_lines(api, sid, body):
    shown = api.post("/rules/preview", json=body).get_json()
    return [m["line_id"] for m in shown["matches"] if m["statement_id"] == sid]


def test_amount_bounds_are_inclusive_and_one_bound_alone_decides(api, books):
    """min_cents takes the line of exactly that amount and not a cent below; a rule of
    max_cents alone takes exactly that amount and below, not a cent above: in the
    suggestions and in the preview alike."""
    sid = upload_statement(
        api,
        books["bank"],
        statement_file(
            line("2026-03-02", -4500, "A"),
            line("2026-03-02", -4501, "B"),
            line("2026-03-02", -5000, "C"),
            line("2026-03-02", -4999, "D"),
        ),
    ).get_json()["id"]
    low = {"name": "low", "counter_account_id": books["food"], "conditions": {"min_cents": -4500}}
    high = {"name": "high", "counter_account_id": books["fuel"], "conditions": {"max_cents": -5000}}
    assert preview_lines(api, sid, low) == [1]
    assert preview_lines(api, sid, high) == [3]
    made = {body["name"]: rule(api, **body).get_json()["id"] for body in (low, high)}
    lines = api.get(f"/statements/{sid}").get_json()["lines"]
    assert [(x["suggestion"] or {}).get("rule_id") for x in lines] == [
        made["low"],
        None,
        made["high"],
        None,
    ]


def test_a_counter_account_archived_after_the_rule_was_made(api, books):
    """The rule stays but suggests nothing while its counter account is archived (it
    could not be posted): the next rule applies, and it takes no line from a preview."""
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", -700, "Shell"))
    ).get_json()["id"]
    fuel = rule(
        api,
        name="Fuel",
        priority=1,
        counter_account_id=books["fuel"],
        conditions={"payee_is": "shell"},
    ).get_json()
    food = rule(
        api, name="Food", priority=5, counter_account_id=books["food"], conditions={"max_cents": 0}
    ).get_json()
    assert suggestion_of(api, sid)["rule_id"] == fuel["id"]
    body = {
        "name": "New",
        "priority": 3,
        "counter_account_id": books["food"],
        "conditions": {"payee_is": "Shell"},
    }
    assert preview_lines(api, sid, body) == []  # Fuel comes first
    assert api.put(f"/accounts/{books['fuel']}", json={"archived": True}).status_code == 200
    assert suggestion_of(api, sid)["rule_id"] == food["id"]
    assert preview_lines(api, sid, body) == [1]
    assert [r["id"] for r in api.get("/rules").get_json()] == [fuel["id"], food["id"]]


def test_a_rule_filing_to_the_statements_own_account_applies_to_other_accounts_only(api, books):
    """A rule for any account whose counter account is the bank suggests nothing on the
    bank's own statements (a posting needs two accounts) but does on the card's; its
    preview leaves the bank's lines out, and stored it does not hide them from another
    rule's preview."""
    bank = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", -700, "Transfer"))
    ).get_json()["id"]
    card = upload_statement(
        api, books["card"], statement_file(line("2026-03-02", 700, "Transfer"))
    ).get_json()["id"]
    body = {
        "name": "To bank",
        "priority": 1,
        "counter_account_id": books["bank"],
        "conditions": {"payee_is": "transfer"},
    }
    assert preview_lines(api, bank, body) == []
    assert preview_lines(api, card, body) == [1]
    made = rule(api, **body).get_json()
    assert suggestion_of(api, bank) is None
    assert suggestion_of(api, card)["rule_id"] == made["id"]
    other = {**body, "name": "Other", "priority": 50, "counter_account_id": books["food"]}
    assert preview_lines(api, bank, other) == [1]
    assert preview_lines(api, card, other) == []


def test_equal_priority_the_lower_id_first_whatever_its_conditions(api, books):
    """Between rules of one priority the one made first wins, even where a later one
    names the payee exactly; a stored rule of the previewed rule's priority comes
    before it (a new rule's id is higher)."""
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", -700, "Shell"))
    ).get_json()["id"]
    broad = rule(
        api, name="Any", priority=10, counter_account_id=books["food"], conditions={"max_cents": 0}
    ).get_json()
    rule(
        api,
        name="Shell",
        priority=10,
        counter_account_id=books["fuel"],
        conditions={"payee_is": "shell"},
    )
    assert suggestion_of(api, sid)["rule_id"] == broad["id"]
    body = {
        "name": "New",
        "counter_account_id": books["fuel"],
        "conditions": {"payee_contains": "she"},
    }
    assert preview_lines(api, sid, {**body, "priority": 10}) == []
    assert preview_lines(api, sid, {**body, "priority": 9}) == [1]


def test_inactive_rules_in_previews(api, books):
    """An inactive rule previews nothing, and a stored inactive rule that would come
    first does not take the line from the rule previewed."""
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", -700, "Shell"))
    ).get_json()["id"]
    body = {"name": "New", "counter_account_id": books["fuel"], "conditions": {"payee_is": "shell"}}
    assert api.post("/rules/preview", json={**body, "active": False}).get_json() == {
        "matches": [],
        "truncated": False,
    }
    stored = rule(
        api, name="Any", priority=1, counter_account_id=books["food"], conditions={"max_cents": 0}
    ).get_json()
    assert preview_lines(api, sid, body) == []
    api.put(f"/rules/{stored['id']}", json={"active": False})
    assert preview_lines(api, sid, body) == [1]


def test_a_stored_rule_limited_to_another_account_takes_no_line_from_a_preview(api, books):
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", -700, "Shell"))
    ).get_json()["id"]
    body = {"name": "New", "counter_account_id": books["fuel"], "conditions": {"payee_is": "shell"}}
    first = {"priority": 1, "counter_account_id": books["food"], "conditions": {"max_cents": 0}}
    rule(api, name="Card only", account_id=books["card"], **first)
    assert preview_lines(api, sid, body) == [1]
    rule(api, name="Bank only", account_id=books["bank"], **first)
    assert preview_lines(api, sid, body) == []


def test_history_learns_from_two_entry_postings_only_not_from_a_split(api, books):
    """A line posted and then corrected into a split (three entries) teaches nothing:
    the payee's suggestion is the newest two-entry posting before it, and none once the
    split is the only posting of that payee."""
    old = upload_statement(
        api,
        books["bank"],
        statement_file(
            line("2026-02-01", -900, "Corner Shop", "R-1"),
            line("2026-02-20", -500, "Corner Shop", "R-2"),
        ),
    ).get_json()["id"]
    posted = api.post(
        f"/statements/{old}/lines",
        json={
            "lines": [
                {"line_id": 1, "action": "post", "account_id": books["fuel"]},
                {"line_id": 2, "action": "post", "account_id": books["food"]},
            ]
        },
    ).get_json()["lines"]
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", -700, "corner shop"))
    ).get_json()["id"]
    assert suggestion_of(api, sid)["account_id"] == books["food"]  # the newer posting

    def split(tx_id, day, cents):
        answer = api.post(
            "/transactions",
            json={
                "occurred_on": day,
                "description": "Shop, split",
                "entries": [
                    {"account_id": books["food"], "amount_cents": cents - 100},
                    {"account_id": books["dues"], "amount_cents": 100},
                    {"account_id": books["bank"], "amount_cents": -cents},
                ],
                "replaces": tx_id,
            },
        )
        assert answer.status_code == 201, answer.get_json()

    split(posted[1]["transaction_id"], "2026-02-20", 500)
    assert suggestion_of(api, sid) == {
        "account_id": books["fuel"],
        "source": "history",
        "rule_id": None,
    }
    split(posted[0]["transaction_id"], "2026-02-01", 900)
    assert suggestion_of(api, sid) is None


def _by_hand(api, books, day, description, cents):
    """A bank payment recorded by hand (to Food): its transaction id."""
    made = api.post(
        "/transactions",
        json={
            "occurred_on": day,
            "description": description,
            "entries": [
                {"account_id": books["bank"], "amount_cents": cents},
                {"account_id": books["food"], "amount_cents": -cents},
            ],
        },
    )
    assert made.status_code == 201, made.get_json()
    return made.get_json()["id"]


def test_preview_and_history_go_by_the_status_a_read_works_out(api, books):
    """A line stored `new` that reads as `match` since (its entry recorded after the
    upload) is no longer previewed; a line stored `match` whose entry is gone since
    reads `new`: previewed, and the payee's history suggests for it (docs/statements.md,
    "What each line's status means": worked out again on every read)."""
    fuel = {"name": "Fuel", "counter_account_id": books["fuel"], "conditions": {"max_cents": 0}}
    # Statement 1 teaches the history: Bakery posted to Fuel, described so that no word
    # of the payee's is in it (the word search would not find it).
    first = upload_statement(
        api, books["bank"], statement_file(line("2026-02-02", -100, "Bakery", "B1"))
    ).get_json()["id"]
    api.post(
        f"/statements/{first}/lines",
        json={
            "lines": [
                {"line_id": 1, "action": "post", "account_id": books["fuel"], "description": "x"}
            ]
        },
    )
    by_hand = _by_hand(api, books, "2026-03-01", "Bakery rolls", -250)
    sid = upload_statement(
        api,
        books["bank"],
        statement_file(
            line("2026-03-02", -250, "Bakery", "B2"),  # stored `match`: the rolls
            line("2026-03-03", -4500, "Shell", "S1"),  # stored `new`
        ),
    ).get_json()["id"]
    stored = api.get(f"/statements/{sid}").get_json()["lines"]
    assert [x["status"] for x in stored] == ["match", "new"]
    assert preview_lines(api, sid, fuel) == [2]
    # The Shell payment recorded by hand after the upload: line 2 reads `match`.
    _by_hand(api, books, "2026-03-03", "Shell fuel", -4500)
    # The rolls' entry deleted: line 1 reads `new` again.
    assert api.delete(f"/transactions/{by_hand}").status_code == 204
    read = api.get(f"/statements/{sid}").get_json()["lines"]
    assert [x["status"] for x in read] == ["new", "match"]
    assert preview_lines(api, sid, fuel) == [1]
    # The payee's history (statement 1's Bakery went to Fuel) suggests for line 1.
    assert read[0]["suggestion"] == {
        "account_id": books["fuel"],
        "source": "history",
        "rule_id": None,
    }
