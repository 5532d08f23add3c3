"""`ledger-service verify`: re-walk the audit trail and replay it against the ledger.

Three checks, in one read snapshot, one function each:

1. The chain. Events are read in seq order, in batches; each must carry the next
   seq (no gap) and its stored hash must equal sha256(previous hash + the event's
   canonical JSON) recomputed from its stored columns. The audit_head row must name
   the newest event (a removed newest event leaves no gap, but the head still names it).
2. The replay. The final state the events imply must equal the stored books:
   transactions with their entries (posted or imported, minus deleted), accounts
   (name, kind, and archived when the schema has that column), entry flags (cleared
   and reconciled, when the schema has them), the book style and the lock date (when
   the schema has one), the budgets with their lines (when the schema has them).
   Events still waiting to be sealed are replayed after the chain, and each must be
   one the service could have written (walk_pending).
3. The balance tables (compare_balance_tables). The per-day and per-month balances
   every report reads must equal the entries: the comparison `ledger-service check`
   runs (derived.balance_table_differences), stopped at the first difference.

The transactions are compared exactly, in bounded memory: the database sorts the
trail's transaction events by transaction id (then seq), and that stream is merged
with the stored transactions read in id order, BATCH at a time. For each id the
events give what the books must hold (postings minus deletions) and that is compared
field by field with the stored transaction, so the first difference is named as it
is met. Only one transaction's events and one batch of rows are in memory. (Until
issue 28 the comparison summed SHA-256 digests per block of ids, an additive
multiset hash a database writer could defeat with a generalised birthday search.)
Accounts, entry flags and settings are small and are compared directly (entry
flags: one small tuple per flagged entry).
"""

from __future__ import annotations

import hmac
from collections.abc import Generator, Iterator
from contextlib import closing
from dataclasses import dataclass, field

import orjson
from sqlalchemy import bindparam, inspect, select, text

from ...extensions import db
from ...models import AuditEvent, AuditPending
from ...store import dialect
from .. import clock
from ..banking import verify_statements
from . import audit, budgets, derived, validate, verify_documents

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
    budgets: dict[int, dict] = field(default_factory=dict)
    budget_seq: dict[int, int] = field(default_factory=dict)


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


def walk_chain() -> Replay:
    """Check every event's seq and hash, replaying each into the implied books."""
    state = Replay()
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
        _replay(state, row.seq, row.action, row.object, f"audit event seq {row.seq}")
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
        _replay(state, seq, row.action, row.object, f"a pending audit event (to be seq {seq})")
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


def _replay(state: Replay, seq: int, action: str, object_text: str, event: str) -> None:
    """Apply one event's object to the replay; one it cannot read names the event."""
    try:
        _apply(state, seq, action, orjson.loads(object_text))
    except (KeyError, TypeError, ValueError, orjson.JSONDecodeError) as exc:
        raise Disagreement(f"{event}: its object is not a {action} object") from exc


def _apply(state: Replay, seq: int, action: str, obj: dict) -> None:
    if action in TRANSACTION_ACTIONS:
        _transaction_id(obj)
        state.transactions += 1
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
    elif action.startswith(("document.", "statement.", "rule.")):
        pass  # replayed by verify_documents.check and banking.verify_statements.check
    else:
        raise ValueError(action)


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


# --- the stored books ------------------------------------------------------------


def _stored_transactions() -> Iterator[dict]:
    """Stored transactions with their entries, by id, read BATCH at a time."""
    connection = db.session.connection()
    after = None
    while True:
        where = "" if after is None else "WHERE id > :after "
        headers = connection.execute(
            text(
                "SELECT id, occurred_on, description FROM transactions "
                f"{where}ORDER BY id LIMIT {BATCH}"
            ),
            {"after": after},
        ).all()
        if not headers:
            return
        first, last = headers[0][0], headers[-1][0]
        entries: dict[int, list] = {}
        for tx_id, entry_id, account_id, cents in connection.execute(
            text(
                "SELECT transaction_id, id, account_id, amount_cents FROM entries "
                "WHERE transaction_id BETWEEN :first AND :last ORDER BY transaction_id, id"
            ),
            {"first": first, "last": last},
        ):
            entries.setdefault(tx_id, []).append((entry_id, account_id, cents))
        for tx_id, occurred_on, description in headers:
            yield audit.transaction_object(tx_id, occurred_on, description, entries.get(tx_id, []))[
                "transaction"
            ]
        after = last


