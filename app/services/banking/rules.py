"""Filing rules and the suggestion of each waiting line (docs/statements.md, "Rules").

A rule names a counter account and conditions on a statement line: `payee_is`,
`payee_contains`, `memo_contains` (text compared case-folded with inner spaces
collapsed, at most TEXT_MAX characters) and `min_cents`, `max_cents` (inclusive, on
the line's signed amount); every condition given must hold. `account_id` limits the
rule to one statement account (null: any).

A `new` line's suggestion is worked out whenever a statement is read, so a new or
changed rule applies to waiting lines at once:
0. first of all, a schedule: the counter account of the schedule on the statement's
   account whose open occurrence the line would meet (schedule_meeting.for_lines;
   docs/schedules.md, "Statement lines"), with its schedule_id and occurs_on;
1. else the first active rule, by priority then id, whose every condition holds;
2. else history, learnt from the whole books: the other account of the newest
   two-entry transaction with an entry in the statement's account that was posted or
   matched from a line (of any statement of that account) with the same payee key;
3. else the other account of the two-entry transaction of that account whose
   description shares the most words with the line's payee (words: runs of letters
   and digits, case-folded, at least WORD_MIN characters; at least one shared; on a tie
   the later occurred_on, then the higher id).
"Newest" is by occurred_on, then id. Only transactions whose other account is open
count (a suggestion could not be posted to an archived account).

Limits and speed (docs/statements.md, "Limits and speed"): at most RULES_MAX rules are
kept; the suggestions of a statement are worked out set-wise (first_rules: each rule
takes the lines still open among its candidates, found by a dict, a bisection or one
scan of the lines' joined text, never by trying every rule on every line), from the
rules fetched once and the history in two queries (the payees' postings, and the
account's two-entry transactions with their descriptions, whose words are indexed once
per read: each payee then counts the shared words of the descriptions holding one of
its words, not of every description; only the transactions that an index of the
descriptions' words finds, one query more: `described`, PostgreSQL's GIN index of
migration 0025, SQLite's FTS5 table of migration 0026); the preview reads at most the
PREVIEW_LINES_MAX newest waiting lines.

Creating, changing and deleting a rule are audit events carrying the rule.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import date
from itertools import chain
from typing import NamedTuple

import orjson
from sqlalchemy import (
    BigInteger,
    String,
    and_,
    any_,
    bindparam,
    case,
    delete,
    func,
    or_,
    select,
    text,
    type_coerce,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import aliased

from ...extensions import db
from ...models import Account, Entry, Rule, Statement, StatementLine, Transaction
from ...store import dialect
from .. import clock
from ..errors import BadRequestError, ConflictError, NotFoundError
from ..ledger import accounts, audit, schedule_meeting, search, transactions, validate
from ..ledger.audit import canonical
from . import status

TEXT_KEYS = ("payee_is", "payee_contains", "memo_contains")
CENT_KEYS = ("min_cents", "max_cents")
TEXT_MAX = 200
DEFAULT_PRIORITY = 100
# At most this many rules are kept (the next is refused with 409): suggestions try every
# rule on every waiting line of a statement, so their number is bounded like the lines'.
RULES_MAX = 1000
# POST /rules/preview reads at most this many waiting lines, the newest first.
PREVIEW_LINES_MAX = 5000
# An amount range holding at most 1/_FEW of the open lines gives a rule's candidates
# rather than a scan of the text (a range is found by bisection, the text by a scan).
_FEW = 16
_CREATE_LOCK = 0x72756C65  # PostgreSQL advisory lock key for the RULES_MAX limit
# A word: a run of letters and digits (no underscore), at least WORD_MIN characters.
_WORD = re.compile(r"[^\W_]+")
WORD_MIN = 3
# The statuses of the lines whose transactions teach the payee history.
TAUGHT_BY = ("posted", "matched")


def text_key(value: str | None) -> str | None:
    """How payees and memos are compared: case-folded, inner spaces collapsed."""
    return None if value is None else accounts.name_key(value)


def _key(value: str) -> str:
    return accounts.name_key(value)


def words(value: str | None) -> frozenset[str]:
    """A text's words: its runs of letters and digits, case-folded, of at least WORD_MIN
    characters (docs/statements.md, "Suggestions")."""
    if not value:
        return frozenset()
    return frozenset(w for w in _WORD.findall(value.casefold()) if len(w) >= WORD_MIN)


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
    """One rule as served; 404 when unknown."""
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
    """POST /rules: 201 the rule; one rule.created event; 409 once RULES_MAX are kept."""
    if dialect.is_postgresql():
        # Serialise creations so two at RULES_MAX - 1 rules cannot both pass the limit
        # (SQLite's writers are one at a time already).
        db.session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _CREATE_LOCK})
    kept = db.session.execute(select(func.count()).select_from(Rule)).scalar_one()
    if kept >= RULES_MAX:
        raise ConflictError(
            f"at most {RULES_MAX} rules are kept, and there are {kept}: delete or change "
            "one instead of making another"
        )
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


class Compiled(NamedTuple):
    """A rule ready to be tried on lines: its text conditions compared as keys once."""

    rule_id: int
    priority: int
    account_id: int | None
    counter: int
    payee_is: str | None
    payee_contains: str | None
    memo_contains: str | None
    low: int | None
    high: int | None

    @classmethod
    def of(
        cls,
        conditions: dict,
        rule_id: int = 0,
        priority: int = DEFAULT_PRIORITY,
        account_id: int | None = None,
        counter: int = 0,
    ) -> Compiled:
        """The rule of these conditions (the other fields: what a suggestion names)."""

        def key(name: str) -> str | None:
            return None if name not in conditions else _key(conditions[name])

        return cls(
            rule_id,
            priority,
            account_id,
            counter,
            key("payee_is"),
            key("payee_contains"),
            key("memo_contains"),
            conditions.get("min_cents"),
            conditions.get("max_cents"),
        )

    def holds(self, payee_key: str | None, memo_key: str | None, cents: int) -> bool:
        """Does every condition hold for a line of these keys and amount?"""
        if self.payee_is is not None and payee_key != self.payee_is:
            return False
        if self.payee_contains is not None and (
            payee_key is None or self.payee_contains not in payee_key
        ):
            return False
        if self.memo_contains is not None and (
            memo_key is None or self.memo_contains not in memo_key
        ):
            return False
        if self.low is not None and cents < self.low:
            return False
        return self.high is None or cents <= self.high


def holds(conditions: dict, payee_key: str | None, memo_key: str | None, cents: int) -> bool:
    """Does every condition hold for this line?"""
    return Compiled.of(conditions).holds(payee_key, memo_key, cents)


class _Texts:
    """The keys of some lines joined into one text, so that finding which lines contain a
    part is one scan in C rather than one comparison per line. Keys never hold a line
    break (name_key collapses every kind of space), so no part spans two lines."""

    def __init__(self, open_lines: list[int], keys: Sequence[str | None]):
        self.owners = [i for i in open_lines if keys[i] is not None]
        self.text = "\n".join(keys[i] or "" for i in self.owners)
        self.starts = []
        at = 0
        for i in self.owners:
            self.starts.append(at)
            at += len(keys[i] or "") + 1
        self.starts.append(at)  # past the end: find() from there finds nothing

    def count(self, part: str) -> int:
        """At least the number of lines containing part (a line may contain it twice)."""
        return self.text.count(part)

    def containing(self, part: str) -> list[int]:
        """The lines whose key contains part, each once."""
        found = []
        at = self.text.find(part)
        while at >= 0:
            k = bisect_right(self.starts, at) - 1
            found.append(self.owners[k])
            at = self.text.find(part, self.starts[k + 1])
        return found


class _Open:
    """The lines still without a rule, indexed by payee key, by amount and by the text
    of their payee and memo keys; built again when half of them have found a rule, so a
    rule's candidates are mostly lines still open."""

    def __init__(
        self,
        open_lines: list[int],
        payees: Sequence[str | None],
        memos: Sequence[str | None] | None,
        amounts: Sequence[int],
    ):
        self.size = len(open_lines)
        self.by_payee: dict[str, list[int]] = {}
        for i in open_lines:
            if payees[i] is not None:
                self.by_payee.setdefault(payees[i] or "", []).append(i)
        by_amount = sorted(open_lines, key=amounts.__getitem__)
        self.by_amount = by_amount
        self.amounts = [amounts[i] for i in by_amount]
        self.payees = _Texts(open_lines, payees)
        self.memos = None if memos is None else _Texts(open_lines, memos)

    def candidates(self, rule: Compiled) -> list[int]:
        """Lines that may satisfy the rule (every open line that does is among them): those
        of its most selective condition. A payee's lines come from a dict, an amount
        range's by bisection (taken when it holds few lines), a part of a payee or memo
        from one scan of their joined text (of two parts, the rarer)."""
        if rule.payee_is is not None:
            return self.by_payee.get(rule.payee_is, [])
        if rule.memo_contains is not None and self.memos is None:
            return []  # no line has a memo
        texts = []
        if rule.payee_contains is not None:
            texts.append((self.payees, rule.payee_contains))
        if rule.memo_contains is not None and self.memos is not None:
            texts.append((self.memos, rule.memo_contains))
        if rule.low is not None or rule.high is not None:
            first = 0 if rule.low is None else bisect_left(self.amounts, rule.low)
            last = len(self.amounts) if rule.high is None else bisect_right(self.amounts, rule.high)
            if last <= first or not texts or (last - first) * _FEW <= self.size:
                return self.by_amount[first:last]
        if len(texts) == 2:
            texts.sort(key=lambda found: found[0].count(found[1]))
        joined, part = texts[0]
        return joined.containing(part)


