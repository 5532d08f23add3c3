"""`verify`'s check of the bank statements (docs/statements.md, "Checking"): every
stored statement (its file, header and lines), every reconciliation, every entry's
bank reference, and every rule, against the audit trail.

BankTrail is fed every event of the chain, in seq order, by verify's walk
(verify_trail.Replay.also) and keeps what the trail says of:

- statements: the statement.uploaded object of each statement left standing (the
  header, the file's sha256 and size, how many lines, and since issue 43 every line
  as stored); statement.deleted removes it.
- lines: each statement_line.posted, .matched, .ignored and .undone event carries
  the line as it is afterwards (an undone match's entry holds no bank reference
  since); a line's transaction then follows the transaction's fate, as the
  database does: a correction (transaction.posted with `replaces`) hands the lines of
  the original to the replacement, a deletion leaves them naming none.
- entries' bank references: a line posted or matched gives its entry (`entry_id`) the
  line's bank_ref; a correction's kept entries take the original's (`kept_bank_refs`);
  a deleted transaction's entries have none.
- reconciliations: each entries.reconciled event with its `reconciliation` (id, who,
  when) beside the account, statement date, closing balance and entries.

check() then reads each stored statement, one at a time, and names the first thing
that disagrees (`disagreement`, verify's Disagreement): the file's bytes, SHA-256 or
size (the stored `size` too), a header field, a line changed, added or removed; then
every entry holding a bank reference, and every reconciliation row.

Books written before issue 43 hold events that carry less: an upload without its
lines (its lines are checked only where a later line event carries them, and their
number always), a header without its figures (only what the event carries is
compared), an entries.cleared of a statement or a correction without `kept_bank_refs`
(those entries' bank references were never in the trail and are not compared), a
reconciliation without its row's id (the rows left over must equal those events'
account, date, closing balance and number of entries, as a multiset).
check_rules compares every stored rule with the one its last event carries.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import defaultdict
from dataclasses import dataclass, field

import orjson
from sqlalchemy import inspect, select, text

from ... import models
from ...extensions import db
from ...models import AuditEvent, AuditPending, Reconciliation, Rule, Statement
from .. import clock
from . import rules, statements

LINE_KEYS = ("booked_on", "amount_cents", "payee", "memo", "bank_ref", "status")
LINE_ACTIONS = {
    "statement_line.posted": "posted",
    "statement_line.matched": "matched",
    "statement_line.ignored": "ignored",
    "statement_line.undone": "new",
}
RULE_ACTIONS = ("rule.created", "rule.changed", "rule.deleted")


class _Unknown:
    """A bank reference the trail never carried (books written before issue 43)."""

    def __repr__(self) -> str:
        return "unknown"


UNKNOWN = _Unknown()


@dataclass
class Upload:
    """A statement as its statement.uploaded event left it: the header object, the
    event's seq, and its lines (None: the event carries none; sealed events' lines are
    read again from the event when the statement is compared: `lines_in_event`)."""

    header: dict
    seq: int
    has_lines: bool
    lines_in_event: bool
    lines: list | None = None


@dataclass
class BankTrail:
    """The statements, lines, bank references and reconciliations as the trail says
    (see the module docstring); apply() takes every event in seq order."""

    statements: dict[int, Upload] = field(default_factory=dict)
    # statement id -> line id -> (the line after its last line event, that event's seq)
    line_events: dict[int, dict[int, tuple[dict, int]]] = field(default_factory=dict)
    # transaction id -> [(seq, its replacement, or None when deleted)], in seq order
    fates: dict[int, list[tuple[int, int | None]]] = field(default_factory=dict)
    # entry id -> (bank_ref, None or UNKNOWN; seq)
    bank_refs: dict[int, tuple[object, int]] = field(default_factory=dict)
    reconciliations: dict[int, tuple[dict, int]] = field(default_factory=dict)
    # before issue 43: (account_id, statement_date, closing, entries) -> [seq, ...]
    unnamed_reconciliations: dict[tuple, list[int]] = field(
        default_factory=lambda: defaultdict(list)
    )

    def apply(self, seq: int, action: str, obj: dict, sealed: bool) -> None:
        if action == "statement.uploaded":
            header = obj["statement"]
            statement_id = int(header["id"])
            lines = obj.get("lines")
            if lines is not None and not isinstance(lines, list):
                raise TypeError(lines)
            self.statements[statement_id] = Upload(
                header, seq, lines is not None, sealed, None if sealed else lines
            )
            self.line_events.pop(statement_id, None)
        elif action == "statement.deleted":
            statement_id = int(obj["statement"]["id"])
            self.statements.pop(statement_id, None)
            self.line_events.pop(statement_id, None)
        elif action in LINE_ACTIONS:
            line = obj["line"]
            if line["status"] != LINE_ACTIONS[action]:
                raise ValueError(line["status"])
            by_line = self.line_events.setdefault(int(line["statement_id"]), {})
            by_line[int(line["line_id"])] = (line, seq)
            if obj.get("entry_id") is not None:
                self.bank_refs[int(obj["entry_id"])] = (line["bank_ref"], seq)
            undone = obj.get("undone")
            if undone and undone["status"] == "matched" and undone["entry_id"] is not None:
                # The match's entry gave its bank reference back (a posting's went
                # with its deleted transaction: transaction.deleted).
                self.bank_refs[int(undone["entry_id"])] = (None, seq)
        elif action in ("transaction.posted", "transaction.imported"):
            if obj.get("replaces") is not None:
                tx_id = int(obj["transaction"]["id"])
                self.fates.setdefault(int(obj["replaces"]), []).append((seq, tx_id))
            kept = [*obj.get("kept_reconciled", ()), *obj.get("kept_cleared", ())]
            if kept and "kept_bank_refs" not in obj:
                for entry_id in kept:
                    self.bank_refs[int(entry_id)] = (UNKNOWN, seq)
            for item in obj.get("kept_bank_refs", ()):
                self.bank_refs[int(item["entry_id"])] = (str(item["bank_ref"]), seq)
        elif action == "transaction.deleted":
            tx = obj["transaction"]
            self.fates.setdefault(int(tx["id"]), []).append((seq, None))
            for entry in tx["entries"]:
                self.bank_refs.pop(int(entry["id"]), None)
        elif action == "entries.cleared" and obj.get("statement_id") is not None:
            # A statement's lines marked these entries; each line event (since issue
            # 43) said which bank reference each took. One no event named (older
            # books): the trail never carried it.
            for entry_id in obj["entry_ids"]:
                self.bank_refs.setdefault(int(entry_id), (UNKNOWN, seq))
        elif action == "entries.reconciled":
            made = obj.get("reconciliation")
            if made is not None:
                self.reconciliations[int(made["id"])] = (obj, seq)
            else:
                key = (
                    int(obj["account_id"]),
                    str(obj["statement_date"]),
                    int(obj["closing_balance_cents"]),
                    len(obj["entry_ids"]),
                )
                self.unnamed_reconciliations[key].append(seq)

    def follow(self, tx_id: int | None, since: int) -> tuple[int | None, int]:
        """The transaction a line naming `tx_id` after event `since` names now, as
        corrections and deletions left it; and the seq of the last of those."""
        while tx_id is not None:
            after = next(((s, new) for s, new in self.fates.get(tx_id, ()) if s > since), None)
            if after is None:
                break
            since, tx_id = after
        return tx_id, since


def _has(table: str) -> bool:
    return table in inspect(db.session.connection()).get_table_names()


def _not_readable(seq: int, action: str = "statement.uploaded") -> str:
    return f"audit event seq {seq}: its object is not a {action} object"


def _uploaded_lines(upload: Upload, disagreement) -> dict[int, dict]:
    """The statement's lines as its upload event carries them, by line id."""
    lines = upload.lines
    if upload.lines_in_event:
        raw = db.session.execute(
            select(AuditEvent.object).where(AuditEvent.seq == upload.seq)
        ).scalar_one()
        lines = orjson.loads(raw)["lines"]
    try:
        return {int(line["line_id"]): line for line in lines or ()}
    except (KeyError, TypeError, ValueError) as exc:
        raise disagreement(_not_readable(upload.seq)) from exc