def compare_transactions(state: Replay) -> tuple[int, int]:
    """The stored transactions against the trail's, exactly, id by id; (transactions,
    entries). A merge of two streams in transaction id order: the trail's transaction
    events sorted by the database, and the stored transactions."""
    orphan = db.session.execute(
        text(
            "SELECT e.id, e.transaction_id FROM entries e LEFT JOIN transactions t"
            " ON t.id = e.transaction_id WHERE t.id IS NULL ORDER BY e.id LIMIT 1"
        )
    ).first()
    if orphan is not None:
        raise Disagreement(
            f"entry {orphan[0]} belongs to transaction {orphan[1]}, which does not exist: "
            "it was added outside the service"
        )
    count = entries = 0
    stored = _stored_transactions()
    mine = next(stored, None)
    with closing(_trail_by_transaction(state)) as trail:
        theirs = next(trail, None)
        while mine is not None or theirs is not None:
            next_ids: list[int] = []
            if mine is not None:
                next_ids.append(mine["id"])
            if theirs is not None:
                next_ids.append(theirs[0])
            tx_id = min(next_ids)
            in_ledger = mine if mine is not None and mine["id"] == tx_id else None
            in_trail = theirs[1] if theirs is not None and theirs[0] == tx_id else []
            _compare_one(tx_id, in_ledger, in_trail)
            if in_ledger is not None:
                count += 1
                entries += len(in_ledger["entries"])
                mine = next(stored, None)
            if in_trail:
                theirs = next(trail, None)
    return count, entries


# The trail's transaction events by transaction id, then seq: sealed ones, and those
# still waiting, numbered after the chain in the order they will be sealed (as
# walk_pending numbers them).
_TRAIL_BY_TRANSACTION = {
    "sqlite": "CAST(json_extract(object, '$.transaction.id') AS INTEGER)",
    "postgresql": "CAST(CAST(object AS json) #>> '{transaction,id}' AS bigint)",
}


def _trail_by_transaction(
    state: Replay,
) -> Generator[tuple[int, list[tuple[str, dict, int]]], None, None]:
    """(transaction id, [(action, transaction, seq), ...] in trail order) for every
    transaction an event names, in id order; the database sorts (the walk has already
    checked every id is an integer it can sort by)."""
    tx_id = _TRAIL_BY_TRANSACTION[dialect.name(db.session.connection())]
    query = text(
        f"SELECT {tx_id} AS tx_id, seq, action, object FROM audit_events"
        " WHERE action IN :actions"
        f" UNION ALL SELECT {tx_id}, :last_seq + n, action, object FROM"
        " (SELECT action, object, ROW_NUMBER() OVER (ORDER BY id) AS n FROM audit_pending)"
        " AS waiting WHERE action IN :actions ORDER BY 1, 2"
    ).bindparams(bindparam("actions", expanding=True))
    rows = db.session.execute(
        query.execution_options(yield_per=BATCH),
        {"actions": list(TRANSACTION_EVENTS), "last_seq": state.last_seq},
    )
    current: int | None = None
    events: list[tuple[str, dict, int]] = []
    try:
        for row in rows:
            if row.tx_id != current:
                if current is not None:
                    yield current, events
                current, events = row.tx_id, []
            events.append((row.action, orjson.loads(row.object)["transaction"], int(row.seq)))
        if current is not None:
            yield current, events
    finally:
        rows.close()  # a server-side cursor on PostgreSQL, also when a difference stops us


