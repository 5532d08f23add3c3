"""The lock date (docs/ledger.md "The lock date"): GET/PUT /books/lock, and nothing dated
on or before it is posted or deleted by any path (HTTP, MCP, import), on both stores."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import select

from app import store
from app.extensions import db
from app.models import Account, IdempotencyKey, Settings
from app.services.ledger import lock, transactions
from tests.testkit import row_count

LOCKED = "2025-12-31"


@pytest.fixture
def person(api, session_client):
    """The web app's caller: alice's full cookie session (the bearer `api` is alice too)."""
    return session_client(mfa_complete=True)


@pytest.fixture
def books(make_account):
    return {"bank": make_account("Bank", "asset"), "food": make_account("Food", "expense")}


def body(day, books, cents=500, description="Groceries"):
    return {
        "occurred_on": day,
        "description": description,
        "entries": [
            {"account_id": books["food"], "amount_cents": cents},
            {"account_id": books["bank"], "amount_cents": -cents},
        ],
    }


def stored_lock(app):
    with app.app_context():
        value = db.session.execute(select(Settings.locked_through)).scalar()
        db.session.rollback()
        return value


def set_lock(person, value):
    response = person.put("/books/lock", json={"locked_through": value})
    assert response.status_code == 200, response.get_json()
    assert response.get_json() == {"locked_through": value}
    return response


# --- GET / PUT /books/lock -----------------------------------------------------------


def test_the_lock_starts_null_is_set_moved_and_cleared_by_a_person(api, person):
    assert api.get("/books/lock").get_json() == {"locked_through": None}  # a token may read
    set_lock(person, LOCKED)
    assert person.get("/books/lock").get_json() == {"locked_through": LOCKED}
    assert api.get("/books/lock").get_json() == {"locked_through": LOCKED}
    set_lock(person, "2026-03-31")  # moved forward
    set_lock(person, "2024-06-30")  # and back
    assert api.get("/books/lock").get_json() == {"locked_through": "2024-06-30"}
    set_lock(person, None)
    assert api.get("/books/lock").get_json() == {"locked_through": None}


def test_a_bearer_token_cannot_move_the_lock(app, api, person):
    set_lock(person, LOCKED)
    for value in (None, "2030-01-01"):
        response = api.put("/books/lock", json={"locked_through": value})
        assert response.status_code == 403
        assert set(response.get_json()) == {"error"}
    assert str(stored_lock(app)) == LOCKED


def test_the_lock_needs_a_full_credential(client):
    assert client.get("/books/lock").status_code == 401
    assert client.put("/books/lock", json={"locked_through": LOCKED}).status_code == 401


@pytest.mark.parametrize(
    "payload, words",
    [
        ({}, "locked_through is required"),
        ({"locked_through": "2025-13-01"}, "'locked_through' must be a date"),
        ({"locked_through": "31/12/2025"}, "'locked_through' must be a date"),
        ({"locked_through": "2025-12-31T00:00:00"}, "'locked_through' must be a date"),
        ({"locked_through": 20251231}, "'locked_through' must be a date"),
        ({"locked_through": True}, "'locked_through' must be a date"),
        ({"locked_through": ["2025-12-31"]}, "'locked_through' must be a date"),
        ({"locked_through": ""}, "'locked_through' must be a date"),
        ([LOCKED], "must be a JSON object"),
    ],
)
def test_a_bad_lock_body_is_400_and_changes_nothing(app, person, payload, words):
    set_lock(person, "2024-01-31")
    response = person.put("/books/lock", json=payload)
    assert response.status_code == 400
    assert words in response.get_json()["error"]
    assert str(stored_lock(app)) == "2024-01-31"


def test_a_non_json_lock_body_is_415(app, person):
    response = person.put("/books/lock", data="locked_through=2025-12-31")
    assert response.status_code == 415
    assert stored_lock(app) is None


# --- posting and deleting over HTTP -------------------------------------------------------


def test_posting_on_or_before_the_lock_date_is_409_naming_it(app, api, person, books):
    set_lock(person, LOCKED)
    for day in (LOCKED, "2025-01-01", "1999-07-04"):
        response = api.post("/transactions", json=body(day, books))
        assert response.status_code == 409, day
        error = response.get_json()
        assert set(error) == {"error"}
        assert "locked through 2025-12-31" in error["error"]
        assert day in error["error"]
    assert row_count(app) == 0
    assert api.post("/transactions", json=body("2026-01-01", books)).status_code == 201
    assert row_count(app) == 1


def test_a_bad_posting_in_a_locked_period_is_still_its_own_400(api, person, books):
    set_lock(person, LOCKED)
    lopsided = body("2025-06-01", books)
    lopsided["entries"][0]["amount_cents"] = 499
    response = api.post("/transactions", json=lopsided)
    assert response.status_code == 400
    assert "sum to" in response.get_json()["error"]


def test_deleting_on_or_before_the_lock_date_is_409_and_keeps_it(app, api, person, books):
    old = api.post("/transactions", json=body(LOCKED, books)).get_json()["id"]
    new = api.post("/transactions", json=body("2026-01-01", books)).get_json()["id"]
    set_lock(person, LOCKED)
    response = api.delete(f"/transactions/{old}")
    assert response.status_code == 409
    assert "locked through 2025-12-31" in response.get_json()["error"]
    assert row_count(app) == 2
    assert api.delete(f"/transactions/{new}").status_code == 204
    assert api.delete("/transactions/999999").status_code == 404  # unknown stays 404
    set_lock(person, "2025-12-30")  # moved back a day: the old one may go
    assert api.delete(f"/transactions/{old}").status_code == 204
    assert row_count(app) == 0


def test_a_cookie_session_is_refused_as_well(app, person, books):
    set_lock(person, LOCKED)
    response = person.post("/transactions", json=body("2025-12-01", books))
    assert response.status_code == 409
    assert row_count(app) == 0


def test_an_idempotent_post_refused_by_the_lock_keeps_no_key(app, api, person, books):
    set_lock(person, LOCKED)
    headers = {"Idempotency-Key": "locked-1"}
    assert (
        api.post("/transactions", json=body("2025-12-01", books), headers=headers).status_code
        == 409
    )
    assert row_count(app, IdempotencyKey) == 0
    set_lock(person, None)
    response = api.post("/transactions", json=body("2025-12-01", books), headers=headers)
    assert response.status_code == 201  # processed, not a replay of the refusal
    assert row_count(app) == 1


# --- reconciling a statement -----------------------------------------------------------------


def _bank_entries(api, books) -> dict[str, int]:
    items = api.get(f"/accounts/{books['bank']}/register").get_json()["items"]
    return {i["occurred_on"]: i["entry_id"] for i in items}


def _reconciled(api, books) -> set[int]:
    items = api.get(f"/accounts/{books['bank']}/register").get_json()["items"]
    return {i["entry_id"] for i in items if i["reconciled"]}


def test_a_statement_after_the_lock_that_would_reconcile_a_locked_entry_is_409(
    app, api, person, books
):
    """The statement is dated after the lock, but one of the cleared entries it would mark
    reconciled is dated inside it: refused, naming the lock date; nothing changes."""
    from app.models import AuditEvent, Reconciliation

    api.post("/transactions", json=body("2025-12-20", books, cents=700))
    api.post("/transactions", json=body("2026-01-10", books, cents=300))
    ids = _bank_entries(api, books)
    cleared = api.post(
        f"/accounts/{books['bank']}/cleared",
        json={"entry_ids": sorted(ids.values()), "cleared": True},
    )
    assert cleared.status_code == 204
    set_lock(person, LOCKED)
    events = row_count(app, AuditEvent)
    statement = {"statement_date": "2026-01-31", "closing_balance_cents": -1000}
    response = api.post(f"/accounts/{books['bank']}/reconciliations", json=statement)
    assert response.status_code == 409, response.get_json()
    error = response.get_json()
    assert set(error) == {"error"}
    assert "locked through 2025-12-31" in error["error"]
    assert _reconciled(api, books) == set()
    assert row_count(app, Reconciliation) == 0
    assert row_count(app, AuditEvent) == events
    set_lock(person, None)  # unlocked, the same statement reconciles both
    response = api.post(f"/accounts/{books['bank']}/reconciliations", json=statement)
    assert response.status_code == 201
    assert _reconciled(api, books) == set(ids.values())


def test_a_statement_after_the_lock_over_entries_already_reconciled_inside_it_is_fine(
    api, person, books
):
    """Entries inside the lock that an earlier statement reconciled are not marked again."""
    api.post("/transactions", json=body("2025-12-20", books, cents=700))
    url = f"/accounts/{books['bank']}/reconciliations"
    ids = _bank_entries(api, books)
    api.post(
        f"/accounts/{books['bank']}/cleared",
        json={"entry_ids": [ids["2025-12-20"]], "cleared": True},
    )
    assert (
        api.post(
            url, json={"statement_date": "2025-12-31", "closing_balance_cents": -700}
        ).status_code
        == 201
    )
    set_lock(person, LOCKED)
    api.post("/transactions", json=body("2026-01-10", books, cents=300))
    ids = _bank_entries(api, books)
    api.post(
        f"/accounts/{books['bank']}/cleared",
        json={"entry_ids": [ids["2026-01-10"]], "cleared": True},
    )
    response = api.post(url, json={"statement_date": "2026-01-31", "closing_balance_cents": -1000})
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["entries"] == [ids["2026-01-10"]]


# --- MCP ------------------------------------------------------------------------------------


def test_record_transaction_in_a_locked_period_is_32602_naming_the_date(app, rpc, person, books):
    set_lock(person, LOCKED)
    args = body("2025-11-30", books)
    for reply in (rpc.call("record_transaction", args), rpc.call_2026("record_transaction", args)):
        assert reply["error"]["code"] == -32602
        assert "locked through 2025-12-31" in reply["error"]["message"]
    assert row_count(app) == 0
    assert rpc.result("record_transaction", body("2026-01-01", books))["recorded"] is True


def test_the_http_and_mcp_refusals_are_the_same_words(api, rpc, person, books):
    set_lock(person, LOCKED)
    http = api.post("/transactions", json=body("2025-05-05", books)).get_json()["error"]
    assert rpc.call("record_transaction", body("2025-05-05", books))["error"]["message"] == http


# --- import ----------------------------------------------------------------------------------

JOURNAL = """\
2026-01-02 Pay
    assets:Bank        100.00
    income:Salary

