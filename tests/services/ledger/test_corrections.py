"""Corrections in one step (docs/ledger.md, "Corrections in one step"): `replaces` on
POST /transactions and on the record_transaction tool stores the replacement and deletes
the original in one database transaction, or refuses and stores nothing; on both stores."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import IdempotencyKey, Transaction
from app.services.ledger import transactions
from tests.services.ledger.correction_steps import body, ids, post, posted, reconcile
from tests.testkit import events, row_count

LOCKED = "2026-01-31"


@pytest.fixture
def books(make_account):
    return {
        "bank": make_account("Bank", "asset"),
        "hall": make_account("Hall hire", "expense"),
        "food": make_account("Food", "expense"),
    }


@pytest.fixture
def person(api, session_client):
    """alice's full cookie session (the web app's caller; `api` is alice's bearer token)."""
    return session_client(mfa_complete=True)


def set_lock(person, value):
    response = person.put("/books/lock", json={"locked_through": value})
    assert response.status_code == 200, response.get_json()


# --- HTTP ----------------------------------------------------------------------------------


def test_a_correction_posts_the_replacement_and_deletes_the_original_in_one_step(
    app, api, books, runner
):
    original = posted(api, books)
    before = events(api, oldest_first=True)
    response = post(api, body(books, cents=6100, replaces=original))
    assert response.status_code == 201
    new_id = response.get_json()["id"]
    assert set(response.get_json()) == {"id"}
    assert ids(api) == [new_id]
    listed = api.get("/transactions").get_json()[0]
    assert [e["amount_cents"] for e in listed["entries"]] == [6100, -6100]

    # The trail: the posting (carrying replaces) then the deletion, adjacent, nothing else.
    trail = events(api, oldest_first=True)[len(before) :]
    assert [e["action"] for e in trail] == ["transaction.posted", "transaction.deleted"]
    assert trail[1]["seq"] == trail[0]["seq"] + 1
    assert trail[0]["object"]["replaces"] == original
    assert trail[0]["object"]["transaction"]["id"] == new_id
    assert trail[1]["object"]["transaction"]["id"] == original
    assert "replaces" not in trail[1]["object"]
    assert [e["amount_cents"] for e in trail[1]["object"]["transaction"]["entries"]] == [
        6098,
        -6098,
    ]

    # A correction of the correction, then verify replays them all.
    again = post(api, body(books, cents=6101, description="Hall hire (Feb)", replaces=new_id))
    assert again.status_code == 201
    assert ids(api) == [again.get_json()["id"]]
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("verify: ok")


@pytest.mark.parametrize("bad", [0, -4, "1", 1.0, 1.5, True, [1], {"id": 1}, "abc"])
def test_replaces_that_is_not_a_positive_integer_is_400_naming_it(app, api, books, bad):
    original = posted(api, books)
    trail = len(events(api))
    response = post(api, body(books, cents=6100, replaces=bad))
    assert response.status_code == 400
    assert "'replaces'" in response.get_json()["error"]
    assert ids(api) == [original]
    assert len(events(api)) == trail


def test_replaces_null_is_no_correction(api, books):
    original = posted(api, books)
    payload = body(books, cents=6100)
    payload["replaces"] = None
    response = post(api, payload)
    assert response.status_code == 201
    assert sorted(ids(api)) == sorted([original, response.get_json()["id"]])


@pytest.mark.parametrize("unknown", [999_999, 2**63 - 1, 2**70])
def test_an_unknown_original_is_404_and_nothing_is_stored(app, api, books, unknown):
    original = posted(api, books)
    trail = len(events(api))
    response = post(api, body(books, cents=6100, replaces=unknown))
    assert response.status_code == 404
    assert set(response.get_json()) == {"error"}
    assert ids(api) == [original]
    assert len(events(api)) == trail


def test_a_deleted_original_cannot_be_replaced(api, books):
    original = posted(api, books)
    assert api.delete(f"/transactions/{original}").status_code == 204
    assert post(api, body(books, replaces=original)).status_code == 404
    assert ids(api) == []


def test_a_reconciled_original_is_409_and_nothing_is_stored(app, api, books):
    original = posted(api, books)
    reconcile(api, books["bank"], original)
    trail = len(events(api))
    response = post(api, body(books, cents=6100, replaces=original))
    assert response.status_code == 409
    assert "reconciled" in response.get_json()["error"]
    assert set(response.get_json()) == {"error"}
    assert ids(api) == [original]
    assert len(events(api)) == trail
    assert row_count(app) == 1


