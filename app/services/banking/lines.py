"""POST /statements/{id}/lines: post, match or ignore lines, all or nothing
(docs/statements.md, "Acting on the lines").

- `post` {account_id, description?}: one transaction dated the line's booked_on, the
  line's amount on the statement's account and the opposite on `account_id`,
  through the ledger's own posting (transactions.record_transaction: the lock date,
  open accounts, one transaction.posted event each). Its description: as given,
  else the payee and the memo joined by " · " (either alone when the other is
  missing), else DEFAULT_DESCRIPTION, cut to the limit.
- `match` {transaction_id?}: the line's own candidate, or the transaction named,
  which must qualify as status.decide's `match` does, neither its day nor the line's
  on or before the lock date (status.qualifying_entry); no new transaction.
- `ignore`: the line is set aside.
- `undo` (a posted, matched or ignored line): the line waits again (stored `new`, no
  transaction). A posted line's transaction is deleted through the ledger's own
  deletion; a matched line's entry loses its cleared mark and the bank reference the
  line gave it (one entries.cleared event, cleared false, for the request). A
  reconciled transaction, or one dated on or before the lock date: 409.

Posted and matched lines leave their mark on the statement account's entry: cleared,
holding the line's bank reference; one entries.cleared event (with the statement's
id) covers the request's entries. A line already posted, matched or a duplicate, or
a line whose bank reference another transaction of the account now holds (or an
earlier line of the same request takes, with the same amount: the file listed one
bank line twice, and two requests would refuse the second likewise): 409.
Every refusal names the line (400 or 409) and, raised inside the request's one unit
of work, leaves nothing changed.

One bank line is booked once, also by two requests at once (one statement, or two
statements of one file): requests acting on one account's lines run one after the
other (_serialise), so the second reads the references the first booked; and the
entries' key (account_id, bank_ref, amount_cents) where bank_ref is set (migration
0021) refuses a second holder, a refusal answered as the same 409 naming the line.
"""

from __future__ import annotations

from sqlalchemy import bindparam, select, text, update
from sqlalchemy.exc import IntegrityError

from ...extensions import db
from ...models import Entry, StatementLine, Transaction
from ...store import dialect
from ..errors import BadRequestError, ConflictError, ServiceError
from ..ledger import audit, lock, schedule_meeting, transactions, validate
from . import statements, status, trail

ACTIONS = ("post", "match", "ignore", "undo")
UNDOABLE = ("posted", "matched", "ignored")
DEFAULT_DESCRIPTION = "Bank statement"
JOINER = " · "  # between a posted line's payee and memo in its description
LINES_MAX = 10_000
DONE = {"posted": "posted", "matched": "matched", "duplicate": "a duplicate"}


def _on_line(line_id: int, err: ServiceError) -> ServiceError:
    """The same refusal, naming the line."""
    err.message = f"line {line_id}: {err.message}"
    err.args = (err.message,)
    return err


def _parse(
    items, lines: dict[int, object], decided: dict[int, status.Decision], account_id: int
) -> list[dict]:
    """The request's lines, checked against the statement before anything is written."""
    if not isinstance(items, list) or not items:
        raise BadRequestError("'lines' must be a non-empty array of {line_id, action}")
    if len(items) > LINES_MAX:
        raise BadRequestError(f"'lines' may hold at most {LINES_MAX} lines")
    asked: list[dict] = []
    seen: set[int] = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise BadRequestError(f"'lines[{i}]' must be an object {{line_id, action}}")
        line_id = validate.integer(f"lines[{i}].line_id", item.get("line_id"))
        line = lines.get(line_id)
        if line is None:
            raise BadRequestError(f"line {line_id}: the statement has no such line")
        if line_id in seen:
            raise BadRequestError(f"line {line_id}: named twice")
        seen.add(line_id)
        action = item.get("action")
        if action not in ACTIONS:
            raise BadRequestError(f"line {line_id}: 'action' must be one of: " + ", ".join(ACTIONS))
        state = decided[line_id].status  # a waiting line's as worked out now
        if action == "undo":
            if state not in UNDOABLE:
                raise ConflictError(
                    f"line {line_id}: the line is {DONE.get(state, state)}: only a posted, "
                    "matched or ignored line can be undone"
                )
        elif state in DONE:
            raise ConflictError(f"line {line_id}: the line is already {DONE[state]}")
        try:
            asked.append(_one(item, line, decided[line_id], action, account_id))
        except ServiceError as err:
            raise _on_line(line_id, err) from None
    return asked


