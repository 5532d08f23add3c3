"""Test helper: the audit trail's chain re-computed independently of the service, from
the served JSON (hash = sha256(previous hash + canonical JSON of the event without its
hash)); every served event (`all_events`, following next_cursor); and a transaction's
JSON body (`tx_body`)."""

from __future__ import annotations

import hashlib
import json

ZEROS = "0" * 64


def rehash(previous: str, item: dict) -> str:
    event = {k: v for k, v in item.items() if k != "hash"}
    body = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256((previous + body).encode("utf-8")).hexdigest()


def all_events(api) -> list[dict]:
    """Every served event, oldest first, following next_cursor."""
    items, cursor = [], None
    while True:
        query = "/audit?limit=500" + (f"&cursor={cursor}" if cursor else "")
        page = api.get(query)
        assert page.status_code == 200, page.get_json()
        body = page.get_json()
        items.extend(body["items"])
        cursor = body["next_cursor"]
        if cursor is None:
            return list(reversed(items))


def assert_chain(items: list[dict]) -> None:
    previous = ZEROS
    for n, item in enumerate(items, start=1):
        assert item["seq"] == n
        assert item["hash"] == rehash(previous, item), item
        previous = item["hash"]


def tx_body(day, description, *entries):
    return {
        "occurred_on": day,
        "description": description,
        "entries": [{"account_id": a, "amount_cents": c} for a, c in entries],
    }
