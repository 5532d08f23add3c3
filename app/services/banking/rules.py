"""Filing rules and the suggestion of each waiting line (docs/statements.md, "Rules").

A rule names a counter account and conditions on a statement line: `payee_is`,
`payee_contains`, `memo_contains` (text compared case-folded with inner spaces
collapsed, at most TEXT_MAX characters) and `min_cents`, `max_cents` (inclusive, on
the line's signed amount); every condition given must hold. `account_id` limits the
rule to one statement account (null: any).

A `new` line's suggestion is worked out whenever a statement is read, so a new or
changed rule applies to waiting lines at once:
1. the first active rule, by priority then id, whose every condition holds;
2. else history: the other account of the newest two-entry transaction posted (not
   matched) from a statement line of the same account with the same payee.
A suggestion naming an archived account is left out (it could not be posted).

Creating, changing and deleting a rule are audit events carrying the rule.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson
from sqlalchemy import bindparam, delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError

from ...extensions import db
from ...models import Account, Entry, Rule, Statement, StatementLine, Transaction
from ...store import dialect
from .. import clock
from ..errors import BadRequestError, NotFoundError
from ..ledger import accounts, audit, transactions, validate
from ..ledger.audit import canonical

TEXT_KEYS = ("payee_is", "payee_contains", "memo_contains")
CENT_KEYS = ("min_cents", "max_cents")
TEXT_MAX = 200
DEFAULT_PRIORITY = 100


def text_key(value: str | None) -> str | None:
    """How payees and memos are compared: case-folded, inner spaces collapsed."""
    return None if value is None else accounts.name_key(value)


def _key(value: str) -> str:
    return accounts.name_key(value)


# --- reading and checking a rule's body --------------------------------------------


def _conditions(value) -> dict:
    if not isinstance(value, dict):
        raise BadRequestError("'conditions' must be an object with at least one condition")
    unknown = sorted(set(value) - set(TEXT_KEYS) - set(CENT_KEYS))
    if unknown:
        raise BadRequestError(
            f"'conditions': unknown condition '{unknown[0]}' (known: "
            + ", ".join(TEXT_KEYS + CENT_KEYS)
            + ")"
        )
    if not value:
        raise BadRequestError("'conditions' needs at least one condition")
    parsed: dict = {}
    for key in TEXT_KEYS:
        if key in value:
            parsed[key] = validate.text(f"conditions.{key}", value[key], max_length=TEXT_MAX)
    for key in CENT_KEYS:
        if key in value:
            parsed[key] = validate.integer(f"conditions.{key}", value[key])
    low, high = parsed.get("min_cents"), parsed.get("max_cents")
    if low is not None and high is not None and low > high:
        raise BadRequestError("'conditions.min_cents' is above 'conditions.max_cents'")
    return parsed


def _account_ref(key: str, value) -> int:
    account_id = validate.integer(key, value)
    found = None
    if validate.id_in_range(account_id):
        found = db.session.execute(select(Account.archived).where(Account.id == account_id)).first()
    if found is None:
        raise BadRequestError(f"'{key}': unknown account {account_id}")
    if key == "counter_account_id" and found.archived:
        raise BadRequestError(f"'{key}': account {account_id} is archived")
    return account_id


def _checked(body: dict, current: dict | None = None) -> dict:
    """The rule's fields from a POST body, or a PUT body over `current`."""
    if not isinstance(body, dict):
        raise BadRequestError("the request body must be a JSON object")
    given = {**(current or {}), **body}
    rule = {
        "name": validate.text("name", given.get("name"), max_length=accounts.NAME_MAX),
        "priority": DEFAULT_PRIORITY,
        "account_id": None,
        "description": None,
        "active": True,
    }
    if given.get("priority") is not None:
        rule["priority"] = validate.integer("priority", given["priority"])
    if given.get("account_id") is not None:
        rule["account_id"] = _account_ref("account_id", given["account_id"])
    if "conditions" not in given:
        raise BadRequestError("'conditions' is required: at least one condition")
    rule["conditions"] = _conditions(given["conditions"])
    if given.get("counter_account_id") is None:
        raise BadRequestError("'counter_account_id' is required")
    rule["counter_account_id"] = _account_ref("counter_account_id", given["counter_account_id"])
    if rule["counter_account_id"] == rule["account_id"]:
        raise BadRequestError("'counter_account_id' must differ from 'account_id'")
    if given.get("description") is not None:
        rule["description"] = validate.text(
            "description", given["description"], max_length=transactions.DESCRIPTION_MAX
        )
    if given.get("active") is not None:
        rule["active"] = validate.boolean("active", given["active"])
    return rule


def served(row) -> dict:
    """A rule as the API serves it (docs/openapi.yaml, Rule)."""
    return {
        "id": int(row.id),
        "name": row.name,
        "priority": int(row.priority),
        "account_id": None if row.account_id is None else int(row.account_id),
        "conditions": orjson.loads(row.conditions),
        "counter_account_id": int(row.counter_account_id),
        "description": row.description,
        "active": bool(row.active),
        "created_at": clock.iso(row.created_at),
    }