def _one(item: dict, line, decision: status.Decision, action: str, account_id: int) -> dict:
    """One asked action, its fields checked: {line, action, account_id?, ...}."""
    wanted: dict = {"line": line, "action": action}
    if action == "post":
        if item.get("account_id") is None:
            raise BadRequestError("'account_id' is required to post a line")
        counter = validate.integer("account_id", item["account_id"])
        if counter == account_id:
            raise BadRequestError("'account_id' must be another account than the statement's")
        wanted["account_id"] = counter
        wanted["description"] = _description(item.get("description"), line)
    elif action == "match":
        named = item.get("transaction_id")
        if named is None:
            if decision.status != "match" or decision.transaction_id is None:
                raise BadRequestError(
                    "the line has no certain candidate to match: name a 'transaction_id'"
                )
            named = decision.transaction_id
        wanted["transaction_id"] = validate.integer("transaction_id", named)
    return wanted


def _description(given, line) -> str:
    """A posting's description: as given, else the payee and the memo joined by
    JOINER (either alone when the other is missing), else the default; cut to the
    limit."""
    if given is not None and not (isinstance(given, str) and not given.strip()):
        return validate.text("description", given, max_length=transactions.DESCRIPTION_MAX)
    said = [x.strip() for x in (line.payee, line.memo) if x and x.strip()]
    return JOINER.join(said)[: transactions.DESCRIPTION_MAX] or DEFAULT_DESCRIPTION


BANK_REF_KEY = "uq_entries_bank_ref"  # entries (account_id, bank_ref, amount_cents), 0021
_SQLITE_KEY_MESSAGE = "UNIQUE constraint failed: entries.account_id, entries.bank_ref"
_LOCK_KIND = 0x62616E6B  # PostgreSQL advisory lock class "bank", keyed by the account id
_LOCK_ACCOUNT = text("SELECT pg_advisory_xact_lock(:kind, :account_id)")

_SET_LINE = (
    update(StatementLine)
    .where(
        StatementLine.statement_id == bindparam("s_id"),
        StatementLine.line_id == bindparam("l_id"),
    )
    .values(status=bindparam("new_status"), transaction_id=bindparam("tx_id"))
)
_MARK_ENTRY = (
    update(Entry)
    .where(Entry.id == bindparam("e_id"))
    .values(cleared=True, bank_ref=bindparam("ref"))
)
# PostgreSQL: every mark in ONE statement, so the statement-level trigger that keeps
# the derived balances (migration 0002) fires once, not once per entry.
_MARK_ENTRIES_POSTGRESQL = text(
    """
    UPDATE entries SET cleared = true, bank_ref = marks.ref
    FROM unnest(CAST(:ids AS bigint[]), CAST(:refs AS text[])) AS marks (id, ref)
    WHERE entries.id = marks.id
    """
)


def _is_the_key(exc: IntegrityError) -> bool:
    """Whether the store refused a mark for the entries' bank-reference key (migration
    0021), not for anything else."""
    diag = getattr(exc.orig, "diag", None)
    if diag is not None:  # psycopg: the index's name
        return getattr(diag, "constraint_name", None) == BANK_REF_KEY
    return str(exc.orig).startswith(_SQLITE_KEY_MESSAGE)


def _serialise(account_id: int) -> None:
    """PostgreSQL: requests acting on lines of one account run one after the other (a
    transaction-scoped advisory lock), so each reads the references the one before it
    booked, and two never wait on each other's marks crosswise. SQLite's writer lock
    (BEGIN IMMEDIATE) already admits one at a time."""
    if dialect.is_postgresql():
        db.session.execute(_LOCK_ACCOUNT, {"kind": _LOCK_KIND, "account_id": account_id})


def _unmark(connection, entry_ids: list[int]) -> None:
    """Each entry uncleared, holding no bank reference."""
    for chunk in dialect.in_chunks(sorted(entry_ids)):
        connection.execute(
            update(Entry).where(Entry.id.in_(chunk)).values(cleared=False, bank_ref=None)
        )


def _mark(connection, marks: list[dict]) -> None:
    """Each entry cleared and holding its line's bank reference."""
    if dialect.is_postgresql(connection):
        ids = dialect.int_array(m["e_id"] for m in marks)
        connection.execute(
            _MARK_ENTRIES_POSTGRESQL, {"ids": ids, "refs": [m["ref"] for m in marks]}
        )
    else:
        connection.execute(_MARK_ENTRY, marks)