def test_a_locked_original_is_409_naming_the_lock_date(app, api, person, books):
    original = posted(api, books, day="2026-01-15")
    set_lock(person, LOCKED)
    trail = len(events(api))
    response = post(api, body(books, cents=6100, day="2026-02-10", replaces=original))
    assert response.status_code == 409
    assert LOCKED in response.get_json()["error"]
    assert ids(api) == [original]
    assert len(events(api)) == trail


@pytest.mark.parametrize("day", [LOCKED, "2026-01-02"])
def test_a_replacement_dated_on_or_before_the_lock_date_is_409(app, api, person, books, day):
    original = posted(api, books, day="2026-02-10")
    set_lock(person, LOCKED)
    trail = len(events(api))
    response = post(api, body(books, cents=6100, day=day, replaces=original))
    assert response.status_code == 409
    assert LOCKED in response.get_json()["error"]
    assert ids(api) == [original]
    assert len(events(api)) == trail


def test_every_rule_of_a_new_transaction_applies_and_the_original_stays(app, api, books):
    original = posted(api, books)
    lopsided = body(books, replaces=original)
    lopsided["entries"][0]["amount_cents"] = 6099
    blank = body(books, description="  ", replaces=original)
    bad_day = body(books, day="2026-02-30", replaces=original)
    unknown_account = body(books, replaces=original)
    unknown_account["entries"][0]["account_id"] = 987_654
    assert api.put(f"/accounts/{books['food']}", json={"archived": True}).status_code == 200
    archived = body(books, replaces=original)
    archived["entries"][0]["account_id"] = books["food"]
    for payload in (lopsided, blank, bad_day, unknown_account, archived):
        response = post(api, payload)
        assert response.status_code == 400, (payload, response.get_json())
    assert ids(api) == [original]
    assert row_count(app) == 1


def test_a_fault_after_the_posting_leaves_nothing_behind(app, api, books, monkeypatch):
    """The replacement and the deletion are one database transaction: a failure while
    deleting the original rolls the replacement back too."""
    original = posted(api, books)
    trail = len(events(api))

    def broken(header):
        raise RuntimeError("the disk is on fire")

    monkeypatch.setattr(transactions, "_delete", broken)
    monkeypatch.setitem(app.config, "PROPAGATE_EXCEPTIONS", False)
    response = post(api, body(books, cents=6100, replaces=original))
    assert response.status_code == 500
    assert "disk" not in response.get_data(as_text=True)
    monkeypatch.undo()
    assert ids(api) == [original]
    assert len(events(api)) == trail


def test_an_idempotent_replay_returns_the_first_answer_and_changes_nothing(app, api, books):
    original = posted(api, books)
    payload = body(books, cents=6100, replaces=original)
    first = post(api, payload, key="fix-hall-hire")
    assert first.status_code == 201
    trail = len(events(api))
    again = post(api, payload, key="fix-hall-hire")
    assert again.status_code == 201
    assert again.get_json() == first.get_json()
    assert again.headers.get("Idempotency-Replayed") == "true"
    assert ids(api) == [first.get_json()["id"]]
    assert len(events(api)) == trail
    # The same key for another correction is refused, and changes nothing.
    other = post(api, body(books, cents=6200, replaces=original), key="fix-hall-hire")
    assert other.status_code == 422
    assert ids(api) == [first.get_json()["id"]]
    assert row_count(app, IdempotencyKey) == 1


def test_a_refused_correction_keeps_no_key(app, api, books):
    original = posted(api, books)
    reconcile(api, books["bank"], original)
    refused = post(api, body(books, cents=6100, replaces=original), key="k1")
    assert refused.status_code == 409
    assert row_count(app, IdempotencyKey) == 0


# --- MCP -----------------------------------------------------------------------------------


def test_the_tool_corrects_and_never_lists_the_replaced_one_as_a_duplicate(api, rpc, books):
    # Only the description was wrong: the original has the very same entries, within
    # 3 days, so it would be a possible duplicate had it not been replaced.
    original = rpc.result("record_transaction", body(books))["id"]
    look_alike = rpc.result("record_transaction", body(books, day="2026-02-11"))["id"]
    result = rpc.result(
        "record_transaction", body(books, description="Hall hire, February", replaces=original)
    )
    assert result["recorded"] is True
    assert result["replaced"] == original
    assert result["possible_duplicates"] == [look_alike]
    assert sorted(ids(api)) == sorted([look_alike, result["id"]])
    posting = events(api, "transaction.posted")[0]
    assert posting["object"]["replaces"] == original
    assert posting["via"] == "mcp"
    plain = rpc.result("record_transaction", body(books, cents=1))
    assert "replaced" not in plain


