"""Import an hledger/ledger journal, a Beancount file or our CSV, all or nothing.

IMPORTANT: every transaction goes through transactions.record_transaction, the
same validation as POST /transactions; nothing here writes entries directly.
Nothing here commits; who ends the unit, and who undoes a dry run:

- import_text (the CLI's `import`): a whole file in the caller's unit. The command
  commits it once at the end through cli.common.run (store.run_unit); with
  `--dry-run` the command itself rolls the unit back (store.rollback). A file with
  one bad transaction raises, and run_unit rolls the unit back: nothing is stored.
  Errors name the file's line number.
- import_statement (POST /import): a dry run posts every row inside a savepoint and
  rolls that savepoint back itself before it returns, so the HTTP boundary
  (routes/boundary.py, store.run_unit) commits a unit holding nothing of the import.
  A real import is committed by the boundary; its first bad row raises a 400, and the
  boundary rolls the whole unit back.

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
from ..ledger import audit, lookalikes, transactions, validate
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

    Every row goes through transactions.record_transaction, as every import does.
    Each row's possible_duplicates (ledger.lookalikes) are the STORED transactions it
    looks like, computed before anything of this import is posted. A dry run posts
    every row inside a savepoint that it rolls back itself, so the preview reports exactly
    the refusals a real import would meet: rows [{row, error, possible_duplicates}].
    A real import refuses the whole file at its first bad row: 400 naming the row.
    """
    with audit.acting(via="import"):
        return _import_statement(items, dry_run, created_by)


def _import_statement(items, dry_run, created_by: int | None) -> dict:

    if not isinstance(dry_run, bool):
        raise BadRequestError("dry_run must be true or false")
    if not isinstance(items, list) or not items:
        raise BadRequestError("transactions must be a non-empty array")
    if len(items) > STATEMENT_MAX_ROWS:
        raise BadRequestError(f"transactions may hold at most {STATEMENT_MAX_ROWS} rows")
    if dialect.is_postgresql():
        db.session.execute(sql("SELECT pg_advisory_xact_lock(:key)"), {"key": IMPORT_LOCK_KEY})
    rows: list[dict] = []
    checked: list[tuple[date, object, list[tuple[int, int]]] | None] = []
    for number, item in enumerate(items, start=1):
        try:
            day, description, entries = _statement_row(number, item)
        except BadRequestError as err:
            if not dry_run:
                raise
            rows.append({"row": number, "error": err.message, "possible_duplicates": []})
            checked.append(None)
            continue
        rows.append({"row": number, "error": None, "possible_duplicates": []})
        checked.append((day, description, entries))
    # Look-alikes among the STORED transactions, for every row in one pass, before
    # anything of this import is posted.
    looked_up = [(n, parsed) for n, parsed in enumerate(checked) if parsed and parsed[2]]
    found = lookalikes.look_alikes_of_many([(p[0], p[2]) for _, p in looked_up])
    for (n, _), ids in zip(looked_up, found, strict=True):
        rows[n]["possible_duplicates"] = ids
    outer = db.session.begin_nested() if dry_run else None
    try:
        for row, parsed in zip(rows, checked, strict=True):
            if parsed is None:
                continue
            day, description, entries = parsed
            payload = [{"account_id": a, "amount_cents": c} for a, c in entries]
            # No savepoint per row: record_transaction refuses before it writes anything
            # (its checks raise in Python, and the PostgreSQL statement inserts all or
            # nothing), and thousands of savepoints overflow PostgreSQL's subtransaction
            # cache (a 5000-row preview took 26 s with them, against 4 s without).
            try:
                tx_id = transactions.record_transaction(
                    day.isoformat(),
                    description,
                    payload,
                    created_by=created_by,
                    action="transaction.imported",
                )
                if not dry_run:
                    row["transaction_id"] = tx_id
            except ServiceError as err:
                if not dry_run:
                    raise BadRequestError(f"row {row['row']}: {err.message}") from err
                row["error"] = f"row {row['row']}: {err.message}"
    finally:
        if outer is not None:
            outer.rollback()
    if dry_run:
        return {"dry_run": True, "imported": 0, "rows": rows}
    db.session.flush()
    return {"dry_run": False, "imported": len(rows), "rows": rows}