def first_rules(
    rules: Sequence[Compiled],
    payees: Sequence[str | None],
    memos: Sequence[str | None] | None,
    amounts: Sequence[int],
) -> list[Compiled | None]:
    """For each line (its payee key, memo key and amount), the first of rules, in the
    order given, whose every condition holds; None when none does.

    Set-wise: each rule in turn takes the lines still open among its candidates (a
    payee's lines by a dict, an amount range by bisection, a part of a payee or memo by
    one scan of their joined text), so the cost follows the candidates, not lines times
    rules. memos may be None when no rule has memo_contains."""
    chosen: list[Compiled | None] = [None] * len(amounts)
    open_lines = list(range(len(amounts)))
    remaining = len(open_lines)
    index = _Open(open_lines, payees, memos, amounts)
    memo_of: Sequence[str | None] = memos if memos is not None else [None] * len(amounts)
    for rule in rules:
        for i in index.candidates(rule):
            if chosen[i] is None and rule.holds(payees[i], memo_of[i], amounts[i]):
                chosen[i] = rule
                remaining -= 1
        if not remaining:
            break
        if 2 * remaining < index.size:
            open_lines = [i for i in open_lines if chosen[i] is None]
            index = _Open(open_lines, payees, memos, amounts)
    return chosen


def _active_rules(account_id: int | None = None) -> list[Compiled]:
    """The active rules whose counter account is open, by priority then id: those that may
    apply to the lines of account_id (not limited to another account, not filing to the
    account itself), or every one when account_id is None."""
    query = (
        select(Rule.id, Rule.priority, Rule.account_id, Rule.conditions, Rule.counter_account_id)
        .join(Account, Account.id == Rule.counter_account_id)
        .where(Rule.active.is_(True), Account.archived.is_(False))
        .order_by(Rule.priority, Rule.id)
    )
    if account_id is not None:
        query = query.where(
            or_(Rule.account_id.is_(None), Rule.account_id == account_id),
            Rule.counter_account_id != account_id,
        )
    return [
        Compiled.of(orjson.loads(c), int(i), int(p), None if a is None else int(a), int(counter))
        for i, p, a, c, counter in db.session.execute(query)
    ]