2025-12-31 Late receipt
    expenses:Food        5.00
    assets:Bank
"""


def test_cli_import_names_the_line_and_stores_nothing(app, runner, api, person, tmp_path):
    set_lock(person, LOCKED)
    path = tmp_path / "books.journal"
    path.write_text(JOURNAL)
    result = runner.invoke(args=["import", str(path), "--format", "hledger"])
    assert result.exit_code == 1
    assert "line 5" in result.output
    assert "locked through 2025-12-31" in result.output
    assert row_count(app) == 0
    assert row_count(app, Account) == 0  # the accounts the file would have created: none

    set_lock(person, "2025-12-30")
    result = runner.invoke(args=["import", str(path), "--format", "hledger"])
    assert result.exit_code == 0, result.output
    assert row_count(app) == 2


def test_a_reimport_skips_what_is_already_in_locked_books(app, runner, api, person, tmp_path):
    path = tmp_path / "books.journal"
    path.write_text(JOURNAL)
    assert runner.invoke(args=["import", str(path), "--format", "hledger"]).exit_code == 0
    set_lock(person, LOCKED)
    again = runner.invoke(args=["import", str(path), "--format", "hledger"])
    assert again.exit_code == 0, again.output  # nothing new to post: nothing refused
    assert "2 already present" in again.output
    assert row_count(app) == 2


# --- the service: refuse_if_locked is what other paths call (reconciliation, clearing) ----


def test_refuse_if_locked_is_inclusive_and_silent_when_unlocked(app, person):
    from datetime import date

    from app.services.errors import BooksLocked, ConflictError

    with app.app_context():
        lock.refuse_if_locked(date(1900, 1, 1))  # unlocked: nothing dated is refused
        db.session.rollback()
    set_lock(person, LOCKED)
    with app.app_context():
        with pytest.raises(ConflictError) as refused:
            lock.refuse_if_locked(date(2025, 12, 31))
        assert isinstance(refused.value, BooksLocked) and refused.value.status == 409
        lock.refuse_if_locked(date(2026, 1, 1))
        db.session.rollback()


# --- concurrency: a PUT racing a post --------------------------------------------------------


def _hold_posting(app, books, day, started, release, outcome):
    """A posting's unit of work that has read the lock and written, held open until release."""
    with app.app_context(), store.writing():
        try:
            outcome["id"] = transactions.record_transaction(
                day,
                "in flight",
                [
                    {"account_id": books["food"], "amount_cents": 1},
                    {"account_id": books["bank"], "amount_cents": -1},
                ],
                created_by=None,
            )
            started.set()
            release.wait(30)
            store.commit()
        except Exception as err:  # noqa: BLE001 - reported to the test
            outcome["error"] = err
            started.set()
            store.rollback()