def _refusal(rpc, arguments) -> dict:
    reply = rpc.call("record_transaction", arguments)
    assert "error" in reply, reply
    assert reply["error"]["code"] == -32602, reply
    return reply["error"]


def test_every_refusal_of_the_tool_is_32602_and_stores_nothing(app, api, rpc, person, books):
    original = rpc.result("record_transaction", body(books, day="2026-02-10"))["id"]
    reconciled = rpc.result("record_transaction", body(books, cents=100, day="2026-02-11"))["id"]
    reconcile(api, books["bank"], reconciled, closing=-100)
    early = rpc.result("record_transaction", body(books, cents=7, day="2026-01-20"))["id"]
    set_lock(person, LOCKED)
    trail = len(events(api))
    stored = sorted(ids(api))

    assert "'replaces'" in _refusal(rpc, body(books, replaces="1"))["message"]
    assert "'replaces'" in _refusal(rpc, body(books, replaces=0))["message"]
    assert "'replaces'" in _refusal(rpc, body(books, replaces=True))["message"]
    assert "999999" in _refusal(rpc, body(books, replaces=999_999))["message"]
    assert "reconciled" in _refusal(rpc, body(books, replaces=reconciled))["message"]
    assert LOCKED in _refusal(rpc, body(books, replaces=early))["message"]
    assert LOCKED in _refusal(rpc, body(books, day="2026-01-05", replaces=original))["message"]
    lopsided = body(books, replaces=original)
    lopsided["entries"][0]["amount_cents"] = 1
    _refusal(rpc, lopsided)

    assert sorted(ids(api)) == stored
    assert len(events(api)) == trail


def test_the_tool_replays_a_correction_by_its_key(app, api, rpc, books):
    original = rpc.result("record_transaction", body(books))["id"]
    arguments = body(books, cents=6100, replaces=original, key="assistant-fix")
    first = rpc.call("record_transaction", arguments)
    assert first["result"]["structuredContent"]["replaced"] == original
    trail = len(events(api))
    again = rpc.call("record_transaction", arguments)
    assert again["result"] == first["result"]
    assert len(events(api)) == trail
    assert ids(api) == [first["result"]["structuredContent"]["id"]]


def test_the_tool_describes_replaces(rpc):
    tools = {t["name"]: t for t in rpc.request("tools/list")["result"]["tools"]}
    record = tools["record_transaction"]
    schema = record["inputSchema"]["properties"]["replaces"]
    assert schema["type"] == "integer" and schema["minimum"] == 1
    assert "replaces" not in record["inputSchema"]["required"]
    assert "replaced: <id>" in record["description"]
    assert "reconciled" in record["description"]


# --- concurrency: many corrections of one original at once, through a real server ---------

PARALLEL = 6


def test_concurrent_corrections_of_one_original_leave_exactly_one(
    app, live_server, make_user, service_account
):
    """Each correction first locks its original: one wins, the others find it gone (404);
    the books never hold two replacements or the original beside one."""
    import json
    import threading
    import urllib.error
    import urllib.request

    make_user()
    books = {"bank": service_account("Bank", "asset"), "hall": service_account("Hall", "expense")}
    token = live_server.mint()

    def send(payload):
        request = urllib.request.Request(
            live_server.origin + "/transactions",
            data=json.dumps(payload).encode(),
            method="POST",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    status, created = send(body(books))
    assert status == 201, created
    original = created["id"]
    barrier = threading.Barrier(PARALLEL)
    results: list = []

    def correct(cents):
        barrier.wait()
        results.append(send(body(books, cents=cents, replaces=original)))

    threads = [threading.Thread(target=correct, args=(7000 + n,)) for n in range(PARALLEL)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    statuses = sorted(status for status, _ in results)
    assert statuses == [201] + [404] * (PARALLEL - 1), results
    winner = next(data["id"] for status, data in results if status == 201)
    with app.app_context():
        left = db.session.execute(select(Transaction.id)).scalars().all()
        db.session.rollback()
    assert left == [winner]
