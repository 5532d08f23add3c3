"""`ledger-service verify`, the trail itself (verify.py runs every check): the chain
walked event by event and replayed into the books the events imply (Replay).

1. The chain. Events are read in seq order, in batches; each must carry the next
   seq (no gap) and its stored hash must equal sha256(previous hash + the event's
   canonical JSON) recomputed from its stored columns. The audit_head row must name
   the newest event (a removed newest event leaves no gap, but the head still names it).
2. The replay's state: accounts, entry flags, settings, the lock date, the currency,
   budgets, schedules and their occurrences (verify_schedules.py) as the events leave
   them; transactions are only counted and their shape checked here
   (verify_transactions.py compares them). Events still waiting to be sealed are
   replayed after the chain, and each must be one the service could have written
   (walk_pending).
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from sqlalchemy import select, text

from ...extensions import db
from ...models import AuditEvent, AuditPending
from ...store import dialect
from .. import clock
from . import audit, validate
from .verify_schedules import ScheduleTrail

BATCH = 5000
TRANSACTION_ACTIONS = ("transaction.posted", "transaction.imported")
TRANSACTION_EVENTS = (*TRANSACTION_ACTIONS, "transaction.deleted")
BUDGET_ACTIONS = ("budget.created", "budget.changed", "budget.approved", "budget.deleted")
DEFAULT_SETTINGS = {"book_style": "personal"}


class Disagreement(Exception):
    """The first place where the trail and the books (or the chain itself) disagree."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclass
class Replay:
    """The books as the events say they are (transactions: compare_transactions reads
    them again, sorted by id; the walk checks their shape and counts them)."""

    events: int = 0
    last_seq: int = 0
    last_hash: str = audit.GENESIS
    transactions: int = 0
    accounts: dict[int, dict] = field(default_factory=dict)
    account_seq: dict[int, int] = field(default_factory=dict)
    flags: dict[int, tuple[bool, bool, int]] = field(default_factory=dict)
    settings: dict = field(default_factory=lambda: dict(DEFAULT_SETTINGS))
    settings_seq: int = 0
    locked_through: str | None = None
    lock_seq: int = 0
    currency: str | None = None
    currency_seq: int = 0
    budgets: dict[int, dict] = field(default_factory=dict)
    budget_seq: dict[int, int] = field(default_factory=dict)
    # The schedules and their occurrences (verify_schedules.py), fed every event.
    schedules: ScheduleTrail = field(default_factory=ScheduleTrail)
    # A further replay fed every event after this one applied it: its
    # apply(seq, action, obj, sealed) (verify.run: the bank statements' replay,
    # services/banking/verify_statements.BankTrail).
    also: Any = None


def _in_batches(columns, key) -> Iterator:
    """Rows of columns in key order (key: an integer column, selected first), read
    BATCH at a time."""
    query = select(key, *columns).order_by(key)
    after = None
    while True:
        page = query if after is None else query.where(key > after)
        rows = db.session.execute(page.limit(BATCH)).all()
        if not rows:
            return
        yield from rows
        after = rows[-1][0]


def _events() -> Iterator:
    """Every event, in seq order, read BATCH at a time."""
    return _in_batches(audit.EVENT_COLUMNS[1:], AuditEvent.seq)


def walk_chain(state: Replay | None = None) -> Replay:
    """Check every event's seq and hash, replaying each into the implied books (into
    `state` when given: one made with its `also`)."""
    state = Replay() if state is None else state
    for row in _events():
        expected = state.last_seq + 1
        if row.seq != expected:
            raise Disagreement(
                f"audit event seq {expected} is missing: the trail goes from seq "
                f"{state.last_seq} to seq {row.seq} (a row was removed outside the service)"
            )
        event = audit.event_text(
            row.seq,
            clock.iso(row.at) or "",
            row.action,
            row.user_email,
            row.via,
            row.client_id,
            row.client_name,
            row.object,
        )
        if not hmac.compare_digest(audit.chain(state.last_hash, event), row.hash):
            raise Disagreement(
                f"audit event seq {row.seq} does not match its hash: it (or the link to "
                f"seq {state.last_seq}) was changed or inserted outside the service"
            )
        _replay(state, row.seq, row.action, row.object, f"audit event seq {row.seq}", True)
        state.events += 1
        state.last_seq, state.last_hash = row.seq, row.hash
    return state


def walk_pending(state: Replay) -> int:
    """Replay the events written but not yet sealed into the chain (PostgreSQL: a
    change that committed while this snapshot was taken, its seal not yet), in the
    order they will be sealed, numbered as they will be: their changes are in the
    books this snapshot reads. verify seals before it reads, so this is rare.

    A waiting event must be one the service could have written: on SQLite none at all
    (its changes append to the chain as they commit, and a restore seals what a backup
    carried), so any row there was written outside the service; on PostgreSQL its two
    texts, which the seal hashes, must be the ones its columns (which History shows)
    give (check_waiting)."""
    sqlite = not dialect.is_postgresql(db.session.connection())
    columns = (
        AuditPending.action,
        AuditPending.object,
        AuditPending.at,
        AuditPending.user_email,
        AuditPending.via,
        AuditPending.client_id,
        AuditPending.client_name,
        AuditPending.text_before_object,
        AuditPending.text_after_seq,
    )
    waiting = 0
    for row in _in_batches(columns, AuditPending.id):
        waiting += 1
        seq = state.last_seq + waiting
        if sqlite:
            raise Disagreement(
                f"audit_pending holds an event (id {row.id}, {row.action}) that was written "
                "outside the service: on SQLite every change joins the chain as it commits "
                "and a restore seals the waiting events a backup carried, so nothing waits"
            )
        check_waiting(row, seq)
        _replay(
            state, seq, row.action, row.object, f"a pending audit event (to be seq {seq})", False
        )
    return waiting


