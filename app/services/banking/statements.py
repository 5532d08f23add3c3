"""Bank statements held for review (docs/statements.md): upload, read, delete, and
reconcile the account from the statement's closing balance. Acting on the lines
(post, match, ignore): lines.py; the status decided at upload: status.py; the
suggestions: rules.py.

- Upload: the account must be an asset or liability account that is not archived
  (400; unknown: 404); at most max_bytes() (MAX_STATEMENT_BYTES: 413); the format is
  read from the bytes by the readers (415 not a statement, 400 a broken one or text
  the books cannot keep, 413 more than max_lines() lines: MAX_STATEMENT_LINES); a file
  of several bank accounts needs `bank_account` naming one (400 with the identifiers
  found). The bytes are kept with their SHA-256; one statement.uploaded event
  carries it, so `verify` can recompute it (verify_statements.py). Every refusal
  comes before anything is written.
- Delete: the statement and its lines; the transactions it posted or matched stay,
  their entries keeping the bank's reference. One statement.deleted event.
- Reconcile: as POST /accounts/{id}/reconciliations would, with the statement's
  closing balance and its date, once no line waits (`new` or `match`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace

import orjson
from flask import current_app, has_app_context
from sqlalchemy import delete, func, insert, select, text

from ...extensions import db
from ...models import Account, Statement, StatementLine
from ...store import dialect
from .. import clock
from ..errors import BadRequestError, ConflictError, PayloadTooLargeError
from ..ledger import accounts, audit, reconciliation, reports, settings, validate
from . import readers, rules, status, trail
from .bankfile import DEFAULT_MAX_LINES, BankFile, BankLine, BankStatement, account_key

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
STATEMENT_KINDS = ("asset", "liability")
WAITING = ("new", "match")
FILE_EXTENSIONS = {"ofx": "ofx", "camt.053": "xml", "mt940": "sta"}


def max_bytes() -> int:
    """The largest statement file taken, in bytes (MAX_STATEMENT_BYTES, default 5 MiB)."""
    if has_app_context():
        return int(current_app.config.get("MAX_STATEMENT_BYTES") or DEFAULT_MAX_BYTES)
    return DEFAULT_MAX_BYTES


def too_large(limit: int | None = None) -> PayloadTooLargeError:
    """The 413 for a file over `limit` bytes (max_bytes() unless given), naming the limit."""
    limit = max_bytes() if limit is None else limit
    return PayloadTooLargeError(
        f"the statement file is larger than the limit of {limit} bytes "
        f"({limit / 1048576:.4g} MiB, MAX_STATEMENT_BYTES); nothing was stored"
    )


def max_lines() -> int:
    """The most lines one statement may hold (MAX_STATEMENT_LINES, default 20000)."""
    if has_app_context():
        return int(current_app.config.get("MAX_STATEMENT_LINES") or DEFAULT_MAX_LINES)
    return DEFAULT_MAX_LINES


def read_file(data: bytes) -> BankFile:
    """The readers' BankFile of these bytes (NotAStatement 415, StatementFormatError 400,
    TooManyLines 413: more than max_lines() lines, MAX_STATEMENT_LINES)."""
    return readers.read(data, max_lines())


def statement_account(account_id: int) -> Account:
    """The account a statement may belong to: 404 unknown, 400 unless an open asset or
    liability account."""
    account = accounts.get_account(account_id)
    if account.kind not in STATEMENT_KINDS:
        raise BadRequestError(
            f"account {account.id} is a{'n' if account.kind[0] in 'aeiou' else ''} "
            f"{account.kind} account: a bank statement belongs to an asset or liability account"
        )
    if account.archived:
        raise BadRequestError(f"account {account.id} is archived and takes no statement")
    return account


def choose(bank_file: BankFile, bank_account) -> BankStatement:
    """The one statement of the file to keep: the only one, or the one `bank_account`
    names (compared without spaces, case-insensitively); 400 with the identifiers
    found otherwise."""
    found = [s.bank_account for s in bank_file.statements if s.bank_account is not None]
    if bank_account is not None and not isinstance(bank_account, str):
        raise BadRequestError("'bank_account' must be text")
    wanted = account_key(bank_account) if bank_account and bank_account.strip() else None
    if len(bank_file.statements) == 1:
        only = bank_file.statements[0]
        if wanted is None or only.bank_account is None or account_key(only.bank_account) == wanted:
            return only
    elif not bank_file.statements:
        raise BadRequestError("the file holds no statement")
    chosen = [
        s
        for s in bank_file.statements
        if wanted is not None and account_key(s.bank_account) == wanted  # no identifier: ""
    ]
    if len(chosen) == 1:
        return chosen[0]
    error = BadRequestError(
        "the file holds more than one bank account: name one in the form field 'bank_account'"
        if wanted is None
        else f"the file holds no statement of bank account {str(bank_account).strip()!r}"
    )
    error.extra = {"bank_accounts": found}
    raise error


AUDIT_KEYS = (
    "id",
    "account_id",
    "format",
    "bank_account",
    "currency",
    "period_from",
    "period_to",
    "opening_balance_cents",
    "closing_balance_cents",
    "closing_balance_on",
    "sha256",
    "created_at",
)


def audit_object(statement: dict, size: int, lines: int, rows: list[dict] | None = None) -> dict:
    """The object of a statement.* event: the header as served, the file's size and
    how many lines; an upload's also every line as stored (`rows`, trail.line_object
    without the statement's id): what verify replays (verify_statements.py)."""
    obj: dict = {
        "statement": {**{k: statement[k] for k in AUDIT_KEYS}, "size": size, "lines": lines}
    }
    if rows is not None:
        obj["lines"] = [trail.line_fields(r, r["status"], r["transaction_id"]) for r in rows]
    return obj