def check(trail: BankTrail, disagreement) -> int:
    """Compare every stored statement (file, header, lines), every entry's bank
    reference and every reconciliation with the trail; how many statements there are."""
    count = 0
    if _has("statements"):
        count = _check_statements(trail, disagreement)
    _check_bank_refs(trail, disagreement)
    _check_reconciliations(trail, disagreement)
    return count


def _check_statements(trail: BankTrail, disagreement) -> int:
    recorded = dict(trail.statements)
    ids = db.session.execute(select(Statement.id).order_by(Statement.id)).scalars().all()
    for statement_id in ids:
        statement_id = int(statement_id)
        upload = recorded.pop(statement_id, None)
        if upload is None:
            raise disagreement(
                f"statement {statement_id} is in the ledger but no event uploaded it "
                "(or an event deleted it): it was added outside the service"
            )
        _check_one(trail, statement_id, upload, disagreement)
    if recorded:
        statement_id = min(recorded)
        raise disagreement(
            f"statement {statement_id} (event seq {recorded[statement_id].seq}) is missing "
            "from the ledger: it was removed outside the service"
        )
    return len(ids)


def _check_one(trail: BankTrail, statement_id: int, upload: Upload, disagreement) -> None:
    header, seq = upload.header, upload.seq
    row = statements.header_row(statement_id)
    data = db.session.execute(
        select(Statement.content_bytes).where(Statement.id == statement_id)
    ).scalar_one()
    try:
        sha256, size = str(header["sha256"]), int(header["size"])
    except (KeyError, TypeError, ValueError) as exc:
        raise disagreement(_not_readable(seq)) from exc
    actual = hashlib.sha256(bytes(data)).hexdigest()
    if not hmac.compare_digest(actual, sha256) or row.sha256 != sha256:
        raise disagreement(
            f"statement {statement_id}: its file's SHA-256 is {actual} in the ledger but "
            f"{sha256} in event seq {seq}: the file was replaced or changed outside the "
            "service"
        )
    for name, stored_size in (("its file is", len(data)), ("its size is", int(row.size))):
        if stored_size != size:
            raise disagreement(
                f"statement {statement_id}: {name} {stored_size} bytes in the ledger but "
                f"{size} in event seq {seq}: it was changed outside the service"
            )
    served = statements.served_header(row)
    for key in statements.AUDIT_KEYS:
        if key in header and served[key] != header[key]:
            raise disagreement(
                f"statement {statement_id}: {key} is {served[key]!r} in the ledger but "
                f"{header[key]!r} in event seq {seq}: it was changed outside the service"
            )
    stored = statements.lines_of(statement_id)
    _check_lines(trail, statement_id, upload, stored, disagreement)
    if "lines" in header and len(stored) != header["lines"]:
        raise disagreement(
            f"statement {statement_id}: {len(stored)} lines in the ledger but "
            f"{header['lines']} in event seq {seq}: lines were added or removed outside "
            "the service"
        )


