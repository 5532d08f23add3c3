"""`verify`'s check of the bank statements (docs/statements.md, "Checking"): every
stored statement file's bytes, and every rule, against the audit trail.

The trail's statement.uploaded and statement.deleted events (each carrying the
file's sha256 and size) are replayed in seq order; then every stored statement's
bytes are read, one statement at a time, and their SHA-256 recomputed. A statement
whose bytes, size or very existence differ from what the trail says is named
(`disagreement`, verify's Disagreement). Likewise the rule.created, rule.changed and
rule.deleted events (each carrying the whole rule but its created_at) are replayed,
and every stored rule must be the one its last event carries (check_rules).
"""

from __future__ import annotations

import hashlib
import hmac

import orjson
from sqlalchemy import inspect, select

from ...extensions import db
from ...models import AuditEvent, AuditPending, Rule, Statement
from . import rules

ACTIONS = ("statement.uploaded", "statement.deleted")
RULE_ACTIONS = ("rule.created", "rule.changed", "rule.deleted")


def _events(actions=ACTIONS):
    """(label, seq, action, object) of the events of `actions`, sealed ones then pending."""
    last = 0
    rows = db.session.execute(
        select(AuditEvent.seq, AuditEvent.action, AuditEvent.object)
        .where(AuditEvent.action.in_(actions))
        .order_by(AuditEvent.seq)
    )
    for seq, action, obj in rows:
        last = seq
        yield f"event seq {seq}", seq, action, obj
    pending = db.session.execute(
        select(AuditPending.action, AuditPending.object)
        .where(AuditPending.action.in_(actions))
        .order_by(AuditPending.id)
    )
    for waiting, (action, obj) in enumerate(pending, start=1):
        yield f"a pending event (to follow seq {last})", last + waiting, action, obj


def replay(disagreement) -> dict[int, tuple[str, int, int]]:
    """The statements the trail leaves standing: id -> (sha256, size, seq)."""
    standing: dict[int, tuple[str, int, int]] = {}
    for label, seq, action, text in _events():
        try:
            statement = orjson.loads(text)["statement"]
            statement_id = int(statement["id"])
            if action == "statement.deleted":
                standing.pop(statement_id, None)
            else:
                standing[statement_id] = (str(statement["sha256"]), int(statement["size"]), seq)
        except (KeyError, TypeError, ValueError, orjson.JSONDecodeError) as exc:
            raise disagreement(f"audit {label}: its object is not a {action} object") from exc
    return standing


def check(disagreement) -> int:
    """Compare every stored statement file with the trail; how many there are."""
    if "statements" not in inspect(db.session.connection()).get_table_names():
        return 0  # a schema from before statements (migration 0020)
    recorded = replay(disagreement)
    ids = db.session.execute(select(Statement.id).order_by(Statement.id)).scalars().all()
    for statement_id in ids:
        statement_id = int(statement_id)
        stored_sha, data = db.session.execute(
            select(Statement.sha256, Statement.content_bytes).where(Statement.id == statement_id)
        ).one()
        trail = recorded.pop(statement_id, None)
        if trail is None:
            raise disagreement(
                f"statement {statement_id} is in the ledger but no event uploaded it "
                "(or an event deleted it): it was added outside the service"
            )
        sha256, size, seq = trail
        actual = hashlib.sha256(bytes(data)).hexdigest()
        if not hmac.compare_digest(actual, sha256) or stored_sha != sha256:
            raise disagreement(
                f"statement {statement_id}: its file's SHA-256 is {actual} in the ledger but "
                f"{sha256} in event seq {seq}: the file was replaced or changed outside the "
                "service"
            )
        if len(data) != size:
            raise disagreement(
                f"statement {statement_id}: its file is {len(data)} bytes in the ledger but "
                f"{size} in event seq {seq}: it was changed outside the service"
            )
    if recorded:
        statement_id = min(recorded)
        raise disagreement(
            f"statement {statement_id} (event seq {recorded[statement_id][2]}) is missing "
            "from the ledger: it was removed outside the service"
        )
    return len(ids)


def check_rules(disagreement) -> int:
    """Compare every stored rule with the one its last event carries; how many there
    are. A rule changed, added or removed behind the service files bank lines where
    nobody decided they go, so it is named like a changed statement file."""
    if "rules" not in inspect(db.session.connection()).get_table_names():
        return 0  # a schema from before rules (migration 0020)
    standing: dict[int, tuple[dict, int]] = {}
    for label, seq, action, text in _events(RULE_ACTIONS):
        try:
            rule = orjson.loads(text)["rule"]
            if action == "rule.deleted":
                standing.pop(int(rule["id"]), None)
            else:
                standing[int(rule["id"])] = (rule, seq)
        except (KeyError, TypeError, ValueError, orjson.JSONDecodeError) as exc:
            raise disagreement(f"audit {label}: its object is not a {action} object") from exc
    rows = db.session.execute(select(Rule).order_by(Rule.id)).scalars().all()
    for row in rows:
        stored = rules.audit_object(rules.served(row))["rule"]
        trail = standing.pop(stored["id"], None)
        if trail is None:
            raise disagreement(
                f"rule {stored['id']} is in the ledger but no event created it (or an "
                "event deleted it): it was added outside the service"
            )
        recorded, seq = trail
        for key in sorted(set(stored) | set(recorded)):
            if stored.get(key) != recorded.get(key):
                raise disagreement(
                    f"rule {stored['id']}: {key} is {stored.get(key)!r} in the ledger but "
                    f"{recorded.get(key)!r} after event seq {seq}: it was changed outside "
                    "the service"
                )
    if standing:
        rule_id = min(standing)
        raise disagreement(
            f"rule {rule_id} (event seq {standing[rule_id][1]}) is missing from the "
            "ledger: it was removed outside the service"
        )
    return len(rows)