def _applying(rules: Sequence[Compiled], account_id: int) -> list[Compiled]:
    """Of rules, those that may apply to the lines of account_id."""
    return [
        r
        for r in rules
        if r.counter != account_id and (r.account_id is None or r.account_id == account_id)
    ]


def _two_entry(transactions, account_id: int):
    """Of the transactions (a select of ids), those of exactly two entries, one of them
    in the account: (subquery of tx, low, high; the other account; the conditions, its
    other account open)."""
    pairs = (
        select(
            Entry.transaction_id.label("tx"),
            func.min(Entry.account_id).label("low"),
            func.max(Entry.account_id).label("high"),
        )
        .where(Entry.transaction_id.in_(transactions))
        .group_by(Entry.transaction_id)
        .having(func.count() == 2)
        .subquery()
    )
    return (pairs, *_other_of(pairs, account_id))


def _other_of(pairs, account_id: int):
    """Of a subquery of two-entry transactions (tx, low, high: their two accounts), the
    other account when exactly one entry is in the account, and the conditions that say
    so with that other account open (Account joined on it)."""
    other = case((pairs.c.low == account_id, pairs.c.high), else_=pairs.c.low)
    conditions = (
        pairs.c.low != pairs.c.high,
        or_(pairs.c.low == account_id, pairs.c.high == account_id),
        Account.archived.is_(False),
    )
    return other, conditions