# Core, on the session's connection: one executemany, without the ORM's bulk bookkeeping.
_INSERT_LINES = insert(StatementLine)
# PostgreSQL: every line in one statement (one JSON array), not one per line.
_INSERT_LINES_POSTGRESQL = text(
    """
    INSERT INTO statement_lines (statement_id, line_id, booked_on, amount_cents, payee,
                                 payee_key, memo, bank_ref, status, transaction_id)
    SELECT statement_id, line_id, booked_on, amount_cents, payee, payee_key, memo,
           bank_ref, status, transaction_id
    FROM json_to_recordset(CAST(:rows AS json)) AS r (
        statement_id bigint, line_id integer, booked_on date, amount_cents bigint,
        payee text, payee_key text, memo text, bank_ref text, status text,
        transaction_id bigint)
    """
)


def _insert_lines(rows: list[dict]) -> None:
    connection = db.session.connection()
    if dialect.is_postgresql(connection):
        connection.execute(_INSERT_LINES_POSTGRESQL, {"rows": orjson.dumps(rows).decode()})
    else:
        connection.execute(_INSERT_LINES, rows)


def refuse_other_currency(chosen: BankStatement) -> None:
    """400 naming both when the statement's currency is another than the books' (when
    both are known; docs/statements.md, "The books' currency")."""
    books = settings.currency()
    theirs = (chosen.currency or "").strip().upper()
    if books is not None and theirs and theirs != books:
        raise BadRequestError(
            f"the statement is in {theirs}, but the books are kept in {books}: nothing was stored"
        )


NO_REFERENCE = "nonref"  # MT940's word for none, in any case
REF_MIN = 3  # a shorter reference tells no line from another


def unique_refs(bank_file: BankFile, lines: Sequence[BankLine]) -> list[BankLine]:
    """The lines with the references the file does not keep unique read as none:
    `NONREF` (any case), one of fewer than REF_MIN characters, and one the file (any of
    its statements) gives to lines of different dates or amounts. A reference on
    several lines of one date and amount stays: the bank listed one line twice."""
    seen: dict[str, set[tuple]] = {}
    for statement in bank_file.statements:
        for line in statement.lines:
            if line.bank_ref:
                seen.setdefault(line.bank_ref, set()).add((line.booked_on, line.amount_cents))

    def kept(ref: str | None) -> bool:
        return bool(
            ref
            and len(ref.strip()) >= REF_MIN
            and ref.strip().casefold() != NO_REFERENCE
            and len(seen.get(ref, ())) <= 1
        )

    return [
        line if line.bank_ref is None or kept(line.bank_ref) else replace(line, bank_ref=None)
        for line in lines
    ]