def audit_object(rule: dict) -> dict:
    """A rule's event object: the rule as served but its created_at (verify compares
    each stored rule with the last one of these, verify_statements.check_rules)."""
    return {"rule": {k: v for k, v in rule.items() if k != "created_at"}}


# --- the routes -----------------------------------------------------------------------


def list_rules() -> list[dict]:
    """GET /rules: every rule, by priority then id."""
    rows = db.session.execute(select(Rule).order_by(Rule.priority, Rule.id)).scalars()
    return [served(r) for r in rows]


def _row(rule_id: int) -> Rule:
    rule = validate.get_row(Rule, rule_id)
    if rule is None:
        raise NotFoundError("no such rule")
    return rule


def get_rule(rule_id: int) -> dict:
    return served(_row(rule_id))


def _name_free(name: str, except_id: int | None = None) -> str:
    key = accounts.name_key(name)
    taken = accounts.name_holder(Rule, key, except_id)
    if taken is not None:
        raise BadRequestError(f"'name': a rule named {taken!r} already exists")
    return key


def _stored(values: dict, key: str) -> dict:
    return {**values, "conditions": canonical(values["conditions"]), "name_key": key}


def create_rule(body: dict) -> dict:
    """POST /rules: 201 the rule; one rule.created event."""
    rule = _checked(body)
    key = _name_free(rule["name"])
    row = Rule(**_stored(rule, key), created_at=clock.now().replace(microsecond=0))
    db.session.add(row)
    try:
        with db.session.begin_nested():
            db.session.flush()
    except IntegrityError:
        raise BadRequestError(f"'name': a rule named {rule['name']!r} already exists") from None
    created = served(row)
    audit.record("rule.created", audit_object(created))
    return created


def update_rule(rule_id: int, body: dict) -> dict:
    """PUT /rules/{id}: a field left out keeps its value; one rule.changed event."""
    current = get_rule(rule_id)
    rule = _checked(body, current)
    key = _name_free(rule["name"], except_id=rule_id)
    db.session.execute(update(Rule).where(Rule.id == rule_id).values(**_stored(rule, key)))
    changed = get_rule(rule_id)
    audit.record("rule.changed", audit_object(changed))
    return changed


def delete_rule(rule_id: int) -> None:
    """DELETE /rules/{id}: one rule.deleted event carrying the rule as it was."""
    gone = get_rule(rule_id)
    db.session.execute(delete(Rule).where(Rule.id == rule_id))
    audit.record("rule.deleted", audit_object(gone))


# --- suggestions ---------------------------------------------------------------------


def holds(conditions: dict, payee_key: str | None, memo_key: str | None, cents: int) -> bool:
    """Does every condition hold for this line?"""
    if "payee_is" in conditions and payee_key != _key(conditions["payee_is"]):
        return False
    if "payee_contains" in conditions and (
        payee_key is None or _key(conditions["payee_contains"]) not in payee_key
    ):
        return False
    if "memo_contains" in conditions and (
        memo_key is None or _key(conditions["memo_contains"]) not in memo_key
    ):
        return False
    if "min_cents" in conditions and cents < conditions["min_cents"]:
        return False
    return not ("max_cents" in conditions and cents > conditions["max_cents"])


def _active_rules(account_id: int) -> list[tuple[int, int, dict, int]]:
    """(rule id, priority, conditions, counter account) of the active rules that may apply to the
    account's lines, in order, their counter account open."""
    rows = db.session.execute(
        select(Rule.id, Rule.priority, Rule.conditions, Rule.counter_account_id)
        .join(Account, Account.id == Rule.counter_account_id)
        .where(
            Rule.active.is_(True),
            Account.archived.is_(False),
            or_(Rule.account_id.is_(None), Rule.account_id == account_id),
        )
        .order_by(Rule.priority, Rule.id)
    )
    return [(int(i), int(p), orjson.loads(c), int(a)) for i, p, c, a in rows]


_POSTED_BY_PAYEE = (
    select(StatementLine.payee_key, Transaction.id, Transaction.occurred_on)
    .join(Statement, Statement.id == StatementLine.statement_id)
    .join(Transaction, Transaction.id == StatementLine.transaction_id)
    .where(
        StatementLine.payee_key.in_(bindparam("keys", expanding=True)),
        StatementLine.status == "posted",
        Statement.account_id == bindparam("account_id"),
    )
)
_TWO_ENTRY_OTHERS = (
    select(Entry.transaction_id, func.min(Entry.account_id), func.max(Entry.account_id))
    .where(Entry.transaction_id.in_(bindparam("ids", expanding=True)))
    .group_by(Entry.transaction_id)
    .having(func.count() == 2)
)