def history(statement_id: int, account_id: int) -> dict[str, int]:
    """payee key -> the other account of the newest two-entry transaction posted or
    matched from a statement line of the account with that payee (its account open),
    for the payees of the statement's new lines; one query however many lines and
    payees."""
    mine = aliased(StatementLine)
    # The waiting lines as stored: every line a read serves as `new` is among them
    # (status.decide; a stored `match` may read as `new` since).
    wanted = select(mine.payee_key).where(
        mine.statement_id == statement_id,
        mine.status.in_(status.WAITING),
        mine.payee_key.is_not(None),
    )
    taught = (
        select(
            StatementLine.payee_key.label("key"),
            Transaction.id.label("tx"),
            Transaction.occurred_on.label("day"),
        )
        .join(Statement, Statement.id == StatementLine.statement_id)
        .join(Transaction, Transaction.id == StatementLine.transaction_id)
        .where(
            StatementLine.payee_key.in_(wanted),
            StatementLine.status.in_(TAUGHT_BY),
            Statement.account_id == account_id,
        )
        .subquery()
    )
    pairs, other, conditions = _two_entry(select(taught.c.tx), account_id)
    rows = db.session.execute(
        select(taught.c.key, taught.c.day, taught.c.tx, other)
        .join(pairs, pairs.c.tx == taught.c.tx)
        .join(Account, Account.id == other)
        .where(*conditions)
    )
    newest: dict[str, tuple] = {}
    for key, day, tx_id, account in rows:
        found = (day, int(tx_id), int(account))
        if key not in newest or found > newest[key]:
            newest[str(key)] = found
    return {key: found[2] for key, found in newest.items()}


