"""Import an hledger/ledger journal, a Beancount file or our CSV, all or nothing.

IMPORTANT: every transaction goes through transactions.record_transaction, the
same validation as POST /transactions; nothing here writes entries directly.
Nothing here commits; who ends the unit, and who undoes a dry run:

- import_text (the CLI's `import`): a whole file in the caller's unit. The command
  commits it once at the end through cli.common.run (store.run_unit); with
  `--dry-run` the command itself rolls the unit back (store.rollback). A file with
  one bad transaction raises, and run_unit rolls the unit back: nothing is stored.
  Errors name the file's line number.
- import_statement (POST /import): every row is checked first by ledger.postable,
  the checks record_transaction itself makes (read once for the whole file). A dry
  run stops there: it writes nothing, so the HTTP boundary (routes/boundary.py,
  store.run_unit) commits a unit holding nothing. A real import refuses at its first
  bad row (a 400; the boundary rolls the unit back), else posts every row through
  record_transaction and is committed by the boundary.

Re-importing adds nothing: a transaction whose content fingerprint (date,
description, entries by kind, account name and cents) matches one already in
the books is skipped. Matching counts copies, so two identical coffees on one
day in the file are both kept on the first import and both skipped later.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date

from sqlalchemy import select
from sqlalchemy import text as sql

from ...extensions import db
from ...models import Account, Entry, Transaction
from ...store import dialect
from ..errors import BadRequestError, ServiceError
from ..identity import users
from ..ledger import accounts as accounts_service
from ..ledger import audit, lookalikes, postable, transactions, validate
from . import parse_beancount, parse_csv, parse_journal
from .parsed import Parsed, ParsedTx
from .plaintext import ParseProblem, fingerprint

# Imports run one at a time, so two concurrent imports of one file cannot both miss
# each other's transactions (on SQLite the writer's BEGIN IMMEDIATE does the same).
IMPORT_LOCK_KEY = 7_242_009

PARSERS = {
    "hledger": parse_journal.parse,
    "beancount": parse_beancount.parse,
    "csv": parse_csv.parse,
}


@dataclass
class ImportResult:
    added: int = 0
    duplicates: int = 0  # rows already in the books (same fingerprint), skipped: not look-alikes
    accounts_created: int = 0


def check_format(fmt) -> str:
    if fmt not in PARSERS:
        raise BadRequestError("format must be one of: " + ", ".join(PARSERS))
    return fmt


def _ensure_accounts(parsed: Parsed, result: ImportResult) -> dict[str, int]:
    """Account ids by name; missing accounts are created with the kind of their top level."""
    rows = db.session.execute(select(Account.id, Account.name, Account.kind))
    known = {r.name: (r.id, r.kind) for r in rows}
    wanted = list(parsed.accounts)
    for tx in parsed.transactions:
        wanted.extend((p.line, p.kind, p.name) for p in tx.postings)
    for line, kind, name in wanted:
        if name in known:
            if known[name][1] != kind:
                raise BadRequestError(
                    f"line {line}: account '{name}' exists here as {known[name][1]}, "
                    f"but the file puts it under {kind}"
                )
            continue
        if name != name.strip() or not name:
            raise BadRequestError(
                f"line {line}: account name '{name}' is blank or has outer spaces"
            )
        try:
            created = accounts_service.create_account(name, kind)
        except ServiceError as err:
            raise BadRequestError(f"line {line}: {err.message}") from err
        known[name] = (created["id"], kind)
        result.accounts_created += 1
    return {name: pair[0] for name, pair in known.items()}


def _tx_fingerprint(tx: ParsedTx) -> str:
    return fingerprint(
        tx.date,
        tx.description.strip(),
        # Parsed.finish has inferred every elided amount, so no cents is None here.
        [(p.kind, p.name, p.cents) for p in tx.postings],  # type: ignore[misc]
    )


def _existing_fingerprints(first: str, last: str) -> Counter:
    """Fingerprints of the stored transactions dated within [first, last]."""
    rows = db.session.execute(
        select(
            Transaction.id,
            Transaction.occurred_on,
            Transaction.description,
            Account.kind,
            Account.name,
            Entry.amount_cents,
        )
        .join(Entry, Entry.transaction_id == Transaction.id)
        .join(Account, Account.id == Entry.account_id)
        .where(
            Transaction.occurred_on >= date.fromisoformat(first),
            Transaction.occurred_on <= date.fromisoformat(last),
        )
    )
    grouped: dict[int, tuple[str, str, list]] = {}
    for r in rows:
        head = grouped.setdefault(r.id, (r.occurred_on.isoformat(), r.description, []))
        head[2].append((r.kind, r.name, r.amount_cents))
    return Counter(fingerprint(d, desc, entries) for d, desc, entries in grouped.values())


def _author_id(email: str | None, cache: dict) -> int | None:
    if not email:
        return None
    if email not in cache:
        try:
            user = users.find_user(email)
        except ServiceError:
            user = None
        cache[email] = user.id if user else None
    return cache[email]


def import_text(text: str, fmt: str) -> ImportResult:
    """Parse and post a whole file in the current unit of work (the caller commits).

    Every change it makes is recorded with via `import` (the caller's user and client
    kept): one transaction.imported event per transaction, account.created per new account.
    """
    with audit.acting(via="import"):
        return _import_text(text, fmt)


def _import_text(text: str, fmt: str) -> ImportResult:
    try:
        parsed = PARSERS[check_format(fmt)](text)
    except ParseProblem as problem:
        raise BadRequestError(f"line {problem.line}: {problem.message}") from problem
    result = ImportResult()
    if dialect.is_postgresql():
        db.session.execute(sql("SELECT pg_advisory_xact_lock(:key)"), {"key": IMPORT_LOCK_KEY})
    account_ids = _ensure_accounts(parsed, result)
    if not parsed.transactions:
        return result
    dates = [tx.date for tx in parsed.transactions]
    seen = _existing_fingerprints(min(dates), max(dates))
    authors: dict = {}
    for tx in parsed.transactions:
        key = _tx_fingerprint(tx)
        if seen[key] > 0:
            seen[key] -= 1
            result.duplicates += 1
            continue
        entries = [
            {"account_id": account_ids[p.name], "amount_cents": p.cents} for p in tx.postings
        ]
        try:
            transactions.record_transaction(
                tx.date,
                tx.description,
                entries,
                created_by=_author_id(tx.author, authors),
                action="transaction.imported",
            )
        except ServiceError as err:
            raise BadRequestError(f"line {tx.line}: {err.message}") from err
        result.added += 1
    db.session.flush()
    return result


# ---- the browser's bank-statement import (POST /import) -------------------------

STATEMENT_MAX_ROWS = 5000


def _statement_row(number: int, item) -> tuple[date, object, list[tuple[int, int]]]:
    """Check one row's shape enough to look for look-alikes; record_transaction checks all."""
    if not isinstance(item, dict):
        raise BadRequestError(f"row {number}: must be an object")
    if item.get("replaces") is not None:
        # A statement adds what the bank saw; a correction is one POST /transactions.
        raise BadRequestError(f"row {number}: replaces is not taken by an import")
    try:
        if item.get("occurred_on") is None:
            raise BadRequestError("occurred_on is required")
        day = validate.date_value("occurred_on", item.get("occurred_on"))
        entries = validate.entries(item.get("entries"))
    except ServiceError as err:
        raise BadRequestError(f"row {number}: {err.message}") from err
    return day, item.get("description"), entries