def refuse_if_stored(account_id: int, sha256: str) -> None:
    """409 {error, statement_id} when a statement of the account already holds a file
    of these bytes (the same SHA-256): the same file uploaded again."""
    same = db.session.execute(
        select(Statement.id, Statement.created_at)
        .where(Statement.account_id == account_id, Statement.sha256 == sha256)
        .order_by(Statement.id)
        .limit(1)
    ).first()
    if same is not None:
        error = ConflictError(
            f"this file was already uploaded to the account on {clock.iso(same.created_at)} "
            f"as statement {same.id}; nothing was stored"
        )
        error.extra = {"statement_id": int(same.id)}
        raise error


def upload(account_id: int, data: bytes | None, bank_account, created_by: int | None) -> dict:
    """POST /accounts/{id}/statements: read, decide each line's status, keep; 201 the
    statement. Every refusal comes before the first write."""
    account = statement_account(account_id)
    if data is None:
        raise BadRequestError("send the statement as a multipart/form-data part named 'file'")
    limit = max_bytes()
    if len(data) > limit:
        raise too_large(limit)
    if not data:
        raise BadRequestError("the 'file' part is empty: send the statement's bytes")
    sha256 = hashlib.sha256(data).hexdigest()
    refuse_if_stored(account.id, sha256)
    bank_file = read_file(data)
    chosen = choose(bank_file, bank_account)
    refuse_other_currency(chosen)
    read_lines = unique_refs(bank_file, chosen.lines)
    decided = status.decide(account.id, read_lines)
    statement_id = db.session.execute(
        insert(Statement).returning(Statement.id),
        {
            "account_id": account.id,
            "format": bank_file.format,
            "bank_account": chosen.bank_account,
            "currency": chosen.currency,
            "period_from": chosen.period_from,
            "period_to": chosen.period_to,
            "opening_balance_cents": chosen.opening_balance_cents,
            "closing_balance_cents": chosen.closing_balance_cents,
            "closing_balance_on": chosen.closing_balance_on,
            "size": len(data),
            "sha256": sha256,
            "created_at": clock.now().replace(microsecond=0),
            "created_by": created_by,
            "content_bytes": data,
        },
    ).scalar_one()
    rows = [
        {
            "statement_id": statement_id,
            "line_id": number,
            "booked_on": line.booked_on,
            "amount_cents": line.amount_cents,
            "payee": line.payee,
            "payee_key": rules.text_key(line.payee) or None,
            "memo": line.memo,
            "bank_ref": line.bank_ref,
            "status": decision.status,
            "transaction_id": decision.transaction_id,
        }
        for number, (line, decision) in enumerate(zip(read_lines, decided, strict=True), start=1)
    ]
    if rows:
        _insert_lines(rows)
    statement = get(statement_id)
    audit.record("statement.uploaded", audit_object(statement, len(data), len(rows), rows))
    return statement


# --- reading ------------------------------------------------------------------------

_HEADER_COLUMNS = (
    Statement.id,
    Statement.account_id,
    Statement.format,
    Statement.bank_account,
    Statement.currency,
    Statement.period_from,
    Statement.period_to,
    Statement.opening_balance_cents,
    Statement.closing_balance_cents,
    Statement.closing_balance_on,
    Statement.size,
    Statement.sha256,
    Statement.created_at,
)


def _day(value) -> str | None:
    return None if value is None else value.isoformat()


def served_header(row) -> dict:
    """A statement header row as the API serves it (no lines)."""
    return {
        "id": int(row.id),
        "account_id": int(row.account_id),
        "format": row.format,
        "bank_account": row.bank_account,
        "currency": row.currency,
        "period_from": _day(row.period_from),
        "period_to": _day(row.period_to),
        "opening_balance_cents": row.opening_balance_cents,
        "closing_balance_cents": row.closing_balance_cents,
        "closing_balance_on": _day(row.closing_balance_on),
        "sha256": row.sha256,
        "created_at": clock.iso(row.created_at),
    }


def served_line(row) -> dict:
    """A stored line as the API serves it; its suggestion is filled in by rules.suggest."""
    return {
        "line_id": int(row.line_id),
        "booked_on": row.booked_on.isoformat(),
        "amount_cents": int(row.amount_cents),
        "payee": row.payee,
        "memo": row.memo,
        "bank_ref": row.bank_ref,
        "status": row.status,
        "transaction_id": None if row.transaction_id is None else int(row.transaction_id),
        "suggestion": None,
        "candidates": [],
    }