class Described:
    """The account's two-entry transactions (other account open) by the words of their
    description that some payee looked for has (`wanted`: a transaction shares with a
    payee only words of the payee, so its other words never count): each distinct set
    of such words once, with the newest (occurred_on, id) transaction holding it (on a
    tie of shared words the newest wins, so an older one with the same words never
    would), and an index word -> those sets."""

    def __init__(self, rows: Iterable, wanted: frozenset[str]):
        newest: dict[frozenset[str], tuple] = {}
        find = _WORD.findall
        for tx_id, day, description, account in rows:
            held = wanted.intersection(find(description.casefold()))
            if held:
                key = frozenset(held)
                found = (day, int(tx_id), int(account))
                if key not in newest or found > newest[key]:
                    newest[key] = found
        self.found = list(newest.values())
        self.postings: dict[str, list[int]] = {}
        for n, held in enumerate(newest):
            for word in held:
                self.postings.setdefault(word, []).append(n)

    def best(self, payee_words: frozenset[str]) -> int | None:
        """The other account of the transaction sharing the most of payee_words (at
        least one), then the newest; None when none shares a word."""
        shared = Counter(chain.from_iterable(self.postings.get(w, ()) for w in payee_words))
        if not shared:
            return None
        found = self.found
        n = max(shared, key=lambda k: (shared[k], found[k][0], found[k][1]))
        return found[n][2]


def _account_pairs(account_id: int):
    """The account's two-entry transactions, as _two_entry gives them, found from the
    account's entries: each entry of the account joined to the entries of its
    transaction, grouped by transaction. Two rows exactly when the transaction has two
    entries and one of them in the account (k entries in the account of n give k * n
    rows: 2 only for k = 1, n = 2). Both stores read it through the entries' indexes
    (account, then transaction), never the whole entries table: `transaction_id IN
    (the account's transactions)` made PostgreSQL hash the account's ids and scan every
    entry of the books, and SQLite group through the IN list (docs/performance.md,
    "Statements page at a million transactions")."""
    mine = aliased(Entry)
    pairs = (
        select(
            mine.transaction_id.label("tx"),
            func.min(Entry.account_id).label("low"),
            func.max(Entry.account_id).label("high"),
        )
        .join(Entry, Entry.transaction_id == mine.transaction_id)
        .where(mine.account_id == account_id)
        .group_by(mine.transaction_id)
        .having(func.count() == 2)
        .subquery()
    )
    return (pairs, *_other_of(pairs, account_id))


# PostgreSQL: the transactions whose description may hold one of the words, through
# the GIN index on ledger_description_words(description) (migration
# 0025_description_words); at most WORDED_MAX + 1 of them. The words are given through
# a sub-select so the planner cannot weigh them one by one (it guessed half the books
# for 200 words, and chose a JIT-compiled parallel plan): the index is always read.
_WORDED = text(
    "SELECT id FROM transactions"
    " WHERE ledger_description_words(description) && (SELECT CAST(:words AS text[]))"
    " LIMIT :most"
)
# More transactions than this hold a word looked for (in any account): the whole
# account is read instead, as the index would then save nothing.
WORDED_MAX = 5000


def index_words(wanted: frozenset[str]) -> list[str]:
    r"""What the word index is asked for, to find every transaction whose description's
    words (`words`) hold one of `wanted`: the ASCII words of wanted, and "*".
    (PostgreSQL's ledger_description_words, migration 0025, is read below; SQLite's
    transaction_words, migration 0026, holds the same: its view gives the description,
    '*' made a space, when all ASCII and at most 2,000 characters, else '*', and
    unicode61 reads ASCII as runs of letters and digits, A-Z lowered, '*' a token
    character: a quoted word or "*" in the query is that one token.)

    Why nothing is missed: let a description D have the word w in wanted.
    - D holds a character outside ASCII, or more than 2,000 characters (no longer
      word goes into the index): ledger_description_words(D) is ["*"], and "*" is
      always asked for. (Python's casefold can turn such a character into ASCII
      letters: "ß" into "ss", "ﬁ" into "fi", the Kelvin sign into "k", "İ" into "i"
      and a combining dot, so such a description is never read by its ASCII letters.)
    - D is all ASCII: D.casefold() is D with A-Z lowered, which is what translate
      gives; in ASCII the letters and digits (`[^\W_]`: no underscore) are exactly
      0-9 a-z after lowering, so D's words are runs of them between separators, which
      regexp_split_to_array on [^0-9a-z]+ returns whole (its empty edges dropped):
      w is among them, and w is ASCII, so it is asked for.
    The transactions found that hold no word of wanted are dropped by Described,
    which matches words exactly, as it did when the whole account was read."""
    return [*sorted(w for w in wanted if w.isascii()), "*"]


