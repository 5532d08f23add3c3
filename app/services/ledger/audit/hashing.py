"""The hash rule (docs/ledger.md "What an event says"): canonical JSON, an event's text
from its stored columns, and hash = sha256 hex of the previous hash + that text."""

from __future__ import annotations

import hashlib
import json

GENESIS = "0" * 64  # the "previous hash" of seq 1


def canonical(value) -> str:
    """The canonical JSON (docs/ledger.md): keys sorted, no spaces, non-ASCII as itself."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def json_string(value: str | None) -> str:
    return json.dumps(value, ensure_ascii=False)


def event_text(
    seq: int,
    at: str,
    action: str,
    user_email: str | None,
    via: str,
    client_id: str | None,
    client_name: str | None,
    object_text: str,
) -> str:
    """The canonical JSON of an event without its hash, from its stored columns.

    Written out in sorted key order around the stored object text (already
    canonical), which is exactly canonical() of the whole event.
    """
    return (
        f'{{"action":{json_string(action)},"at":{json_string(at)},"client_id":{json_string(client_id)},'
        f'"client_name":{json_string(client_name)},"object":{object_text},"seq":{int(seq)},'
        f'"user_email":{json_string(user_email)},"via":{json_string(via)}}}'
    )


def chain(previous_hash: str, event: str) -> str:
    """hash = sha256 hex of the previous hash's 64 hex characters + the event's JSON."""
    return hashlib.sha256((previous_hash + event).encode("utf-8")).hexdigest()
