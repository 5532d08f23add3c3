"""Statement lines and schedules (docs/schedules.md, "Statement lines"), on both stores: a
`new` line that would meet an open occurrence of a schedule on the statement's account
is suggested the schedule's counter account (`source: "schedule"`, with `schedule_id`
and `occurs_on`), before the rules and the history; posting the line meets that
occurrence, whatever description the person gives it. The test clock's today is
2026-11-21."""

from __future__ import annotations

import pytest

from tests.services.banking.stand_in import BOOKS, line, statement_file, upload_statement

pytestmark = pytest.mark.usefixtures("stand_in_reader")


@pytest.fixture
def book_accounts():
    """The shared books with the rent."""
    return {**BOOKS, "rent": ("Rent", "expense")}


def schedule(api, books, name, amount, rrule, **extra) -> int:
    body = {
        "name": name,
        "account_id": books["bank"],
        "counter_account_id": books["dues"],
        "amount_cents": amount,
        "rrule": rrule,
        "starts_on": "2026-09-01",
        **extra,
    }
    made = api.post("/schedules", json=body)
    assert made.status_code == 201, made.get_json()
    return made.get_json()["id"]


@pytest.fixture
def club(api, books):
    """Dues from Anna and Bert on the 1st (matched by name), the rent on the 22nd (due
    the Monday after a weekend), an inactive catch-all, a rule filing Anna to food."""
    anna = schedule(api, books, "Dues Anna", 2500, "FREQ=MONTHLY;BYMONTHDAY=1", match_text="anna")
    bert = schedule(api, books, "Dues Bert", 2500, "FREQ=MONTHLY;BYMONTHDAY=1", match_text="Bert")
    rent = schedule(
        api,
        books,
        "Rent",
        -90000,
        "FREQ=MONTHLY;BYMONTHDAY=22",
        weekend="after",
        counter_account_id=books["rent"],
    )
    schedule(api, books, "Old dues", 2500, "FREQ=DAILY", active=False)
    skipped = api.post(f"/schedules/{bert}/occurrences/2026-10-01", json={"action": "skip"})
    assert skipped.status_code == 200
    made = api.post(
        "/rules",
        json={
            "name": "Anna's shop",
            "counter_account_id": books["food"],
            "conditions": {"payee_contains": "anna"},
        },
    )
    assert made.status_code == 201, made.get_json()
    return {"anna": anna, "bert": bert, "rent": rent, "rule": made.get_json()["id"]}


LINES = [
    line("2026-11-02", 2500, "ANNA  SMITH"),  # 1: Anna's November
    line("2026-11-03", 2500, "Club", memo="dues bert"),  # 2: Bert's, by the memo
    line("2026-11-04", 2500, "Anna Smith"),  # 3: Anna's November is line 1's: the rule
    line("2026-11-23", -90000, "Landlord"),  # 4: the rent of Sunday 2026-11-22
    line("2026-11-05", 2400, "Anna"),  # 5: another amount: the rule
    line("2026-11-02", 2500, "Carl"),  # 6: no schedule's text: nothing
    line("2026-10-02", 2500, "Bert"),  # 7: Bert's October is skipped: nothing
    line("2026-10-20", 2500, "Anna"),  # 8: 19 days after Anna's October: the rule
]


def suggestions(api, sid) -> list:
    return [x["suggestion"] for x in api.get(f"/statements/{sid}").get_json()["lines"]]


def by_schedule(schedule_id, occurs_on, counter) -> dict:
    return {
        "account_id": counter,
        "source": "schedule",
        "rule_id": None,
        "schedule_id": schedule_id,
        "occurs_on": occurs_on,
    }


