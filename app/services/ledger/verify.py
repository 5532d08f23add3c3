"""`ledger-service verify`: re-walk the audit trail and replay it against the ledger.

Two checks, in one read snapshot:

1. The chain. Events are read in seq order, in batches; each must carry the next
   seq (no gap) and its stored hash must equal sha256(previous hash + the event's
   canonical JSON) recomputed from its stored columns. The audit_head row must name
   the newest event (a removed newest event leaves no gap, but the head still names it).
2. The replay. The final state the events imply must equal the stored books:
   transactions with their entries (posted or imported, minus deleted), accounts
   (name, kind, and archived when the schema has that column), entry flags (cleared
   and reconciled, when the schema has them), the book style and the lock date (when
   the schema has one).

Memory stays bounded for any number of transactions: each transaction is reduced to
a SHA-256 digest of its canonical JSON, and the digests are summed (mod 2**256) per
bucket of BUCKET_SIZE consecutive ids, once from the events (a deletion subtracts)
and once from the stored rows. Equal sums in every bucket mean equal books; the
first bucket that differs is then read again, id by id, to name the transaction or
entry and the event that disagree. Accounts, entry flags and settings are small
and are compared directly (entry flags: one small tuple per flagged entry).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from dataclasses import dataclass, field

import orjson
from sqlalchemy import inspect, select, text

from ...extensions import db
from ...models import AuditEvent, AuditPending
from .. import clock
from . import audit, verify_documents

BATCH = 5000
BUCKET_BITS = 12  # 4096 transaction ids per bucket: 245 buckets at a million
MODULUS = 2**256
TRANSACTION_ACTIONS = ("transaction.posted", "transaction.imported")
DEFAULT_SETTINGS = {"book_style": "personal"}


class Disagreement(Exception):
    """The first place where the trail and the books (or the chain itself) disagree."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def digest(tx: dict) -> int:
    return int.from_bytes(hashlib.sha256(audit.canonical(tx).encode()).digest(), "big")


@dataclass
class Replay:
    """The books as the events say they are (transactions only as bucket sums)."""

    events: int = 0
    last_seq: int = 0
    last_hash: str = audit.GENESIS
    buckets: dict[int, int] = field(default_factory=dict)
    transactions: int = 0
    accounts: dict[int, dict] = field(default_factory=dict)
    account_seq: dict[int, int] = field(default_factory=dict)
    flags: dict[int, tuple[bool, bool, int]] = field(default_factory=dict)
    settings: dict = field(default_factory=lambda: dict(DEFAULT_SETTINGS))
    settings_seq: int = 0
    locked_through: str | None = None
    lock_seq: int = 0

    def add(self, tx: dict, sign: int) -> None:
        bucket = int(tx["id"]) >> BUCKET_BITS
        self.buckets[bucket] = (self.buckets.get(bucket, 0) + sign * digest(tx)) % MODULUS
        self.transactions += sign


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
    books this snapshot reads. verify seals before it reads, so this is rare."""
    waiting = 0
    for row in _in_batches((AuditPending.action, AuditPending.object), AuditPending.id):
        waiting += 1
        seq = state.last_seq + waiting
        _replay(state, seq, row.action, row.object, f"a pending audit event (to be seq {seq})")
    return waiting


def _replay(state: Replay, seq: int, action: str, object_text: str, event: str) -> None:
    """Apply one event's object to the replay; one it cannot read names the event."""
    try:
        _apply(state, seq, action, orjson.loads(object_text))
    except (KeyError, TypeError, ValueError, orjson.JSONDecodeError) as exc:
        raise Disagreement(f"{event}: its object is not a {action} object") from exc


def _apply(state: Replay, seq: int, action: str, obj: dict) -> None:
    if action in TRANSACTION_ACTIONS:
        state.add(obj["transaction"], +1)
    elif action == "transaction.deleted":
        tx = obj["transaction"]
        state.add(tx, -1)
        for entry in tx["entries"]:
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
    elif action.startswith("document."):
        pass  # replayed by verify_documents.check
    else:
        raise ValueError(action)


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


def _stored_transactions(lo: int | None = None, hi: int | None = None) -> Iterator[dict]:
    """Stored transactions (ids in [lo, hi] when given) with entries, by id, in batches."""
    connection = db.session.connection()
    after = (lo - 1) if lo is not None else None
    while True:
        clauses = []
        if after is not None:
            clauses.append("id > :after")
        if hi is not None:
            clauses.append("id <= :hi")
        where = ("WHERE " + " AND ".join(clauses) + " ") if clauses else ""
        headers = connection.execute(
            text(
                "SELECT id, occurred_on, description FROM transactions "
                f"{where}ORDER BY id LIMIT {BATCH}"
            ),
            {"after": after, "hi": hi},
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
    """Bucket sums of the stored transactions against the replay's; (transactions, entries)."""
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
    stored: dict[int, int] = {}
    count = entries = 0
    for tx in _stored_transactions():
        bucket = tx["id"] >> BUCKET_BITS
        stored[bucket] = (stored.get(bucket, 0) + digest(tx)) % MODULUS
        count += 1
        entries += len(tx["entries"])
    for bucket in sorted(set(stored) | set(state.buckets)):
        if stored.get(bucket, 0) != state.buckets.get(bucket, 0):
            _name_difference(bucket)
    return count, entries


def _name_difference(bucket: int) -> None:
    """Read one bucket again, id by id, and raise naming the first disagreement."""
    lo = bucket << BUCKET_BITS
    hi = lo + (1 << BUCKET_BITS) - 1
    trail: dict[int, tuple[dict, int]] = {}
    deleted: dict[int, int] = {}
    for row in _events():
        if not (row.action in TRANSACTION_ACTIONS or row.action == "transaction.deleted"):
            continue
        tx = orjson.loads(row.object)["transaction"]
        if not lo <= tx["id"] <= hi:
            continue
        if row.action == "transaction.deleted":
            trail.pop(tx["id"], None)
            deleted[tx["id"]] = row.seq
        else:
            trail[tx["id"]] = (tx, row.seq)
    stored = {tx["id"]: tx for tx in _stored_transactions(lo, hi)}
    for tx_id in sorted(set(trail) | set(stored)):
        if tx_id not in trail:
            gone = f" (deleted by event seq {deleted[tx_id]})" if tx_id in deleted else ""
            raise Disagreement(
                f"transaction {tx_id} is in the ledger but no event posted it{gone}: "
                "it was added outside the service"
            )
        recorded, seq = trail[tx_id]
        if tx_id not in stored:
            raise Disagreement(
                f"transaction {tx_id} (posted by event seq {seq}) is missing from the "
                "ledger: it was removed outside the service"
            )
        difference = _transaction_difference(stored[tx_id], recorded, seq)
        if difference:
            raise Disagreement(difference)
    raise Disagreement(f"transactions {lo} to {hi} differ from the trail")  # not reached


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


def run() -> str:
    """Verify chain and books; the one-line summary, or raise Disagreement."""
    state = walk_chain()
    check_head(state)
    waiting = walk_pending(state)
    accounts = compare_accounts(state)
    count, entries = compare_transactions(state)
    flags = compare_flags(state)
    compare_settings(state)
    documents = verify_documents.check(Disagreement)
    extra = ", entry flags" if flags else ""
    pending = f" (and {waiting} written but not yet sealed)" if waiting else ""
    return (
        f"verify: ok: {state.events} events chained to head seq {state.last_seq} "
        f"({state.last_hash[:16]}…){pending}; the ledger equals the trail: {count} "
        f"transactions, {entries} entries, {accounts} accounts, settings{extra}, "
        f"{documents} documents"
    )
