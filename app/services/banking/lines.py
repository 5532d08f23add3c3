"""POST /statements/{id}/lines: post, match or ignore lines, all or nothing
(docs/statements.md, "Acting on the lines").

- `post` {account_id, description?}: one transaction dated the line's booked_on, the
  line's amount on the statement's account and the opposite on `account_id`,
  through the ledger's own posting (transactions.record_transaction: the lock date,
  open accounts, one transaction.posted event each). Its description: as given,
  else the payee, else the memo, else DEFAULT_DESCRIPTION, cut to the limit.
- `match` {transaction_id?}: the line's own candidate, or the transaction named,
  which must qualify as status.decide's `match` does; no new transaction.
- `ignore`: the line is set aside.

Posted and matched lines leave their mark on the statement account's entry: cleared,
holding the line's bank reference; one entries.cleared event (with the statement's
id) covers the request's entries. A line already posted, matched or a duplicate, or
a line whose bank reference another transaction of the account now holds (or an
earlier line of the same request takes, with the same amount: the file listed one
bank line twice, and two requests would refuse the second likewise): 409.
Every refusal names the line (400 or 409) and, raised inside the request's one unit
of work, leaves nothing changed.
"""

from __future__ import annotations

from sqlalchemy import bindparam, select, text, update

from ...extensions import db
from ...models import Entry, StatementLine
from ...store import dialect
from ..errors import BadRequestError, ConflictError, ServiceError
from ..ledger import audit, transactions, validate
from . import statements, status, trail

ACTIONS = ("post", "match", "ignore")
DEFAULT_DESCRIPTION = "Bank statement"
LINES_MAX = 10_000
DONE = {"posted": "posted", "matched": "matched", "duplicate": "a duplicate"}


def _on_line(line_id: int, err: ServiceError) -> ServiceError:
    """The same refusal, naming the line."""
    err.message = f"line {line_id}: {err.message}"
    err.args = (err.message,)
    return err


def _parse(items, lines: dict[int, object], account_id: int) -> list[dict]:
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
        state = line.status  # type: ignore[attr-defined]
        if state in DONE:
            raise ConflictError(f"line {line_id}: the line is already {DONE[state]}")
        try:
            asked.append(_one(item, line, action, account_id))
        except ServiceError as err:
            raise _on_line(line_id, err) from None
    return asked


def _one(item: dict, line, action: str, account_id: int) -> dict:
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
            if line.status != "match" or line.transaction_id is None:
                raise BadRequestError("the line has no candidate to match: name a 'transaction_id'")
            named = line.transaction_id
        wanted["transaction_id"] = validate.integer("transaction_id", named)
    return wanted


def _description(given, line) -> str:
    if given is not None and not (isinstance(given, str) and not given.strip()):
        return validate.text("description", given, max_length=transactions.DESCRIPTION_MAX)
    for said in (line.payee, line.memo):
        if said and said.strip():
            return said.strip()[: transactions.DESCRIPTION_MAX]
    return DEFAULT_DESCRIPTION


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


def _mark(connection, marks: list[dict]) -> None:
    """Each entry cleared and holding its line's bank reference."""
    if dialect.is_postgresql(connection):
        ids = dialect.int_array(m["e_id"] for m in marks)
        connection.execute(
            _MARK_ENTRIES_POSTGRESQL, {"ids": ids, "refs": [m["ref"] for m in marks]}
        )
    else:
        connection.execute(_MARK_ENTRY, marks)


def act(statement_id: int, body: dict, created_by: int | None) -> dict:
    """Apply every asked action or none (see the module docstring); the statement."""
    header = statements.header_row(statement_id, for_update=True)
    account_id = int(header.account_id)
    lines = {int(row.line_id): row for row in statements.lines_of(statement_id)}
    asked = _parse(body.get("lines"), lines, account_id)
    refs = [w["line"].bank_ref for w in asked if w["action"] != "ignore" and w["line"].bank_ref]
    held = status.holders(account_id, refs)
    taken: set[int] = set()
    marks: list[dict] = []
    set_lines: list[dict] = []
    posted: dict[int, tuple[int, str | None]] = {}  # transaction -> (line_id, bank_ref)
    claimed: dict[tuple[str, int], int] = {}  # (bank_ref, amount) -> the line taking it here
    for wanted in asked:
        line = wanted["line"]
        line_id = int(line.line_id)
        try:
            if wanted["action"] == "ignore":
                set_lines.append(_line_state(statement_id, line_id, "ignored", None))
                trail.ignored(statement_id, line)
                continue
            reference = (line.bank_ref, int(line.amount_cents)) if line.bank_ref else None
            if reference in held:
                holder = held[reference]
                raise ConflictError(
                    f"transaction {holder} of the account already holds its bank reference "
                    f"{line.bank_ref!r}: the line is a duplicate"
                )
            if reference in claimed:  # as a second request would find it: one answer
                raise ConflictError(
                    f"line {claimed[reference]} of this request already takes its bank "
                    f"reference {line.bank_ref!r} with the same amount: the line is a duplicate"
                )
            if wanted["action"] == "match":
                tx_id = wanted["transaction_id"]
                if tx_id in taken:
                    raise ConflictError(f"transaction {tx_id} is matched by another line here")
                entry_id = status.qualifying_entry(
                    account_id, tx_id, int(line.amount_cents), line.booked_on
                )
                taken.add(tx_id)
                if reference is not None:
                    claimed[reference] = line_id
                marks.append({"e_id": entry_id, "ref": line.bank_ref})
                set_lines.append(_line_state(statement_id, line_id, "matched", tx_id))
                trail.matched(statement_id, line, tx_id, entry_id)
            else:
                cents = int(line.amount_cents)
                tx_id = transactions.record_transaction(
                    line.booked_on.isoformat(),
                    wanted["description"],
                    [
                        {"account_id": account_id, "amount_cents": cents},
                        {"account_id": wanted["account_id"], "amount_cents": -cents},
                    ],
                    created_by,
                )
                posted[tx_id] = (line_id, line.bank_ref)
                if reference is not None:
                    claimed[reference] = line_id
                set_lines.append(_line_state(statement_id, line_id, "posted", tx_id))
                trail.posted(statement_id, line, tx_id, account_id)
        except ServiceError as err:
            raise _on_line(line_id, err) from None
    marks.extend(_posted_entries(account_id, posted))
    if marks:
        _mark(db.session.connection(), marks)
        audit.record(
            "entries.cleared",
            {
                "account_id": account_id,
                "entry_ids": sorted(m["e_id"] for m in marks),
                "cleared": True,
                "statement_id": statement_id,
            },
        )
    db.session.connection().execute(_SET_LINE, set_lines)
    trail.flush()
    return statements.get(statement_id)


def _line_state(statement_id: int, line_id: int, new_status: str, tx_id: int | None) -> dict:
    return {"s_id": statement_id, "l_id": line_id, "new_status": new_status, "tx_id": tx_id}


_CHUNK = 900


def _posted_entries(account_id: int, posted: dict[int, tuple[int, str | None]]) -> list[dict]:
    """The statement account's entry of each posted transaction, with its line's ref."""
    marks = []
    ids = sorted(posted)
    for i in range(0, len(ids), _CHUNK):
        rows = db.session.execute(
            select(Entry.transaction_id, Entry.id).where(
                Entry.transaction_id.in_(ids[i : i + _CHUNK]), Entry.account_id == account_id
            )
        )
        for tx_id, entry_id in rows:
            marks.append({"e_id": int(entry_id), "ref": posted[int(tx_id)][1]})
    return marks
