"""Idempotent writes (docs/ledger.md "Idempotent writes"): the Idempotency-Key header on
POST /transactions and POST /accounts, on both stores."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Account, IdempotencyKey
from app.services.ledger import idempotency
from tests.support import repetitions
from tests.testkit import ApiClient, row_count


@pytest.fixture
def books(make_account):
    return {"bank": make_account("Bank", "asset"), "food": make_account("Food", "expense")}


def body(books, cents=500, day="2026-02-03", description="Groceries"):
    return {
        "occurred_on": day,
        "description": description,
        "entries": [
            {"account_id": books["food"], "amount_cents": cents},
            {"account_id": books["bank"], "amount_cents": -cents},
        ],
    }


def post(api, payload, key, path="/transactions"):
    headers = {} if key is None else {"Idempotency-Key": key}
    return api.post(path, json=payload, headers=headers)


def test_a_replay_gets_the_same_status_and_body_and_changes_nothing(app, api, books):
    first = post(api, body(books), "k-1")
    assert first.status_code == 201
    assert "Idempotency-Replayed" not in first.headers
    again = post(api, body(books), "k-1")
    assert again.status_code == 201
    assert again.data == first.data  # byte for byte
    assert again.headers["Idempotency-Replayed"] == "true"
    assert row_count(app) == 1
    assert post(api, body(books), None).get_json() != first.get_json()  # no key: a new one
    assert row_count(app) == 2


def test_the_body_is_compared_as_json_not_bytes(app, api, books):
    first = post(api, body(books), "k-json").get_json()
    reordered = {k: body(books)[k] for k in ("entries", "description", "occurred_on")}
    spaced = json.dumps(reordered, indent=4).encode()
    response = api.post(
        "/transactions",
        data=spaced,
        headers={"Idempotency-Key": "k-json", "Content-Type": "application/json"},
    )
    assert response.status_code == 201 and response.get_json() == first
    assert row_count(app) == 1


@pytest.mark.parametrize(
    "change",
    [
        {"description": "Groceries again"},
        {"occurred_on": "2026-02-04"},
        {"note": "an unknown field counts too"},
    ],
)
def test_the_same_key_with_another_body_is_422_and_stores_nothing(app, api, books, change):
    first = post(api, body(books), "k-2")
    assert first.status_code == 201
    response = post(api, {**body(books), **change}, "k-2")
    assert response.status_code == 422
    assert set(response.get_json()) == {"error"}
    assert "already used with a different request" in response.get_json()["error"]
    assert row_count(app) == 1
    assert post(api, body(books), "k-2").get_json() == first.get_json()  # still the first


def test_any_json_body_can_carry_a_key(app, api, books):
    """Python's JSON reads NaN and Infinity in an ignored field; the fingerprint takes them."""
    raw = json.dumps(body(books))[:-1] + ', "note": NaN}'
    headers = {"Idempotency-Key": "k-nan", "Content-Type": "application/json"}
    first = api.post("/transactions", data=raw, headers=headers)
    assert first.status_code == 201
    assert api.post("/transactions", data=raw, headers=headers).data == first.data
    assert row_count(app) == 1


def test_a_key_is_bound_to_its_route(app, api, books):
    assert post(api, body(books), "shared").status_code == 201
    response = post(api, {"name": "Cash", "kind": "asset"}, "shared", path="/accounts")
    assert response.status_code == 422
    assert row_count(app, Account) == 2


@pytest.mark.parametrize(
    "key",
    ["", "x" * 256, "tab\there", "caf\u00e9", "bell\x07", "del\x7f"],
    ids=["empty", "256-chars", "tab", "non-ascii", "control", "del"],
)
def test_a_bad_key_is_400_and_stores_nothing(app, api, books, key):
    headers = {"Idempotency-Key": key.encode("latin-1").decode("latin-1")}
    response = api.post("/transactions", json=body(books), headers=headers)
    assert response.status_code == 400
    assert "'Idempotency-Key' must be 1 to 255 printable ASCII" in response.get_json()["error"]
    assert row_count(app) == 0
    assert row_count(app, IdempotencyKey) == 0


@pytest.mark.parametrize("key", ["a", "x" * 255, "with spaces and ~!@#$%^&*()", "550e8400-e29b"])
def test_keys_of_1_to_255_printable_characters_work(app, api, books, key):
    first = post(api, body(books), key)
    assert first.status_code == 201
    assert post(api, body(books), key).data == first.data
    assert row_count(app) == 1


def test_keys_belong_to_the_user(app, api, books, make_user, mint):
    make_user("bob@example.com")
    bob = ApiClient(api.client, mint("bob@example.com"))
    alice_first = post(api, body(books), "same-key")
    bob_first = post(bob, body(books), "same-key")
    assert bob_first.status_code == 201
    assert bob_first.get_json() != alice_first.get_json()  # his own transaction
    assert post(bob, body(books, description="Bob's other"), "same-key").status_code == 422
    assert post(api, body(books), "same-key").data == alice_first.data
    assert row_count(app) == 2


def test_only_successful_answers_are_kept(app, api, books):
    lopsided = body(books)
    lopsided["entries"][0]["amount_cents"] = 499
    refused = post(api, lopsided, "k-retry")
    assert refused.status_code == 400
    assert post(api, lopsided, "k-retry").status_code == 400  # processed again, not replayed
    assert row_count(app, IdempotencyKey) == 0
    fixed = post(api, body(books), "k-retry")  # the corrected request may use the same key
    assert fixed.status_code == 201
    assert post(api, body(books), "k-retry").data == fixed.data
    assert row_count(app) == 1