def import_statement(items, dry_run, created_by: int | None) -> dict:
    """Post statement rows all or nothing, or (dry_run) only say what would happen.

    Every row is checked by ledger.postable, record_transaction's own checks (the
    posting, then the lock date, the accounts and the 64-bit balances, read once for
    the whole file), in row order as if the rows before it that pass were posted; a
    real import then posts every row through transactions.record_transaction, as
    every import does. So a dry run (which posts nothing and writes nothing: no
    savepoint, no sequence advanced) reports exactly the refusals a real import would
    meet: rows [{row, error, possible_duplicates}]. Each row's possible_duplicates
    (ledger.lookalikes) are the STORED transactions it looks like, computed before
    anything of this import is posted. A real import refuses the whole file at its
    first bad row: 400 naming the row (a row the file cannot hold as a posting first,
    then the first row the books refuse).
    """
    with audit.acting(via="import"):
        return _import_statement(items, dry_run, created_by)


Shape = tuple[date, object, list[tuple[int, int]]]  # day, description, entries


def _shapes(items, dry_run) -> tuple[list[dict], list[Shape | None]]:
    """Each row's answer and its shape (day, description, entries), None when it has
    none; a real import raises at the first row without one."""
    rows: list[dict] = []
    shapes: list[Shape | None] = []
    for number, item in enumerate(items, start=1):
        rows.append({"row": number, "error": None, "possible_duplicates": []})
        try:
            day, description, entries = _statement_row(number, item)
        except BadRequestError as err:
            if not dry_run:
                raise
            rows[-1]["error"] = err.message
            shapes.append(None)
            continue
        shapes.append((day, description, entries))
    return rows, shapes