class _Request:
    """The shared frame of one request: what the actions find (the references the
    account's transactions already hold) and what they leave to write at the end (the
    entries to mark, the lines' new states), so that all or nothing is decided in one
    place (finish) and each action only checks its line and records what it does."""

    def __init__(self, statement_id: int, account_id: int, created_by: int | None, held):
        self.statement_id = statement_id
        self.account_id = account_id
        self.created_by = created_by
        self.held: dict[tuple[str, int], int] = held  # (bank_ref, amount) -> its holder
        self.claimed: dict[tuple[str, int], int] = {}  # (bank_ref, amount) -> the line here
        self.taken: set[int] = set()  # transactions matched by a line of this request
        self.marks: list[dict] = []  # {e_id, ref}: entries to mark cleared
        self.posted: dict[int, tuple[int, str | None]] = {}  # transaction -> (line, bank_ref)
        self.set_lines: list[dict] = []
        self.unmarks: list[int] = []  # entries an undone match leaves uncleared, no reference

    def claim(self, line) -> None:
        """409 when the line's bank reference and amount are held by a transaction of
        the account, or taken by an earlier line of this request (as a second request
        would find it: one answer); else the line takes them."""
        if not line.bank_ref:
            return
        reference = (line.bank_ref, int(line.amount_cents))
        if reference in self.held:
            raise ConflictError(
                f"transaction {self.held[reference]} of the account already holds its bank "
                f"reference {line.bank_ref!r}: the line is a duplicate"
            )
        if reference in self.claimed:
            raise ConflictError(
                f"line {self.claimed[reference]} of this request already takes its bank "
                f"reference {line.bank_ref!r} with the same amount: the line is a duplicate"
            )
        self.claimed[reference] = int(line.line_id)

    def _booked_meanwhile(self) -> ServiceError:
        """The refusal when the key refused a mark: another request booked one of the
        lines' bank references since they were read (its marks are undone: the
        savepoint). Names the first such line and the transaction now holding it."""
        held = status.holders(self.account_id, [ref for ref, _ in self.claimed])
        for reference, line_id in self.claimed.items():
            if reference in held:
                return _on_line(
                    line_id,
                    ConflictError(
                        f"transaction {held[reference]} of the account has come to hold its "
                        f"bank reference {reference[0]!r} meanwhile: the line is a duplicate"
                    ),
                )
        first = min(self.claimed.values())  # not seen any more: still one line named
        return _on_line(
            first, ConflictError("another entry of the account holds its bank reference")
        )

    def set_line(self, line, new_status: str, tx_id: int | None) -> None:
        """The line's new status and transaction, written by finish."""
        self.set_lines.append(
            {
                "s_id": self.statement_id,
                "l_id": int(line.line_id),
                "new_status": new_status,
                "tx_id": tx_id,
            }
        )

    def finish(self) -> None:
        """Write what the actions left: the posted transactions' entries in the account
        found, every entry marked (one entries.cleared event), the lines' states."""
        self.marks.extend(_posted_entries(self.account_id, self.posted))
        if self.marks:
            try:
                with db.session.begin_nested():
                    _mark(db.session.connection(), self.marks)
            except IntegrityError as exc:
                if not _is_the_key(exc):
                    raise
                raise self._booked_meanwhile() from None
            audit.record(
                "entries.cleared",
                {
                    "account_id": self.account_id,
                    "entry_ids": sorted(m["e_id"] for m in self.marks),
                    "cleared": True,
                    "statement_id": self.statement_id,
                },
            )
        if self.unmarks:
            _unmark(db.session.connection(), self.unmarks)
            audit.record(
                "entries.cleared",
                {
                    "account_id": self.account_id,
                    "entry_ids": sorted(self.unmarks),
                    "cleared": False,
                    "statement_id": self.statement_id,
                },
            )
        db.session.connection().execute(_SET_LINE, self.set_lines)
        trail.flush()


def _post(request: _Request, wanted: dict) -> None:
    """`post`: one transaction dated the line's day through the ledger's own posting;
    its entry in the account is marked at the end."""
    line = wanted["line"]
    request.claim(line)
    cents = int(line.amount_cents)
    tx_id = transactions.record_transaction(
        line.booked_on.isoformat(),
        wanted["description"],
        [
            {"account_id": request.account_id, "amount_cents": cents},
            {"account_id": wanted["account_id"], "amount_cents": -cents},
        ],
        request.created_by,
        meets=wanted.get("meets"),
    )
    request.posted[tx_id] = (int(line.line_id), line.bank_ref)
    request.set_line(line, "posted", tx_id)
    trail.posted(request.statement_id, line, tx_id, request.account_id)


def _match(request: _Request, wanted: dict) -> None:
    """`match`: the named transaction's qualifying entry in the account is marked."""
    line = wanted["line"]
    request.claim(line)
    tx_id = wanted["transaction_id"]
    if tx_id in request.taken:
        raise ConflictError(f"transaction {tx_id} is matched by another line here")
    entry_id = status.qualifying_entry(
        request.account_id, tx_id, int(line.amount_cents), line.booked_on
    )
    request.taken.add(tx_id)
    request.marks.append({"e_id": entry_id, "ref": line.bank_ref})
    request.set_line(line, "matched", tx_id)
    trail.matched(request.statement_id, line, tx_id, entry_id)


def _ignore(request: _Request, wanted: dict) -> None:
    """`ignore`: the line is set aside; nothing in the books changes."""
    request.set_line(wanted["line"], "ignored", None)
    trail.ignored(request.statement_id, wanted["line"])