def test_accounts_replay_and_refuse_like_transactions(app, api):
    payload = {"name": "Petty cash", "kind": "asset"}
    first = post(api, payload, "acct-1", path="/accounts")
    assert first.status_code == 201
    again = post(api, payload, "acct-1", path="/accounts")
    assert (again.status_code, again.data) == (201, first.data)  # not "duplicate name"
    other = post(api, {"name": "Till", "kind": "asset"}, "acct-1", path="/accounts")
    assert other.status_code == 422
    duplicate = post(api, payload, "acct-2", path="/accounts")
    assert duplicate.status_code == 400  # a new key is a new request: the name is taken
    assert row_count(app, Account) == 1
    assert row_count(app, IdempotencyKey) == 1


def test_answers_are_kept_24_hours_then_the_key_is_new(app, api, books, clock):
    first = post(api, body(books), "k-day")
    clock.advance(hours=24)
    assert post(api, body(books), "k-day").data == first.data  # at 24 h exactly: kept
    assert post(api, body(books, description="Other"), "k-day").status_code == 422
    clock.advance(seconds=1)
    later = post(api, body(books, description="Other"), "k-day")  # expired: a new request
    assert later.status_code == 201 and later.get_json() != first.get_json()
    assert post(api, body(books, description="Other"), "k-day").data == later.data
    assert row_count(app) == 2


def test_expired_keys_are_cleaned_up_as_new_keys_arrive(app, api, books, clock):
    for n in range(3):
        assert post(api, body(books, cents=100 + n), f"old-{n}").status_code == 201
    assert row_count(app, IdempotencyKey) == 3
    clock.advance(hours=24, seconds=1)
    assert post(api, body(books), None).status_code == 201  # no key: no cleanup, no cost
    assert row_count(app, IdempotencyKey) == 3
    # A cleanup runs with every CLEANUP_EVERY-th new key: within that many, the expired
    # keys are gone and only fresh ones remain.
    for n in range(idempotency.CLEANUP_EVERY):
        assert post(api, body(books, cents=200 + n), f"fresh-{n}").status_code == 201
    with app.app_context():
        kept = db.session.execute(select(IdempotencyKey.key)).scalars().all()
        db.session.rollback()
    assert not [key for key in kept if key.startswith("old-")], kept
    assert len(kept) <= idempotency.CLEANUP_EVERY


def test_a_removed_user_takes_their_keys_along(app, api, books, runner):
    assert post(api, body(books), "k-gone").status_code == 201
    assert runner.invoke(args=["user", "rm", "alice@example.com"]).exit_code == 0
    assert row_count(app, IdempotencyKey) == 0


def test_cors_allowed_headers_stay_as_spec_says(client):
    """CORS allows only Content-Type and Authorization cross-origin (docs/ledger.md); the
    web app guards double submission in the page, so Idempotency-Key is not added."""
    from tests.support import WEB_ORIGIN

    response = client.options(
        "/transactions",
        headers={
            "Origin": WEB_ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "Idempotency-Key",
        },
    )
    allowed = response.headers.get("Access-Control-Allow-Headers", "").lower()
    assert "idempotency-key" not in allowed


# --- concurrency: one key, many requests at once, through a real server ---------------------

PARALLEL = 8


def _race(url: str, token: str, payload: dict, key: str) -> list[tuple[int, bytes]]:
    barrier = threading.Barrier(PARALLEL)
    results: list[tuple[int, bytes]] = []

    def send():
        request = urllib.request.Request(
            url,
            data=json.dumps(payload).encode(),
            method="POST",
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "Idempotency-Key": key,
            },
        )
        barrier.wait()
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                results.append((response.status, response.read()))
        except urllib.error.HTTPError as err:
            results.append((err.code, err.read()))

    threads = [threading.Thread(target=send) for _ in range(PARALLEL)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    return results


@pytest.mark.parametrize("rounds", [repetitions("LEDGER_RACE_ROUNDS", 3)])
def test_concurrent_requests_with_one_key_store_exactly_one_result(
    app, live_server, make_user, service_account, rounds
):
    make_user()
    books = {"bank": service_account("Bank", "asset"), "food": service_account("Food", "expense")}
    token = live_server.mint()
    for n in range(rounds):
        results = _race(live_server.origin + "/transactions", token, body(books), f"race-{n}")
        assert len(results) == PARALLEL
        created = [data for status, data in results if status == 201]
        assert created, results
        assert all(status in (201, 409) for status, _ in results), results
        assert len(set(created)) == 1  # every 201 is the same answer
        assert row_count(app) == n + 1
    assert row_count(app, IdempotencyKey) == rounds


def test_concurrent_account_creation_with_one_key_creates_one(app, live_server, make_user):
    make_user()
    token = live_server.mint()
    payload = {"name": "Raced", "kind": "asset"}
    results = _race(live_server.origin + "/accounts", token, payload, "race-account")
    assert all(status in (201, 409) for status, _ in results), results
    assert len({data for status, data in results if status == 201}) == 1
    assert row_count(app, Account) == 1
