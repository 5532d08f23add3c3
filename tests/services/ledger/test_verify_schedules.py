"""`ledger-service verify` replays the schedules and their occurrences (docs/schedules.md,
"Audit events") on both stores: books that went through every path (created, changed,
deleted; met, matched, skipped, reopened; posted by the service and by a person; a
correction taking a posting over; a deleted posting) verify, and each change made behind
the service (SQL) is named with exit 1. The test clock's today is 2026-11-21."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from app.extensions import db


def run_verify(runner):
    result = runner.invoke(args=["verify"])
    return result.exit_code, result.output.strip()


def sql(app, statement, **params):
    with app.app_context(), db.engine.begin() as conn:
        conn.execute(text(statement), params)


def one(app, statement, **params):
    with app.app_context(), db.engine.connect() as conn:
        return conn.execute(text(statement), params).scalar()


def make(api, books, name, **extra) -> int:
    body = {
        "name": name,
        "account_id": books["bank"],
        "counter_account_id": books["dues"],
        "amount_cents": 2500,
        "rrule": "FREQ=MONTHLY;BYMONTHDAY=1",
        "starts_on": "2026-09-01",
        **extra,
    }
    made = api.post("/schedules", json=body)
    assert made.status_code == 201, made.get_json()
    return made.get_json()["id"]


def act(api, schedule_id, occurs_on, **body):
    done = api.post(f"/schedules/{schedule_id}/occurrences/{occurs_on}", json=body)
    assert done.status_code == 200, done.get_json()
    return done.get_json()


def transaction(api, books, day, description, cents, counter="dues", replaces=None) -> int:
    body = {
        "occurred_on": day,
        "description": description,
        "entries": [
            {"account_id": books["bank"], "amount_cents": cents},
            {"account_id": books[counter], "amount_cents": -cents},
        ],
    }
    if replaces is not None:
        body["replaces"] = replaces
    made = api.post("/transactions", json=body)
    assert made.status_code == 201, made.get_json()
    return made.get_json()["id"]


@pytest.fixture
def books(club_books):
    return club_books  # tests/services/ledger/conftest.py: bank, dues, rent


@pytest.fixture
def trail(api, books):
    """Books through every path; ids and the transactions by name."""
    anna = make(api, books, "Dues Anna", match_text="anna")
    met = transaction(api, books, "2026-09-02", "Anna", 2500)  # meets 2026-09-01
    act(api, anna, "2026-10-01", action="skip")
    act(api, anna, "2026-10-01", action="reopen")  # stored open
    matched = transaction(api, books, "2026-11-02", "transfer", 2500)  # no name: meets nothing
    act(api, anna, "2026-11-01", action="match", transaction_id=matched)
    person = act(api, anna, "2026-12-01", action="post")["transaction_id"]
    assert api.delete(f"/transactions/{person}").status_code == 204  # stored open
    # Posted by the service on creation: 2026-10-22; then taken over by a correction.
    rent = make(
        api,
        books,
        "Rent",
        counter_account_id=books["rent"],
        amount_cents=-90000,
        rrule="FREQ=MONTHLY;BYMONTHDAY=22",
        mode="post",
        post_from="2026-10-01",
    )
    posted = api.get(f"/schedules/occurrences?schedule_id={rent}").get_json()["items"]
    service_tx = next(i for i in posted if i["occurs_on"] == "2026-10-22")["transaction_id"]
    corrected = transaction(
        api, books, "2026-10-23", "Rent, October", -90000, "rent", replaces=service_tx
    )
    refund = transaction(api, books, "2026-09-03", "Anna again", 2500)  # meets nothing
    assert api.put(f"/schedules/{anna}", json={"window_days": 12}).status_code == 200
    gone = make(api, books, "Old", rrule="FREQ=MONTHLY;BYMONTHDAY=15")
    act(api, gone, "2026-10-15", action="skip")
    assert api.delete(f"/schedules/{gone}").status_code == 204
    assert api.get("/audit/head").status_code == 200  # every event sealed
    return {
        "anna": anna,
        "rent": rent,
        "met": met,
        "matched": matched,
        "corrected": corrected,
        "refund": refund,
    }


def closed(api, schedule_id) -> dict:
    items = api.get(f"/schedules/occurrences?schedule_id={schedule_id}").get_json()["items"]
    return {i["occurs_on"]: (i["status"], i["transaction_id"]) for i in items}


def test_books_through_every_path_verify(runner, api, trail):
    assert closed(api, trail["anna"])["2026-09-01"] == ("met", trail["met"])
    assert closed(api, trail["anna"])["2026-11-01"] == ("met", trail["matched"])
    assert closed(api, trail["rent"])["2026-10-22"] == ("posted", trail["corrected"])
    code, output = run_verify(runner)
    assert code == 0, output
    assert ", 2 schedules" in output


def test_a_correction_that_no_longer_qualifies_leaves_the_posting_open(runner, api, books):
    rent = make(
        api,
        books,
        "Rent",
        counter_account_id=books["rent"],
        amount_cents=-90000,
        rrule="FREQ=MONTHLY;BYMONTHDAY=22",
        mode="post",
        post_from="2026-10-01",
    )
    posted = closed(api, rent)["2026-10-22"][1]
    transaction(api, books, "2026-10-22", "Rent", -80000, "rent", replaces=posted)
    assert closed(api, rent)["2026-10-22"] == ("overdue", None)  # stored open
    code, output = run_verify(runner)
    assert code == 0, output


TAMPERING = {
    "a schedule's amount": (
        "UPDATE schedules SET amount_cents = 9999 WHERE id = {anna}",
        "schedule {anna}: amount_cents is 9999 in the ledger but 2500 in event seq",
    ),
    "a schedule turned off": (
        "UPDATE schedules SET active = false WHERE id = {rent}",
        "schedule {rent}: active is False in the ledger but True in event seq",
    ),
    "a schedule's window, changed back": (
        "UPDATE schedules SET window_days = 10 WHERE id = {anna}",
        "schedule {anna}: window_days is 10 in the ledger but 12 in event seq",
    ),
    "a schedule renamed with its key": (
        "UPDATE schedules SET name = 'Dues Bob', name_key = 'dues bob' WHERE id = {anna}",
        "schedule {anna}: name is 'Dues Bob' in the ledger but 'Dues Anna' in event seq",
    ),
    "a schedule's name key": (
        "UPDATE schedules SET name_key = 'x' WHERE id = {anna}",
        "schedule {anna}: its name key does not match its name",
    ),
    "a schedule removed": (
        "DELETE FROM schedules WHERE id = {rent}",
        "schedule {rent} (event seq",
    ),
    "a schedule added": (
        "INSERT INTO schedules (id, name, name_key, account_id, counter_account_id, "
        "amount_cents, rrule, starts_on, weekend, tolerance_cents, window_days, mode, active, "
        "created_at) VALUES (999, 'Ghost', 'ghost', {bank}, {dues}, 5, 'FREQ=DAILY', "
        "'2026-01-01', 'none', 0, 10, 'expect', true, '2026-01-01 00:00:00')",
        "schedule 999 is in the ledger but no event created it",
    ),
    "a met occurrence skipped": (
        "UPDATE schedule_occurrences SET status = 'skipped', transaction_id = NULL "
        "WHERE schedule_id = {anna} AND occurs_on = '2026-09-01'",
        "the occurrence of schedule {anna} on 2026-09-01 is skipped in the ledger but met by "
        "transaction {met} in event seq",
    ),
    "a matched occurrence given another transaction": (
        "UPDATE schedule_occurrences SET transaction_id = {refund} "
        "WHERE schedule_id = {anna} AND occurs_on = '2026-11-01'",
        "the occurrence of schedule {anna} on 2026-11-01 is met by transaction {refund} in the "
        "ledger but met by transaction {matched} in event seq",
    ),
    "a posting's occurrence removed": (
        "DELETE FROM schedule_occurrences WHERE schedule_id = {rent} AND occurs_on = '2026-10-22'",
        "the occurrence of schedule {rent} on 2026-10-22 (posted, event seq",
    ),
    "a deleted posting's open row removed (the service would post it again)": (
        "DELETE FROM schedule_occurrences WHERE schedule_id = {anna} AND occurs_on = '2026-12-01'",
        "the occurrence of schedule {anna} on 2026-12-01 (open, event seq",
    ),
    "a reopened occurrence skipped again": (
        "UPDATE schedule_occurrences SET status = 'skipped' "
        "WHERE schedule_id = {anna} AND occurs_on = '2026-10-01'",
        "the occurrence of schedule {anna} on 2026-10-01 is skipped in the ledger but open in "
        "event seq",
    ),
    "an occurrence added": (
        "INSERT INTO schedule_occurrences (schedule_id, occurs_on, status) "
        "VALUES ({rent}, '2026-12-22', 'skipped')",
        "the occurrence of schedule {rent} on 2026-12-22 is stored (skipped) but no event says so",
    ),
}


@pytest.mark.parametrize("case", sorted(TAMPERING))
def test_a_change_behind_the_service_is_named(runner, app, books, trail, case):
    statement, named = TAMPERING[case]
    ids = {**books, **trail}
    sql(app, statement.format(**ids))
    code, output = run_verify(runner)
    assert code == 1, output
    assert output.startswith("verify: FAILED: " + named.format(**ids)), output