def header_row(statement_id: int, *, for_update: bool = False):
    """The statement's header row (404 when unknown); locked on PostgreSQL when asked, so
    two requests acting on one statement run one after the other."""
    return validate.row_by_id(
        select(*_HEADER_COLUMNS),
        Statement,
        statement_id,
        "no such statement",
        for_update=for_update,
    )


def lines_of(statement_id: int) -> list:
    """The statement's stored lines in file order."""
    return list(db.session.execute(status.STATEMENT_LINES, {"statement_id": statement_id}).all())


def get(statement_id: int) -> dict:
    """GET /statements/{id}: the statement with its lines, the waiting lines' status
    and candidates worked out now (status.decide; what is stored of a waiting line is
    what its upload or undo decided), and their suggestions."""
    header = header_row(statement_id)
    statement = served_header(header)
    rows = lines_of(statement_id)
    lines = [served_line(r) for r in rows]
    for line, decision in zip(
        lines, status.decide(statement["account_id"], rows, statement_id), strict=True
    ):
        line["status"] = decision.status
        line["transaction_id"] = decision.transaction_id
        line["candidates"] = decision.candidates
    rules.suggest(statement_id, statement["account_id"], lines, [r.payee_key for r in rows])
    statement["lines"] = lines
    return statement


def list_statements(account_id=None) -> list[dict]:
    """GET /statements?account_id=: newest upload first, without lines."""
    query = select(*_HEADER_COLUMNS).order_by(Statement.id.desc())
    wanted = validate.query_integer("account_id", account_id)
    if wanted is not None:
        if not validate.id_in_range(wanted):  # no such account
            return []
        query = query.where(Statement.account_id == wanted)
    return [served_header(r) for r in db.session.execute(query)]


def content(statement_id: int) -> tuple[dict, bytes]:
    """GET /statements/{id}/file: the header and the bytes exactly as uploaded."""
    header = served_header(header_row(statement_id))
    data = db.session.execute(
        select(Statement.content_bytes).where(Statement.id == statement_id)
    ).scalar_one()
    header["filename"] = f"statement-{statement_id}.{FILE_EXTENSIONS.get(header['format'], 'txt')}"
    return header, bytes(data)


def remove(statement_id: int) -> None:
    """DELETE /statements/{id}: the statement and its lines; what they posted stays."""
    header = header_row(statement_id, for_update=True)
    count = db.session.execute(
        select(func.count())
        .select_from(StatementLine)
        .where(StatementLine.statement_id == statement_id)
    ).scalar_one()
    gone = audit_object(served_header(header), int(header.size), int(count))
    db.session.execute(delete(StatementLine).where(StatementLine.statement_id == statement_id))
    db.session.execute(delete(Statement).where(Statement.id == statement_id))
    audit.record("statement.deleted", gone)


def waiting_count(decided: Sequence[status.Decision]) -> int:
    """How many of the lines still wait for a person (new or match)."""
    return sum(1 for line in decided if line.status in WAITING)


def reconcile(statement_id: int, created_by: int | None) -> dict:
    """POST /statements/{id}/reconcile: reconcile the account to the statement's closing
    balance (negated for a liability: a card statement's -500.00 is a debt of 500.00)."""
    header = header_row(statement_id, for_update=True)
    waiting = waiting_count(
        status.decide(int(header.account_id), lines_of(statement_id), statement_id)
    )
    if waiting:
        raise ConflictError(
            f"{waiting} line{'s' if waiting != 1 else ''} of the statement still "
            f"wait{'' if waiting != 1 else 's'} to be posted, matched or ignored"
        )
    if header.closing_balance_cents is None or header.closing_balance_on is None:
        raise ConflictError(
            "the statement has no closing balance with its date; reconcile the account "
            "from its register instead"
        )
    account = accounts.get_account(header.account_id)
    closing = int(header.closing_balance_cents) * reports.sign_for(account.kind)
    return reconciliation.reconcile(
        account.id, header.closing_balance_on.isoformat(), closing, created_by
    )
