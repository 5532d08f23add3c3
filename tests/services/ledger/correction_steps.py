"""Test helper: the steps of the correction tests over HTTP: a hall hire's body (on the
`books` fixture's accounts, optionally replacing a transaction or with an idempotency
key), posting it, the listed ids, and one entry cleared and reconciled."""

from __future__ import annotations


def body(books, cents=6098, day="2026-02-10", description="Hall hire", replaces=None, key=None):
    out = {
        "occurred_on": day,
        "description": description,
        "entries": [
            {"account_id": books["hall"], "amount_cents": cents},
            {"account_id": books["bank"], "amount_cents": -cents},
        ],
    }
    if replaces is not None:
        out["replaces"] = replaces
    if key is not None:
        out["idempotency_key"] = key
    return out


def post(api, payload, key=None):
    headers = {"Idempotency-Key": key} if key else None
    return api.post("/transactions", json=payload, headers=headers)


def posted(api, books, **kw) -> int:
    response = post(api, body(books, **kw))
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def ids(api) -> list[int]:
    return [tx["id"] for tx in api.get("/transactions").get_json()]


def reconcile(api, account_id, tx_id, day="2026-02-28", closing=-6098):
    register = api.get(f"/accounts/{account_id}/register").get_json()
    entry = next(i["entry_id"] for i in register["items"] if i["transaction_id"] == tx_id)
    cleared = api.post(
        f"/accounts/{account_id}/cleared", json={"entry_ids": [entry], "cleared": True}
    )
    assert cleared.status_code == 204, cleared.get_json()
    done = api.post(
        f"/accounts/{account_id}/reconciliations",
        json={"statement_date": day, "closing_balance_cents": closing},
    )
    assert done.status_code == 201, done.get_json()