def _statement_entry(account_id: int, tx_id: int, line):
    """The entry of transaction `tx_id` in the statement's account that a posted or
    matched line marked: of the line's amount, holding its bank reference (none when
    the line has none), the lowest id; None when there is none any more."""
    ref = Entry.bank_ref == line.bank_ref if line.bank_ref else Entry.bank_ref.is_(None)
    return db.session.execute(
        select(Entry.id, Entry.reconciled)
        .where(
            Entry.transaction_id == tx_id,
            Entry.account_id == account_id,
            Entry.amount_cents == int(line.amount_cents),
            ref,
        )
        .order_by(Entry.cleared.desc(), Entry.id)
        .limit(1)
    ).first()


def _undo(request: _Request, wanted: dict) -> None:
    """`undo`: the line waits again. A posted line's transaction is deleted through the
    ledger's own deletion (the lock date, reconciled entries: 409; its own
    transaction.deleted event); a matched line's entry loses its cleared mark and the
    bank reference the line gave it (the lock date and a reconciled entry: 409)."""
    line = wanted["line"]
    before = str(line.status)
    tx_id = None if line.transaction_id is None else int(line.transaction_id)
    entry_id = None
    if tx_id is not None and before in ("posted", "matched"):
        entry = _statement_entry(request.account_id, tx_id, line)
        entry_id = None if entry is None else int(entry.id)
        if before == "posted":
            transactions.delete_transaction(tx_id)
        else:
            day = db.session.execute(
                select(Transaction.occurred_on).where(Transaction.id == tx_id)
            ).scalar_one()
            lock.refuse_if_locked(day)
            if entry is not None and entry.reconciled:
                raise ConflictError(
                    f"transaction {tx_id} is reconciled: its match cannot be undone"
                )
            if entry_id is not None:
                request.unmarks.append(entry_id)
    request.set_line(line, "new", None)
    trail.undone(request.statement_id, line, before, tx_id, entry_id)


_ACT = {"post": _post, "match": _match, "ignore": _ignore, "undo": _undo}


def act(statement_id: int, body: dict, created_by: int | None) -> dict:
    """Apply every asked action or none (see the module docstring); the statement."""
    header = statements.header_row(statement_id, for_update=True)
    account_id = int(header.account_id)
    _serialise(account_id)
    rows = statements.lines_of(statement_id)
    lines = {int(row.line_id): row for row in rows}
    decided = {
        int(row.line_id): decision
        for row, decision in zip(rows, status.decide(account_id, rows, statement_id), strict=True)
    }
    asked = _parse(body.get("lines"), lines, decided, account_id)
    _schedule_hints(account_id, rows, decided, asked)
    refs = [
        w["line"].bank_ref for w in asked if w["action"] in ("post", "match") and w["line"].bank_ref
    ]
    request = _Request(statement_id, account_id, created_by, status.holders(account_id, refs))
    for wanted in asked:
        try:
            _ACT[wanted["action"]](request, wanted)
        except ServiceError as err:
            raise _on_line(int(wanted["line"].line_id), err) from None
    request.finish()
    return statements.get(statement_id)


def _schedule_hints(account_id: int, rows, decided, asked: list[dict]) -> None:
    """A `post` to the counter account of the schedule its line is suggested (as a read
    suggests it: schedule_meeting.for_lines over the statement's new lines) meets that
    occurrence (docs/schedules.md, "Statement lines"): `meets` on the asked action."""
    posts = [w for w in asked if w["action"] == "post"]
    if not posts:
        return
    waiting = [r for r in rows if decided[int(r.line_id)].status == "new"]
    met = schedule_meeting.for_lines(
        account_id,
        [
            schedule_meeting.BankLine(r.booked_on, int(r.amount_cents), r.payee, r.memo)
            for r in waiting
        ],
    )
    by_line = {int(r.line_id): m for r, m in zip(waiting, met, strict=True) if m is not None}
    for wanted in posts:
        found = by_line.get(int(wanted["line"].line_id))
        if found is not None and found.counter_account_id == wanted["account_id"]:
            wanted["meets"] = (found.schedule_id, found.occurs_on)


def _posted_entries(account_id: int, posted: dict[int, tuple[int, str | None]]) -> list[dict]:
    """The statement account's entry of each posted transaction, with its line's ref."""
    marks = []
    ids = sorted(posted)
    for chunk in dialect.in_chunks(ids):
        rows = db.session.execute(
            select(Entry.transaction_id, Entry.id).where(
                Entry.transaction_id.in_(chunk), Entry.account_id == account_id
            )
        )
        for tx_id, entry_id in rows:
            marks.append({"e_id": int(entry_id), "ref": posted[int(tx_id)][1]})
    return marks