def _worded(wanted: frozenset[str]) -> list[int] | None:
    """PostgreSQL: the ids of the transactions whose description may hold a word of
    wanted (index_words); None when more than WORDED_MAX do."""
    found = db.session.execute(
        _WORDED, {"words": index_words(wanted), "most": WORDED_MAX + 1}
    ).scalars()
    ids = [int(i) for i in found]
    return None if len(ids) > WORDED_MAX else ids


def _pairs_of(ids: list[int], account_id: int):
    """As _two_entry, of the transactions of these ids (one array parameter)."""
    pairs = (
        select(
            Entry.transaction_id.label("tx"),
            func.min(Entry.account_id).label("low"),
            func.max(Entry.account_id).label("high"),
        )
        .where(Entry.transaction_id == any_(bindparam("ids", ids, type_=ARRAY(BigInteger))))
        .group_by(Entry.transaction_id)
        .having(func.count() == 2)
        .subquery()
    )
    return (pairs, *_other_of(pairs, account_id))


# SQLite: the same through the FTS5 table of the descriptions' words (migration
# 0026_sqlite_description_words), and the transactions above its mark (not indexed
# yet: at most 15 as postings come in), a rowid range.
_SQLITE_WORDED = text(
    f"SELECT rowid FROM {search.WORDS_TABLE} WHERE {search.WORDS_TABLE} MATCH :words"
    f" UNION ALL SELECT id FROM transactions WHERE id > {search.UPTO}"
    " LIMIT :most"
)


def _sqlite_worded(wanted: frozenset[str]) -> list[int] | None:
    """SQLite: as _worded, through the words' FTS5 table (each of index_words a phrase,
    any of them: unicode61 reads a quoted word whole, and '*' is a token character
    there); None also when this SQLite has no such table."""
    connection = db.session.connection()
    if not search.has_words_table(connection):
        return None
    phrases = " OR ".join(f'"{word}"' for word in index_words(wanted))
    found = connection.execute(_SQLITE_WORDED, {"words": phrases, "most": WORDED_MAX + 1})
    ids = [int(i) for i in found.scalars()]
    return None if len(ids) > WORDED_MAX else ids


def _sqlite_account_rows(account_id: int, ids: list[int] | None):
    """SQLite: the account's two-entry transactions (other account open) as rows of id,
    occurred_on as stored (ISO text: it orders as the date), description, the other
    account. Each entry of the account first counts its transaction's entries (one
    covering-index probe), and only a transaction of two gets its other entry and its
    row; the grouping of _account_pairs probed every entry of the account's
    transactions into a materialized table first (docs/performance.md, "Statements
    page, third pass": 148 -> 122 ms for 69,184 entries). With ids, only the
    account's entries of those transactions."""
    mine, theirs, every = aliased(Entry), aliased(Entry), aliased(Entry)
    entries = (
        select(func.count()).where(every.transaction_id == mine.transaction_id).scalar_subquery()
    )
    among = () if ids is None else (mine.transaction_id.in_(ids),)
    return (
        select(
            Transaction.id,
            type_coerce(Transaction.occurred_on, String),
            Transaction.description,
            theirs.account_id,
        )
        .select_from(mine)
        .join(theirs, and_(theirs.transaction_id == mine.transaction_id, theirs.id != mine.id))
        .join(Transaction, Transaction.id == mine.transaction_id)
        .join(Account, Account.id == theirs.account_id)
        .where(
            mine.account_id == account_id,
            entries == 2,
            theirs.account_id != account_id,
            Account.archived.is_(False),
            *among,
        )
    )