def _compare_one(tx_id: int, stored: dict | None, events: list[tuple[str, dict, int]]) -> None:
    """Raise naming the difference when the stored transaction (None: absent) is not
    what the transaction's events leave: its postings minus its deletions."""
    live: list[tuple[dict, int]] = []
    deleted = None
    for action, tx, seq in events:
        if action != "transaction.deleted":
            live.append((tx, seq))
            continue
        deleted = seq
        match = next((i for i, (posted, _) in enumerate(live) if posted == tx), None)
        if match is None:
            raise Disagreement(
                f"audit event seq {seq} deletes transaction {tx_id} as no earlier event "
                "posted it: the trail was written outside the service"
            )
        del live[match]
    if len(live) > 1:
        raise Disagreement(
            f"transaction {tx_id} is posted by events seq {live[0][1]} and seq {live[1][1]} "
            "with no deletion between them: the trail was written outside the service"
        )
    if not live:
        if stored is not None:
            gone = f" (deleted by event seq {deleted})" if deleted is not None else ""
            raise Disagreement(
                f"transaction {tx_id} is in the ledger but no event posted it{gone}: "
                "it was added outside the service"
            )
        return
    recorded, seq = live[0]
    if stored is None:
        raise Disagreement(
            f"transaction {tx_id} (posted by event seq {seq}) is missing from the "
            "ledger: it was removed outside the service"
        )
    if stored != recorded:
        raise Disagreement(
            _transaction_difference(stored, recorded, seq)
            or f"transaction {tx_id} differs from event seq {seq} that posted it"
        )


def _transaction_difference(stored: dict, recorded: dict, seq: int) -> str | None:
    tx_id = stored["id"]
    for key in ("occurred_on", "description"):
        if stored[key] != recorded[key]:
            return (
                f"transaction {tx_id}: {key} is {stored[key]!r} in the ledger but "
                f"{recorded[key]!r} in event seq {seq}"
            )
    mine = {e["id"]: e for e in stored["entries"]}
    theirs = {e["id"]: e for e in recorded["entries"]}
    for entry_id in sorted(set(mine) | set(theirs)):
        if entry_id not in theirs:
            return (
                f"entry {entry_id} of transaction {tx_id} is in the ledger but not in event "
                f"seq {seq} that posted the transaction: it was added outside the service"
            )
        if entry_id not in mine:
            return (
                f"entry {entry_id} of transaction {tx_id} (event seq {seq}) is missing from "
                "the ledger: it was removed outside the service"
            )
        for key in ("account_id", "amount_cents"):
            if mine[entry_id][key] != theirs[entry_id][key]:
                return (
                    f"entry {entry_id} of transaction {tx_id}: {key} is "
                    f"{mine[entry_id][key]} in the ledger but {theirs[entry_id][key]} in "
                    f"event seq {seq}"
                )
    return None


def _columns(table: str) -> set[str]:
    return {c["name"] for c in inspect(db.session.connection()).get_columns(table)}


def compare_accounts(state: Replay) -> int:
    archived = "archived" in _columns("accounts")
    columns = "id, name, kind" + (", archived" if archived else "")
    stored = {
        row[0]: {
            "name": row[1],
            "kind": row[2],
            "archived": bool(row[3]) if archived else False,
        }
        for row in db.session.execute(text(f"SELECT {columns} FROM accounts ORDER BY id"))
    }
    for account_id in sorted(set(stored) | set(state.accounts)):
        if account_id not in state.accounts:
            raise Disagreement(
                f"account {account_id} is in the ledger but no event created it: "
                "it was added outside the service"
            )
        seq = state.account_seq[account_id]
        if account_id not in stored:
            raise Disagreement(
                f"account {account_id} (event seq {seq}) is missing from the ledger: "
                "it was removed outside the service"
            )
        for key in ("name", "kind", "archived"):
            if stored[account_id][key] != state.accounts[account_id][key]:
                raise Disagreement(
                    f"account {account_id}: {key} is {stored[account_id][key]!r} in the "
                    f"ledger but {state.accounts[account_id][key]!r} after event seq {seq}"
                )
    return len(stored)


def compare_flags(state: Replay) -> bool:
    """Entry flags, when the schema has them: stored flagged entries == replayed ones."""
    columns = _columns("entries")
    if not {"cleared", "reconciled"} <= columns:
        return False
    stored = {
        row[0]: (bool(row[1]), bool(row[2]))
        for row in db.session.execute(
            text(
                "SELECT id, cleared, reconciled FROM entries"
                " WHERE cleared OR reconciled ORDER BY id"
            )
        )
    }
    replayed = {k: v for k, v in state.flags.items() if v[0] or v[1]}
    for entry_id in sorted(set(stored) | set(replayed)):
        mine = stored.get(entry_id, (False, False))
        cleared, reconciled, seq = state.flags.get(entry_id, (False, False, 0))
        if mine != (cleared, reconciled):
            where = f"after event seq {seq}" if seq else "with no event marking it"
            raise Disagreement(
                f"entry {entry_id}: cleared={mine[0]}, reconciled={mine[1]} in the ledger but "
                f"cleared={cleared}, reconciled={reconciled} {where}"
            )
    return True


