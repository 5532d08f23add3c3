"""Filing rules at scale, on both stores: at most RULES_MAX rules, suggestions worked out
set-wise (a statement's read takes the same number of SQL statements whatever its lines
and the rules), the preview bounded to the newest PREVIEW_LINES_MAX waiting lines
(docs/statements.md, "Limits and speed"); and the set-wise search giving exactly the
first rule, by priority then id, that a rule-by-rule search gives."""

from __future__ import annotations

import contextlib
import random
import threading

import pytest

from app.services.banking import rules
from app.services.banking.rules import Compiled, first_rules, text_key
from tests.services.banking.stand_in import line, statement_file, upload_statement
from tests.testkit import ApiClient

pytestmark = pytest.mark.usefixtures("stand_in_reader")


def make(api, name, counter, **conditions):
    return api.post("/rules", json={"name": name, "counter_account_id": counter, **conditions})


def test_at_most_rules_max_rules_the_next_is_409_and_nothing_stored(api, books, monkeypatch):
    assert rules.RULES_MAX == 1000  # the documented figure
    monkeypatch.setattr(rules, "RULES_MAX", 3)
    ids = []
    for n in range(3):
        made = make(api, f"r{n}", books["food"], conditions={"min_cents": n})
        assert made.status_code == 201, made.get_json()
        ids.append(made.get_json()["id"])
    refused = make(api, "r3", books["food"], conditions={"min_cents": 3})
    assert refused.status_code == 409
    assert set(refused.get_json()) == {"error"}
    assert "at most 3 rules" in refused.get_json()["error"]
    assert [r["id"] for r in api.get("/rules").get_json()] == ids
    events = [e["action"] for e in api.get("/audit?limit=50").get_json()["items"]]
    assert events.count("rule.created") == 3
    # Changing a kept rule is not making another; after a deletion one may be made.
    assert api.put(f"/rules/{ids[0]}", json={"priority": 1}).status_code == 200
    assert api.delete(f"/rules/{ids[0]}").status_code == 204
    assert make(api, "r3", books["food"], conditions={"min_cents": 3}).status_code == 201