def test_a_line_meeting_an_occurrence_is_suggested_its_schedule_first(api, books, club):
    sid = upload_statement(api, books["bank"], statement_file(*LINES)).get_json()["id"]
    by_rule = {"account_id": books["food"], "source": "rule", "rule_id": club["rule"]}
    assert suggestions(api, sid) == [
        by_schedule(club["anna"], "2026-11-01", books["dues"]),
        by_schedule(club["bert"], "2026-11-01", books["dues"]),
        by_rule,
        by_schedule(club["rent"], "2026-11-22", books["rent"]),
        by_rule,
        None,
        None,
        by_rule,
    ]
    # The schedule turned off: the rule again (and nothing for the rent).
    assert api.put(f"/schedules/{club['anna']}", json={"active": False}).status_code == 200
    assert suggestions(api, sid)[:4] == [
        by_rule,
        by_schedule(club["bert"], "2026-11-01", books["dues"]),
        by_rule,
        by_schedule(club["rent"], "2026-11-22", books["rent"]),
    ]


def test_the_earliest_due_then_the_lowest_schedule_id(api, books):
    late = schedule(api, books, "Second", 700, "FREQ=MONTHLY;BYMONTHDAY=5")
    early = schedule(api, books, "First", 700, "FREQ=MONTHLY;BYMONTHDAY=3")
    same = schedule(api, books, "Third", 700, "FREQ=MONTHLY;BYMONTHDAY=3")
    data = statement_file(*(line("2026-11-04", 700, f"p{n}") for n in range(4)))
    sid = upload_statement(api, books["bank"], data).get_json()["id"]
    # Due first, then the lowest id ("Second" has the lowest, but is due later); the
    # fourth line has no open occurrence left within ten days.
    assert suggestions(api, sid) == [
        by_schedule(early, "2026-11-03", books["dues"]),
        by_schedule(same, "2026-11-03", books["dues"]),
        by_schedule(late, "2026-11-05", books["dues"]),
        None,
    ]


def test_another_account_has_no_schedule_suggestion(api, books, club):
    sid = upload_statement(api, books["card"], statement_file(LINES[0])).get_json()["id"]
    assert suggestions(api, sid) == [
        {"account_id": books["food"], "source": "rule", "rule_id": club["rule"]}
    ]


def occurrence(api, schedule_id, occurs_on) -> dict:
    items = api.get(f"/schedules/occurrences?schedule_id={schedule_id}").get_json()["items"]
    return next(i for i in items if i["occurs_on"] == occurs_on)


def test_posting_the_line_meets_that_occurrence(api, books, club):
    sid = upload_statement(api, books["bank"], statement_file(*LINES)).get_json()["id"]
    posts = [
        # A description without Anna's name: the line's suggestion still holds.
        {"line_id": 1, "action": "post", "account_id": books["dues"], "description": "Member"},
        {"line_id": 2, "action": "post", "account_id": books["dues"]},
        {"line_id": 4, "action": "post", "account_id": books["rent"], "description": "Flat"},
    ]
    done = api.post(f"/statements/{sid}/lines", json={"lines": posts})
    assert done.status_code == 200, done.get_json()
    lines = done.get_json()["lines"]
    for schedule_id, occurs_on, n in (
        (club["anna"], "2026-11-01", 0),
        (club["bert"], "2026-11-01", 1),
        (club["rent"], "2026-11-22", 3),
    ):
        met = occurrence(api, schedule_id, occurs_on)
        assert (met["status"], met["transaction_id"]) == ("met", lines[n]["transaction_id"])
    events = api.get("/audit?action=occurrence.met").get_json()["items"]
    assert len(events) == 3
    # Line 3 (Anna, 2026-11-04) has no open occurrence of Anna's left to meet: the rule.
    assert lines[2]["suggestion"]["source"] == "rule"


def test_posting_the_line_elsewhere_meets_nothing(api, books, club):
    sid = upload_statement(api, books["bank"], statement_file(LINES[0])).get_json()["id"]
    posts = [{"line_id": 1, "action": "post", "account_id": books["food"]}]
    assert api.post(f"/statements/{sid}/lines", json={"lines": posts}).status_code == 200
    assert occurrence(api, club["anna"], "2026-11-01")["status"] == "overdue"