def _check_lines(trail: BankTrail, statement_id: int, upload: Upload, stored, disagreement):
    expected: dict[int, tuple[dict, int]] = {}
    if upload.has_lines:
        expected = {k: (v, upload.seq) for k, v in _uploaded_lines(upload, disagreement).items()}
    expected.update(trail.line_events.get(statement_id, {}))
    mine = {int(row.line_id): row for row in stored}
    name = f"statement {statement_id} line"
    for line_id in sorted(set(mine) | set(expected)):
        if line_id not in expected:
            if not upload.has_lines:
                continue  # uploaded before the trail carried lines: counted only
            raise disagreement(
                f"{name} {line_id} is in the ledger but not in event seq {upload.seq} "
                "that uploaded the statement: it was added outside the service"
            )
        line, seq = expected[line_id]
        if line_id not in mine:
            raise disagreement(
                f"{name} {line_id} (event seq {seq}) is missing from the ledger: it was "
                "removed outside the service"
            )
        row = statements.served_line(mine[line_id])
        try:
            wanted = {key: line[key] for key in LINE_KEYS}
            tx_id = None if line["transaction_id"] is None else int(line["transaction_id"])
        except (KeyError, TypeError, ValueError) as exc:
            raise disagreement(_not_readable(seq)) from exc
        for key in LINE_KEYS:
            if row[key] != wanted[key]:
                raise disagreement(
                    f"{name} {line_id}: {key} is {row[key]!r} in the ledger but "
                    f"{wanted[key]!r} after event seq {seq}: it was changed outside the "
                    "service"
                )
        tx_id, last = trail.follow(tx_id, seq)
        if row["transaction_id"] != tx_id:
            raise disagreement(
                f"{name} {line_id}: transaction_id is {row['transaction_id']!r} in the "
                f"ledger but {tx_id!r} after event seq {last}: it was changed outside the "
                "service"
            )
        key_of_payee = rules.text_key(row["payee"]) or None
        if mine[line_id].payee_key != key_of_payee:
            raise disagreement(
                f"{name} {line_id}: its payee_key {mine[line_id].payee_key!r} is not its "
                f"payee's ({key_of_payee!r}): it was changed outside the service"
            )


def _check_bank_refs(trail: BankTrail, disagreement) -> None:
    columns = {c["name"] for c in inspect(db.session.connection()).get_columns("entries")}
    if "bank_ref" not in columns:
        return
    stored: dict[int, str] = dict(
        db.session.execute(
            text("SELECT id, bank_ref FROM entries WHERE bank_ref IS NOT NULL ORDER BY id")
        ).all()
    )
    known = {
        entry_id
        for entry_id, (ref, _) in trail.bank_refs.items()
        if ref is not None and ref is not UNKNOWN
    }
    for entry_id in sorted(set(stored) | known):
        ref, seq = trail.bank_refs.get(entry_id, (None, 0))
        if ref is UNKNOWN:
            continue
        mine = stored.get(entry_id)
        if mine != ref:
            where = f"after event seq {seq}" if seq else "and no event gave it one"
            raise disagreement(
                f"entry {entry_id}: bank_ref is {mine!r} in the ledger but {ref!r} {where}: "
                "it was changed outside the service"
            )