def test_two_rules_made_at_once_at_the_limit_one_is_refused(app, api, books, monkeypatch):
    """Two requests each making the last rule allowed: exactly one is stored, the other
    is 409 (on PostgreSQL both would count the rules before either stored its own,
    were creations not serialised)."""
    monkeypatch.setattr(rules, "RULES_MAX", 1)
    checked = rules._checked
    meet = threading.Barrier(2)

    def slow_checked(*args, **kwargs):
        # Past the count, both wait for each other (a second or so when the other
        # cannot come: it is held before the count, as it must be).
        with contextlib.suppress(threading.BrokenBarrierError):
            meet.wait(timeout=1.5)
        return checked(*args, **kwargs)

    monkeypatch.setattr(rules, "_checked", slow_checked)
    statuses: list[int] = []

    def make_one(n):
        client = ApiClient(app.test_client(), api.token)
        statuses.append(
            make(client, f"r{n}", books["food"], conditions={"min_cents": n}).status_code
        )

    workers = [threading.Thread(target=make_one, args=(n,)) for n in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert sorted(statuses) == [201, 409]
    assert len(api.get("/rules").get_json()) == 1


def test_preview_reads_the_newest_waiting_lines_and_says_when_there_were_more(
    api, books, monkeypatch
):
    assert rules.PREVIEW_LINES_MAX == 5000  # the documented figure
    monkeypatch.setattr(rules, "PREVIEW_LINES_MAX", 3)
    older = upload_statement(
        api, books["bank"], statement_file(line("2026-02-02", -100, "Shell"))
    ).get_json()["id"]
    newer = upload_statement(
        api,
        books["bank"],
        statement_file(
            line("2026-03-02", -200, "Shell"),
            line("2026-03-03", -300, "Other"),  # waiting, read, not the rule's payee
            line("2026-03-04", -400, "Shell"),
        ),
    ).get_json()["id"]
    body = {
        "name": "Fuel",
        "counter_account_id": books["food"],
        "conditions": {"payee_is": "shell"},
    }
    # Four lines wait; the three newest are read, whatever the rule: the older Shell
    # line is left out and the answer says so.
    shown = api.post("/rules/preview", json=body).get_json()
    assert shown["truncated"] is True
    assert [(m["statement_id"], m["line_id"]) for m in shown["matches"]] == [
        (newer, 1),
        (newer, 3),
    ]
    # One fewer waiting (the other payee's line set aside): every waiting line read.
    api.post(f"/statements/{newer}/lines", json={"lines": [{"line_id": 2, "action": "ignore"}]})
    shown = api.post("/rules/preview", json=body).get_json()
    assert shown["truncated"] is False
    assert [(m["statement_id"], m["line_id"]) for m in shown["matches"]] == [
        (older, 1),
        (newer, 1),
        (newer, 3),
    ]


def _varied_rules(api, books, count):
    """count rules of every kind of condition, most of them matching no line."""
    for n in range(count):
        conditions = [
            {"payee_is": f"Payee {n}"},
            {"payee_contains": f"ayee {n}0"},
            {"memo_contains": f"memo {n};"},
            {"min_cents": -n * 10 - 5, "max_cents": -n * 10},
            {"payee_contains": "nobody", "max_cents": 0},
        ][n % 5]
        made = make(api, f"rule {n}", books["food"], conditions=conditions, priority=n % 7)
        assert made.status_code == 201, made.get_json()


def test_a_read_takes_the_same_statements_whatever_its_lines_and_rules(api, books, sql_sent):
    """Suggestions fetch the rules once and the history in one query for the whole
    statement: never one query per line, per payee or per rule (1,200 distinct payees
    here, about 1,100 of them left to the history: more than one chunk of 900 bound
    parameters, as the history was once asked for)."""
    old = upload_statement(
        api,
        books["bank"],
        statement_file(*(line("2026-02-02", -1000 - n, f"Payee {n}", memo="x") for n in range(3))),
    ).get_json()["id"]
    posts = [{"line_id": n, "action": "post", "account_id": books["dues"]} for n in (1, 2, 3)]
    assert api.post(f"/statements/{old}/lines", json={"lines": posts}).status_code == 200
    make(api, "first", books["food"], conditions={"payee_is": "Payee 0"})
    small = upload_statement(
        api,
        books["bank"],
        statement_file(line("2026-03-02", -7, "Payee 1", memo="memo 1", bank_ref="S-1")),
    ).get_json()["id"]
    big = upload_statement(
        api,
        books["bank"],
        statement_file(
            *(
                line("2026-03-02", -n, f"Payee {n}", memo=f"memo {n};", bank_ref=f"B-{n}")
                for n in range(1200)
            )
        ),
    ).get_json()["id"]
    counts = []
    for sid, extra_rules in ((small, 0), (big, 40)):
        _varied_rules(api, books, extra_rules)
        api.get(f"/statements/{sid}")  # warm-up: whatever is cached once
        sql_sent.clear()
        read = api.get(f"/statements/{sid}").get_json()
        counts.append(len(sql_sent))
        sources = {(x["suggestion"] or {}).get("source") for x in read["lines"]}
        # Every payee shares the word "payee" with the posted lines' transactions: the
        # lines no rule files are filed by history, by payee or by words.
        assert sources >= ({"history"} if sid == small else {"rule", "history"})
    assert counts[0] == counts[1], sql_sent


def _naive(rules_, payees, memos, amounts):
    return [
        next((r for r in rules_ if r.holds(p, m, a)), None)
        for p, m, a in zip(payees, memos, amounts, strict=True)
    ]


@pytest.mark.parametrize("seed", range(20))
def test_the_set_wise_search_finds_the_first_rule_as_trying_each_in_turn_does(seed):
    """Random lines and rules over a few payees, memos and amounts (so that rules
    overlap, tie and fail on one condition of several): for each line, the rule found is
    the first in order whose every condition holds, or none."""
    rng = random.Random(seed)
    names = ["Shell Station 12", "shell", "Corner Shop", "Bakery  Bun", "SHOP", "Bun"]
    memos = ["card 1234", "rent march", "Shop fee", None]
    lines_ = [
        (rng.choice([*names, None]), rng.choice(memos), rng.randint(-60, 60))
        for _ in range(rng.randint(0, 120))
    ]
    made = []
    for n in range(rng.randint(0, 60)):
        conditions: dict = {}
        while not conditions:
            if rng.random() < 0.3:
                conditions["payee_is"] = rng.choice(names)
            if rng.random() < 0.3:
                conditions["payee_contains"] = rng.choice(["sh", "shop", "bun", "station 1"])
            if rng.random() < 0.3:
                conditions["memo_contains"] = rng.choice(["card", "shop", "r"])
            if rng.random() < 0.4:
                conditions["min_cents"] = rng.randint(-60, 60)
            if rng.random() < 0.4:
                conditions["max_cents"] = rng.randint(-60, 60)
        made.append(Compiled.of(conditions, n, 0, None, 1))
    payees = [text_key(p) for p, _, _ in lines_]
    memo_keys = [text_key(m) for _, m, _ in lines_]
    amounts = [a for _, _, a in lines_]
    assert first_rules(made, payees, memo_keys, amounts) == _naive(made, payees, memo_keys, amounts)