def compare_settings(state: Replay) -> None:
    columns = _columns("settings")
    row = db.session.execute(text("SELECT * FROM settings WHERE id = 1")).mappings().first()
    stored = dict(row) if row is not None else {}
    style = stored.get("book_style") or DEFAULT_SETTINGS["book_style"]
    if style != state.settings["book_style"]:
        after = f"after event seq {state.settings_seq}" if state.settings_seq else "(no event)"
        raise Disagreement(
            f"settings: book_style is {style!r} in the ledger but "
            f"{state.settings['book_style']!r} {after}"
        )
    if "locked_through" in columns:
        raw = stored.get("locked_through")
        value = raw if raw is None or isinstance(raw, str) else raw.isoformat()
        if value != state.locked_through:
            after = f"after event seq {state.lock_seq}" if state.lock_seq else "(no event)"
            raise Disagreement(
                f"the lock date is {value} in the ledger but {state.locked_through} {after}"
            )


def compare_balance_tables() -> None:
    """The per-day and per-month balance tables every report reads must equal the
    entries (the comparison `ledger-service check` runs; the first difference)."""
    with closing(derived.balance_table_differences()) as differences:
        first = next(differences, None)
    if first is not None:
        raise Disagreement(
            f"{first}: a balance table that reports read differs from the entries, so it "
            "was changed outside the service (`ledger-service check --repair` rebuilds it)"
        )


def _by_account(lines) -> list:
    return sorted(lines or [], key=lambda line: line["account_id"])


def compare_budgets(state: Replay) -> int | None:
    """Budgets, when the schema has them: each stored budget (with its lines) equals the
    last event about it, and every budget the events leave standing is stored."""
    if "budgets" not in inspect(db.session.connection()).get_table_names():
        return None
    stored = {
        b["id"]: budgets.audit_object(budgets.get_budget(b["id"]))["budget"]
        for b in budgets.list_budgets()
    }
    for budget_id in sorted(set(stored) | set(state.budgets)):
        seq = state.budget_seq.get(budget_id)
        if budget_id not in state.budgets:
            gone = f" (deleted by event seq {seq})" if seq else ""
            raise Disagreement(
                f"budget {budget_id} is in the ledger but no event created it{gone}: "
                "it was added outside the service"
            )
        if budget_id not in stored:
            raise Disagreement(
                f"budget {budget_id} (event seq {seq}) is missing from the ledger: "
                "it was removed outside the service"
            )
        recorded = state.budgets[budget_id]
        for key in ("name", "starts_on", "approved_at", "approved_by_email", "lines"):
            mine, theirs = stored[budget_id][key], recorded.get(key)
            if key == "lines":  # stored lines follow account names, which may change since
                mine, theirs = _by_account(mine), _by_account(theirs)
            if mine != theirs:
                raise Disagreement(
                    f"budget {budget_id}: {key} in the ledger differs from event seq {seq}: "
                    "it was changed outside the service"
                )
    return len(stored)


def run() -> str:
    """Verify chain and books; the one-line summary, or raise Disagreement."""
    state = walk_chain()
    check_head(state)
    waiting = walk_pending(state)
    accounts = compare_accounts(state)
    count, entries = compare_transactions(state)
    flags = compare_flags(state)
    compare_settings(state)
    compare_balance_tables()
    budget_count = compare_budgets(state)
    documents = verify_documents.check(Disagreement)
    verify_statements.check(Disagreement)  # the bank statements' files (services/banking)
    extra = ", entry flags" if flags else ""
    if budget_count:
        extra += f", {budget_count} budgets"
    pending = f" (and {waiting} written but not yet sealed)" if waiting else ""
    return (
        f"verify: ok: {state.events} events chained to head seq {state.last_seq} "
        f"({state.last_hash[:16]}…){pending}; the ledger equals the trail: {count} "
        f"transactions, {entries} entries, {accounts} accounts, settings{extra}, "
        f"{documents} documents; the balance tables equal the entries"
    )