def history(account_id: int, payee_keys: set[str]) -> dict[str, int]:
    """payee key -> the other account of the newest two-entry transaction posted from a
    statement line of the account with that payee (its account open)."""
    posted: dict[str, list[tuple]] = {}
    keys = sorted(payee_keys)
    for chunk in dialect.in_chunks(keys):
        params = {"keys": chunk, "account_id": account_id}
        for key, tx_id, day in db.session.execute(_POSTED_BY_PAYEE, params):
            posted.setdefault(str(key), []).append((day, int(tx_id)))
    tx_ids = sorted({tx for found in posted.values() for _, tx in found})
    other: dict[int, int] = {}
    for chunk in dialect.in_chunks(tx_ids):
        for tx_id, low, high in db.session.execute(_TWO_ENTRY_OTHERS, {"ids": chunk}):
            if (low == account_id) != (high == account_id):
                other[int(tx_id)] = int(high if low == account_id else low)
    usable = _open_accounts(set(other.values()))
    answer = {}
    for key, found in posted.items():
        for _, tx_id in sorted(found, reverse=True):
            if tx_id in other and other[tx_id] in usable:
                answer[key] = other[tx_id]
                break
    return answer


def _open_accounts(ids: set[int]) -> set[int]:
    if not ids:
        return set()
    rows = db.session.execute(
        select(Account.id).where(Account.id.in_(sorted(ids)), Account.archived.is_(False))
    )
    return {int(r) for r in rows.scalars()}


def suggest(account_id: int, lines: Sequence[dict], payee_keys: Sequence[str | None]) -> None:
    """Fill in `suggestion` on the served lines of one account's statement (new lines
    only; null when nothing applies), given each line's stored payee key; see the
    module docstring."""
    waiting = []
    for line, payee in zip(lines, payee_keys, strict=True):
        line["suggestion"] = None
        if line["status"] == "new":
            waiting.append((line, payee))
    if not waiting:
        return
    rules = [r for r in _active_rules(account_id) if r[3] != account_id]
    memo_needed = any("memo_contains" in conditions for _, _, conditions, _ in rules)
    unfiled = []
    for line, payee in waiting:
        memo = text_key(line["memo"]) if memo_needed else None
        for rule_id, _, conditions, counter in rules:
            if holds(conditions, payee, memo, line["amount_cents"]):
                line["suggestion"] = {"account_id": counter, "source": "rule", "rule_id": rule_id}
                break
        else:
            if payee:
                unfiled.append((line, payee))
    if not unfiled:
        return
    known = history(account_id, {payee for _, payee in unfiled})
    for line, payee in unfiled:
        if payee in known:
            line["suggestion"] = {"account_id": known[payee], "source": "history", "rule_id": None}


def preview(body: dict) -> dict:
    """POST /rules/preview: the waiting `new` lines this rule (not stored) would now be
    the suggestion for, across every statement."""
    rule = _checked(body)
    if not rule["active"]:
        return {"matches": []}
    rows = db.session.execute(
        select(
            Statement.account_id,
            StatementLine.statement_id,
            StatementLine.line_id,
            StatementLine.booked_on,
            StatementLine.amount_cents,
            StatementLine.payee,
            StatementLine.memo,
        )
        .join(Statement, Statement.id == StatementLine.statement_id)
        .where(StatementLine.status == "new")
        .order_by(StatementLine.statement_id, StatementLine.line_id)
    ).all()
    by_account: dict[int, list[dict]] = {}
    for row in rows:
        if rule["account_id"] is not None and row.account_id != rule["account_id"]:
            continue
        if row.account_id == rule["counter_account_id"]:
            continue
        if holds(rule["conditions"], text_key(row.payee), text_key(row.memo), row.amount_cents):
            by_account.setdefault(int(row.account_id), []).append(
                {
                    "statement_id": int(row.statement_id),
                    "line_id": int(row.line_id),
                    "booked_on": row.booked_on.isoformat(),
                    "amount_cents": int(row.amount_cents),
                    "payee": row.payee,
                    "memo": row.memo,
                    "status": "new",
                }
            )
    matches = []
    for account_id, lines in by_account.items():
        # It would be the suggestion unless a stored rule comes first (a new rule's
        # id is above every stored one's: a stored rule of equal priority comes first).
        before = [
            conditions
            for _, priority, conditions, counter in _active_rules(account_id)
            if counter != account_id and priority <= rule["priority"]
        ]
        for line in lines:
            payee, memo = text_key(line["payee"]), text_key(line["memo"])
            if not any(holds(c, payee, memo, line["amount_cents"]) for c in before):
                matches.append({k: line[k] for k in _PREVIEW_KEYS})
    matches.sort(key=lambda m: (m["statement_id"], m["line_id"]))
    return {"matches": matches}


_PREVIEW_KEYS = ("statement_id", "line_id", "booked_on", "amount_cents", "payee")