def described(account_id: int, wanted: frozenset[str]) -> Described:
    """The account's two-entry transactions by their words among `wanted`, their rows
    read as plain tuples (Core, no ORM row building): only those the word index finds
    (index_words; two queries; PostgreSQL: _worded, SQLite: _sqlite_worded), unless
    more than WORDED_MAX transactions of the books may hold a word; else every one of
    the account's (one query; some 25,000 rows for an account of a
    million-transaction ledger; SQLite: _sqlite_account_rows)."""
    connection = db.session.connection()
    if not dialect.is_postgresql():
        rows = _sqlite_account_rows(account_id, _sqlite_worded(wanted))
        return Described(connection.execute(rows), wanted)
    ids = _worded(wanted)
    pairs, other, conditions = (
        _account_pairs(account_id) if ids is None else _pairs_of(ids, account_id)
    )
    return Described(
        connection.execute(
            select(Transaction.id, Transaction.occurred_on, Transaction.description, other)
            .join(pairs, pairs.c.tx == Transaction.id)
            .join(Account, Account.id == other)
            .where(*conditions)
        ),
        wanted,
    )


def suggest(
    statement_id: int, account_id: int, lines: Sequence[dict], payee_keys: Sequence[str | None]
) -> None:
    """Fill in `suggestion` on the served lines of one account's statement (new lines
    only; null when nothing applies), given each line's stored payee key; see the
    module docstring. Three queries (the rules, the payees' history, the account's
    described transactions) whatever the lines' number."""
    waiting = []
    for line, payee in zip(lines, payee_keys, strict=True):
        line["suggestion"] = None
        if line["status"] == "new":
            waiting.append((line, payee))
    if not waiting:
        return
    waiting = _by_schedule(account_id, waiting)
    if not waiting:
        return
    rules = _active_rules(account_id)
    memo_needed = any(r.memo_contains is not None for r in rules)
    firsts = first_rules(
        rules,
        [payee for _, payee in waiting],
        [text_key(line["memo"]) for line, _ in waiting] if memo_needed else None,
        [line["amount_cents"] for line, _ in waiting],
    )
    unfiled = []
    for (line, payee), first in zip(waiting, firsts, strict=True):
        if first is not None:
            line["suggestion"] = {
                "account_id": first.counter,
                "source": "rule",
                "rule_id": first.rule_id,
            }
        elif payee:
            unfiled.append((line, payee))
    if not unfiled:
        return
    # Both queries whenever a line is left to the history, so a read takes the same
    # statements whatever its lines (tests/services/banking/test_rules_scale.py).
    known: dict[str, int | None] = dict(history(statement_id, account_id))
    left = {payee: words(payee) for _, payee in unfiled if payee not in known}
    by_words = described(account_id, frozenset().union(*left.values()))
    for payee, payee_words in left.items():
        known[payee] = by_words.best(payee_words)
    for line, payee in unfiled:
        if known[payee] is not None:
            line["suggestion"] = {"account_id": known[payee], "source": "history", "rule_id": None}


def schedule_lines(lines: Sequence[dict]) -> list[schedule_meeting.BankLine]:
    """What meeting reads of served lines."""
    return [
        schedule_meeting.BankLine(
            date.fromisoformat(line["booked_on"]), line["amount_cents"], line["payee"], line["memo"]
        )
        for line in lines
    ]


def _by_schedule(account_id: int, waiting: list[tuple[dict, str | None]]) -> list:
    """Schedules come first (docs/schedules.md, "Statement lines"): a new line that would
    meet an open occurrence of a schedule on the account is suggested its counter
    account; the lines left, for the rules and the history."""
    met = schedule_meeting.for_lines(account_id, schedule_lines([line for line, _ in waiting]))
    left = []
    for (line, payee), found in zip(waiting, met, strict=True):
        if found is None:
            left.append((line, payee))
            continue
        line["suggestion"] = {
            "account_id": found.counter_account_id,
            "source": "schedule",
            "rule_id": None,
            "schedule_id": found.schedule_id,
            "occurs_on": found.occurs_on.isoformat(),
        }
    return left