def test_a_lock_put_waits_for_a_posting_that_read_the_old_lock(app, person, books):
    """The post read 'unlocked' and is still open: the PUT lands only after it commits, so the
    post is in the books from before the lock, never slipped in after it."""
    started, release, outcome = threading.Event(), threading.Event(), {}
    poster = threading.Thread(
        target=_hold_posting, args=(app, books, "2025-12-01", started, release, outcome)
    )
    poster.start()
    assert started.wait(30) and "error" not in outcome, outcome
    put = {}
    locker = threading.Thread(
        target=lambda: put.setdefault("response", set_lock(person, LOCKED)), daemon=True
    )
    locker.start()
    locker.join(0.5)
    assert locker.is_alive()  # waiting for the posting
    release.set()
    poster.join(30)
    locker.join(30)
    assert put["response"].status_code == 200
    assert row_count(app) == 1 and str(stored_lock(app)) == LOCKED


def _hold_lock_put(app, value, started, release):
    with app.app_context(), store.writing():
        lock.set_lock({"locked_through": value})
        started.set()
        release.wait(30)
        store.commit()


def test_a_posting_waits_for_a_lock_put_in_flight_and_then_is_refused(app, api, books):
    started, release = threading.Event(), threading.Event()
    locker = threading.Thread(target=_hold_lock_put, args=(app, LOCKED, started, release))
    locker.start()
    assert started.wait(30)
    result = {}
    client = app.test_client()

    def post():
        result["response"] = client.post(
            "/transactions",
            json=body("2025-12-15", books),
            headers={"Authorization": f"Bearer {api.token}"},
        )

    poster = threading.Thread(target=post, daemon=True)
    poster.start()
    poster.join(0.5)
    assert poster.is_alive()  # waiting for the lock's unit
    release.set()
    locker.join(30)
    poster.join(30)
    assert result["response"].status_code == 409
    assert "locked through 2025-12-31" in result["response"].get_json()["error"]
    assert row_count(app) == 0