def _check_reconciliations(trail: BankTrail, disagreement) -> None:
    if not _has("reconciliations"):
        return
    named = dict(trail.reconciliations)
    unnamed = {key: list(seqs) for key, seqs in trail.unnamed_reconciliations.items()}
    rows = db.session.execute(select(Reconciliation).order_by(Reconciliation.id)).scalars()
    for row in rows:
        stored = {
            "account_id": int(row.account_id),
            "statement_date": row.statement_date.isoformat(),
            "closing_balance_cents": int(row.closing_balance_cents),
            "entries": int(row.entry_count),
            "created_by": row.created_by,
            "created_at": clock.iso(row.created_at),
        }
        if row.id in named:
            obj, seq = named.pop(row.id)
            _check_reconciliation(row, stored, obj, seq, disagreement)
            continue
        key = tuple(stored[k] for k in ("account_id", "statement_date"))
        key += (stored["closing_balance_cents"], stored["entries"])
        if unnamed.get(key):
            unnamed[key].pop(0)  # an older event, without the row's id: its figures
            continue
        raise disagreement(
            f"reconciliation {row.id} (account {stored['account_id']}, statement date "
            f"{stored['statement_date']}, closing balance {stored['closing_balance_cents']}) "
            "is in the ledger but no event recorded it: it was added or changed outside "
            "the service"
        )
    if named:
        rec_id = min(named)
        raise disagreement(
            f"reconciliation {rec_id} (event seq {named[rec_id][1]}) is missing from the "
            "ledger: it was removed outside the service"
        )
    left = sorted(seq for seqs in unnamed.values() for seq in seqs)
    if left:
        raise disagreement(
            f"the reconciliation of event seq {left[0]} is missing from the ledger: it "
            "was removed or changed outside the service"
        )


def _check_reconciliation(row, stored: dict, obj: dict, seq: int, disagreement) -> None:
    try:
        made = obj["reconciliation"]
        recorded = {
            "account_id": int(obj["account_id"]),
            "statement_date": str(obj["statement_date"]),
            "closing_balance_cents": int(obj["closing_balance_cents"]),
            "entries": len(obj["entry_ids"]),
            "created_at": made["created_at"],
        }
        who = (made["created_by"], made["created_by_email"])
    except (KeyError, TypeError, ValueError) as exc:
        raise disagreement(_not_readable(seq, "entries.reconciled")) from exc
    for key, value in recorded.items():
        if stored[key] != value:
            raise disagreement(
                f"reconciliation {row.id}: {key} is {stored[key]!r} in the ledger but "
                f"{value!r} in event seq {seq}: it was changed outside the service"
            )
    mine = (row.created_by, _email_of(row.created_by))
    if mine != who and not (row.created_by is None and _gone(who, row.created_at)):
        raise disagreement(
            f"reconciliation {row.id}: created_by is {_person(mine)} in the ledger but "
            f"{_person(who)} in event seq {seq}: it was changed outside the service"
        )


def _email_of(user_id) -> str | None:
    if user_id is None:
        return None
    return db.session.execute(
        select(models.User.email).where(models.User.id == int(user_id))
    ).scalar_one_or_none()


def _gone(who: tuple, reconciled_at) -> bool:
    """Whether the person who reconciled has been deleted since (`user rm` leaves the
    row's created_by null): nobody has their id now, or whoever has it (SQLite gives
    a deleted newest id again) is someone else or was made later."""
    user_id, email = who
    if user_id is None:
        return False
    now = db.session.execute(
        select(models.User.email, models.User.created_at).where(models.User.id == int(user_id))
    ).first()
    return now is None or now.email != email or now.created_at > reconciled_at


def _person(who: tuple) -> str:
    user_id, email = who
    return "None" if user_id is None else f"user {user_id} ({email})"


def check_rules(disagreement) -> int:
    """Compare every stored rule with the one its last event carries; how many there
    are. A rule changed, added or removed behind the service files bank lines where
    nobody decided they go, so it is named like a changed statement file."""
    if not _has("rules"):
        return 0  # a schema from before rules (migration 0020)
    standing: dict[int, tuple[dict, int]] = {}
    for label, seq, action, raw in _events(RULE_ACTIONS):
        try:
            rule = orjson.loads(raw)["rule"]
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


def _events(actions):
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