def _payload(entries: list[tuple[int, int]]) -> list[dict]:
    """Entries as record_transaction takes them."""
    return [{"account_id": a, "amount_cents": c} for a, c in entries]


def _checked(rows: list[dict], shapes: list[Shape | None]) -> list[postable.Posting | None]:
    """Each row as record_transaction would take it, or None with the row's error set:
    postable's checks, the books read once for all the rows (postable.Books)."""
    postings: list[postable.Posting | None] = []
    for row, shape in zip(rows, shapes, strict=True):
        posting = None
        if shape is not None:
            day, description, entries = shape
            try:
                # As record_transaction is called below (the same arguments).
                posting = postable.checked(day.isoformat(), description, _payload(entries))
            except ServiceError as err:
                row["error"] = f"row {row['row']}: {err.message}"
        postings.append(posting)
    books = postable.Books([p for p in postings if p is not None])
    for i, (row, posting) in enumerate(zip(rows, postings, strict=True)):
        refusal = books.refusal(posting) if posting is not None else None
        if refusal is not None:
            row["error"] = f"row {row['row']}: {refusal.message}"
            postings[i] = None
    return postings


def _import_statement(items, dry_run, created_by: int | None) -> dict:
    if not isinstance(dry_run, bool):
        raise BadRequestError("dry_run must be true or false")
    if not isinstance(items, list) or not items:
        raise BadRequestError("transactions must be a non-empty array")
    if len(items) > STATEMENT_MAX_ROWS:
        raise BadRequestError(f"transactions may hold at most {STATEMENT_MAX_ROWS} rows")
    # Only a real import takes the import lock: a dry run writes nothing, so it cannot
    # race another import's writes (it reads the books as they are, like any read).
    if not dry_run and dialect.is_postgresql():
        db.session.execute(sql("SELECT pg_advisory_xact_lock(:key)"), {"key": IMPORT_LOCK_KEY})
    rows, shapes = _shapes(items, dry_run)
    # Look-alikes among the STORED transactions, for every row in one pass, before
    # anything of this import is posted.
    looked_up = [(n, shape) for n, shape in enumerate(shapes) if shape and shape[2]]
    found = lookalikes.look_alikes_of_many([(day, entries) for _, (day, _, entries) in looked_up])
    for (n, _), ids in zip(looked_up, found, strict=True):
        rows[n]["possible_duplicates"] = ids
    _checked(rows, shapes)
    if dry_run:
        return {"dry_run": True, "imported": 0, "rows": rows}
    refused = next((row["error"] for row in rows if row["error"]), None)
    if refused is not None:
        raise BadRequestError(refused)
    for row, shape in zip(rows, shapes, strict=True):
        assert shape is not None  # a real import raised at the first row without one
        day, description, entries = shape
        try:
            row["transaction_id"] = transactions.record_transaction(
                day.isoformat(),
                description,
                _payload(entries),
                created_by=created_by,
                action="transaction.imported",
            )
        except ServiceError as err:  # the books changed since _checked read them
            raise BadRequestError(f"row {row['row']}: {err.message}") from err
    db.session.flush()
    return {"dry_run": False, "imported": len(rows), "rows": rows}