def check_waiting(row, seq: int) -> None:
    """A waiting event's texts (what the seal will hash) must be what its columns give."""
    expected = audit.pending_texts(
        row.at, row.action, row.user_email, row.via, row.client_id, row.client_name
    )
    if (row.text_before_object, row.text_after_seq) != expected:
        raise Disagreement(
            f"a pending audit event (id {row.id}, to be seq {seq}) does not match its "
            "columns: the text its seal would hash says otherwise than the event "
            "History would show, so it was written or changed outside the service"
        )


def _replay(
    state: Replay, seq: int, action: str, object_text: str, event: str, sealed: bool
) -> None:
    """Apply one event's object to the replay (and to state.also's); one it cannot read
    names the event. `sealed`: the event is in the chain (else waiting, seq to be)."""
    try:
        obj = orjson.loads(object_text)
        _apply(state, seq, action, obj)
        if state.also is not None:
            state.also.apply(seq, action, obj, sealed)
    except (KeyError, TypeError, ValueError, orjson.JSONDecodeError) as exc:
        raise Disagreement(f"{event}: its object is not a {action} object") from exc


def _apply(state: Replay, seq: int, action: str, obj: dict) -> None:
    if action in TRANSACTION_ACTIONS:
        _transaction_id(obj)
        state.transactions += 1
        for entry_id in obj.get("kept_reconciled", ()):  # a reconciled original's correction
            state.flags[int(entry_id)] = (True, True, seq)
        for entry_id in obj.get("kept_cleared", ()):  # a cleared original's correction
            state.flags[int(entry_id)] = (True, False, seq)
    elif action == "transaction.deleted":
        _transaction_id(obj)
        state.transactions -= 1
        for entry in obj["transaction"]["entries"]:
            state.flags.pop(int(entry["id"]), None)
    elif action.startswith("account."):
        account = obj["account"]
        state.accounts[int(account["id"])] = {
            "name": account["name"],
            "kind": account["kind"],
            "archived": bool(account["archived"]),
        }
        state.account_seq[int(account["id"])] = seq
    elif action == "entries.cleared":
        for entry_id in obj["entry_ids"]:
            _, reconciled, _ = state.flags.get(int(entry_id), (False, False, 0))
            state.flags[int(entry_id)] = (bool(obj["cleared"]), reconciled, seq)
    elif action == "entries.reconciled":
        for entry_id in obj["entry_ids"]:
            state.flags[int(entry_id)] = (True, True, seq)
    elif action == "books.locked":
        state.locked_through = obj["locked_through"]
        state.lock_seq = seq
    elif action == "books.currency_set":
        state.currency = obj["currency"]
        state.currency_seq = seq
    elif action == "settings.changed":
        state.settings.update(obj["settings"])
        state.settings_seq = seq
    elif action in BUDGET_ACTIONS:
        budget = obj["budget"]
        budget_id = int(budget["id"])
        if action == "budget.deleted":
            state.budgets.pop(budget_id, None)
        else:
            state.budgets[budget_id] = budget
        state.budget_seq[budget_id] = seq
    elif action.startswith(("document.", "statement.", "statement_line.", "rule.")):
        pass  # replayed by verify_documents.check and banking.verify_statements (also)
    elif action.startswith(("schedule.", "occurrence.")):
        pass  # replayed below (verify_schedules.py)
    else:
        raise ValueError(action)
    if action.startswith(("schedule.", "occurrence.")) or action in TRANSACTION_EVENTS:
        state.schedules.apply(seq, action, obj)


def _transaction_id(obj: dict) -> int:
    """A transaction event's transaction id: a positive 64-bit integer (the database
    sorts the events by it, compare_transactions), else the object is not readable."""
    tx_id = obj["transaction"]["id"]
    if type(tx_id) is not int or not 0 < tx_id <= validate.INT64_MAX:
        raise ValueError(tx_id)
    return tx_id


def check_head(state: Replay) -> None:
    row = db.session.execute(text("SELECT seq, hash FROM audit_head WHERE id = 1")).first()
    if row is None:
        return  # re-made from the newest event by the next write (a restore, a reset)
    if int(row.seq) != state.last_seq or not hmac.compare_digest(row.hash, state.last_hash):
        raise Disagreement(
            f"the trail's head names event seq {row.seq}, but the trail ends at seq "
            f"{state.last_seq}: events were removed or added outside the service"
        )