def _taken_by(rule: dict, tried: Compiled, rows) -> dict[int, list]:
    """statement account -> [(line row, payee key)] of the waiting lines the rule's
    conditions hold for (never a line of its counter account; only its own account's
    when it names one)."""
    by_account: dict[int, list] = {}
    for row in rows:
        if int(row.account_id) == rule["counter_account_id"] or rule["account_id"] not in (
            None,
            int(row.account_id),
        ):
            continue  # never files to the statement's own account; limited to another
        payee = row.payee_key or None
        memo = text_key(row.memo) if tried.memo_contains is not None else None
        if tried.holds(payee, memo, int(row.amount_cents)):
            by_account.setdefault(int(row.account_id), []).append((row, payee))
    return by_account


def _still_new(by_account: dict[int, list]) -> dict[int, list]:
    """Only the lines a read serves as `new` now (status.decide, once per statement
    holding a line the rule takes): a stored `new` line since found in the books or
    booked from another statement is no longer new, a stored `match` whose entry
    changed is."""
    for account_id, found in list(by_account.items()):
        now = {
            statement_id: status.new_now(account_id, statement_id)
            for statement_id in {int(row.statement_id) for row, _ in found}
        }
        kept = [
            (row, payee) for row, payee in found if int(row.line_id) in now[int(row.statement_id)]
        ]
        if kept:
            by_account[account_id] = kept
        else:
            del by_account[account_id]
    return by_account


def preview(body: dict) -> dict:
    """POST /rules/preview: the waiting `new` lines this rule (not stored) would now be
    the suggestion for, across every statement; of the PREVIEW_LINES_MAX newest waiting
    lines of the books (`truncated`: more were waiting), whatever the rule's conditions,
    so the bound is the same for every rule."""
    rule = _checked(body)
    if not rule["active"]:
        return {"matches": [], "truncated": False}
    conditions = rule["conditions"]
    tried = Compiled.of(
        conditions, 0, rule["priority"], rule["account_id"], rule["counter_account_id"]
    )
    query = (
        select(
            Statement.account_id,
            StatementLine.statement_id,
            StatementLine.line_id,
            StatementLine.booked_on,
            StatementLine.amount_cents,
            StatementLine.payee,
            StatementLine.payee_key,
            StatementLine.memo,
        )
        .join(Statement, Statement.id == StatementLine.statement_id)
        .where(StatementLine.status.in_(status.WAITING))
        .order_by(StatementLine.statement_id.desc(), StatementLine.line_id.desc())
        .limit(PREVIEW_LINES_MAX + 1)
    )
    rows = db.session.execute(query).all()
    truncated = len(rows) > PREVIEW_LINES_MAX
    by_account = _still_new(_taken_by(rule, tried, rows[:PREVIEW_LINES_MAX]))
    # It would be the suggestion unless a stored rule comes first (a new rule's id is
    # above every stored one's: a stored rule of equal priority comes first).
    stored = [r for r in _active_rules() if r.priority <= rule["priority"]] if by_account else []
    matches: list[dict] = []
    for account_id, found in by_account.items():
        before = _applying(stored, account_id)
        memo_needed = any(r.memo_contains is not None for r in before)
        firsts = first_rules(
            before,
            [payee for _, payee in found],
            [text_key(row.memo) for row, _ in found] if memo_needed else None,
            [int(row.amount_cents) for row, _ in found],
        )
        matches.extend(
            {
                "statement_id": int(row.statement_id),
                "line_id": int(row.line_id),
                "booked_on": row.booked_on.isoformat(),
                "amount_cents": int(row.amount_cents),
                "payee": row.payee,
            }
            for (row, _), first in zip(found, firsts, strict=True)
            if first is None
        )
    matches.sort(key=lambda m: (m["statement_id"], m["line_id"]))
    return {"matches": matches, "truncated": truncated}
