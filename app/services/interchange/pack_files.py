"""The audit pack's report, reconciliation, trail and README files (audit_pack.py
writes them into the zip; docs/export-import-backup.md, "The audit pack").

    reports/income-statement.csv  the window's income statement: section, account,
                                  amount (+ budget, variance when an approved budget
                                  covers the window)
    reports/balance-sheet.csv     as of `to` (or the newest transaction's date)
    reconciliations.csv           every statement dated in the window
    outstanding.csv               for each of those reconciliations, the entries of the
                                  account dated on or before its statement date that
                                  were not cleared when it was made
    statements/<id>-<account>-<date>.<ext>
                                  each bank statement whose period_to (else its upload
                                  date) lies in the window, its bytes as uploaded
    audit-trail.jsonl             every event whose `at` date lies in the window, oldest
                                  first, exactly as GET /audit serves it
    README.txt                    what each file is and how to check them

Amounts are decimal strings of exact cents (plaintext.format_cents); free text never
starts a spreadsheet formula (plaintext.csv_text_cell). Each writer yields text in
pieces and reads the database a page at a time.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime, time, timedelta
from itertools import chain

from sqlalchemy import func, or_, select

from ...extensions import db
from ...models import (
    Account,
    AuditEvent,
    Entry,
    Reconciliation,
    Statement,
    Transaction,
    User,
)
from ...store import dialect
from .. import clock
from ..banking.statements import FILE_EXTENSIONS
from ..ledger import audit, budget_actuals, reports
from ..ledger.audit.hashing import GENESIS
from ..ledger.document_rules import clean_filename
from .plaintext import csv_text_cell, format_cents

PAGE = 500


def _rows(rows: Iterable[Iterable]) -> Iterator[str]:
    """CSV text (RFC 4180, CRLF rows), a page of rows at a time."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for n, row in enumerate(rows, 1):
        writer.writerow(row)
        if n % PAGE == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def _statement(start: date | None, end: date | None) -> dict:
    """The window's income statement, against the approved budget covering it if any."""
    whole = start is not None and end is not None
    return budget_actuals.requested_income_statement(
        start and start.isoformat(),
        end and end.isoformat(),
        budget_actuals.APPROVED if whole else None,
        plain_if_refused=True,  # no approved budget covers the window (or not whole months)
    )


def income_statement(start: date | None, end: date | None) -> Iterator[str]:
    report = _statement(start, end)
    planned = "budget" in report

    def line(section: str, account: str, cents: int, budget=None, variance=None) -> list:
        row = [section, csv_text_cell(account), format_cents(cents)]
        if planned:
            row += [format_cents(budget), format_cents(variance)]
        return row

    def total(section: str, key: str) -> list:
        if not planned:
            return line(section, "", report[f"{key}_cents"])
        actual, budget = report[f"{key}_cents"], report[f"{key}_budget_cents"]
        better = budget - actual if key == "total_expenses" else actual - budget
        return line(section, "", actual, budget, better)

    def lines(section: str, key: str) -> list:
        return [
            line(section, item["account"], item["cents"], item.get("budget_cents"),
                 item.get("variance_cents"))
            for item in report[key]
        ]  # fmt: skip

    head = ["section", "account", "amount"] + (["budget", "variance"] if planned else [])
    return _rows(
        [head]
        + lines("income", "income")
        + [total("total income", "total_income")]
        + lines("expenses", "expenses")
        + [total("total expenses", "total_expenses"), total("net", "net")]
    )


def balance_sheet_day(end: date | None) -> date:
    """`to`, or the newest transaction's date when it is left out (today if none)."""
    if end is not None:
        return end
    newest = db.session.execute(select(func.max(Transaction.occurred_on))).scalar()
    return newest or clock.today()


def balance_sheet(end: date | None) -> Iterator[str]:
    report = reports.balance_sheet(balance_sheet_day(end))

    def lines(section: str, key: str) -> list:
        return [
            [section, csv_text_cell(item["account"]), format_cents(item["cents"])]
            for item in report[key]
        ]

    return _rows(
        [["section", "account", "amount"]]
        + lines("assets", "assets")
        + [["total assets", "", format_cents(report["total_assets_cents"])]]
        + lines("liabilities", "liabilities")
        + [["total liabilities", "", format_cents(report["total_liabilities_cents"])]]
        + lines("equity", "equity")
        + [["retained", "", format_cents(report["retained_cents"])]]
        + [["total equity", "", format_cents(report["total_equity_cents"])]]
    )


def reconciliations(start: date | None, end: date | None) -> Iterator[str]:
    """Every reconciliation whose statement date lies in the window, by date then id."""
    query = (
        select(
            Account.name,
            Reconciliation.statement_date,
            Reconciliation.closing_balance_cents,
            Reconciliation.created_at,
            User.email,
        )
        .join(Account, Account.id == Reconciliation.account_id)
        .outerjoin(User, User.id == Reconciliation.created_by)
        .order_by(Reconciliation.statement_date, Reconciliation.id)
    )
    if start is not None:
        query = query.where(Reconciliation.statement_date >= start)
    if end is not None:
        query = query.where(Reconciliation.statement_date <= end)
    rows = db.session.execute(query.execution_options(yield_per=PAGE))
    head = [("account", "statement_date", "closing_balance", "reconciled_at", "reconciled_by")]
    return _rows(
        chain(
            head,
            (
                (
                    csv_text_cell(r.name),
                    r.statement_date.isoformat(),
                    format_cents(r.closing_balance_cents),
                    clock.iso(r.created_at),
                    csv_text_cell(r.email or ""),
                )
                for r in rows
            ),
        )
    )


def _window_reconciliations(start: date | None, end: date | None):
    query = (
        select(
            Reconciliation.id,
            Reconciliation.account_id,
            Reconciliation.statement_date,
            Account.name,
            Account.kind,
        )
        .join(Account, Account.id == Reconciliation.account_id)
        .order_by(Reconciliation.statement_date, Reconciliation.id)
    )
    if start is not None:
        query = query.where(Reconciliation.statement_date >= start)
    if end is not None:
        query = query.where(Reconciliation.statement_date <= end)
    return db.session.execute(query).all()


def _reconciled_later(account_ids: set[int]) -> dict[int, set[int]]:
    """reconciliation id -> the entries that reconciliations of its account made after
    it reconciled (entries.reconciled events, in seq order): those were not cleared
    when it was made. An event names its reconciliation; one written before events did
    is the account's next reconciliation by id."""
    events: dict[int, list[tuple[int | None, list[int]]]] = {}
    for (text,) in db.session.execute(
        select(AuditEvent.object)
        .where(AuditEvent.action == "entries.reconciled")
        .order_by(AuditEvent.seq)
        .execution_options(yield_per=PAGE)
    ):
        obj = json.loads(text)
        account_id = int(obj["account_id"])
        if account_id in account_ids:
            named = (obj.get("reconciliation") or {}).get("id")
            entry_ids = [int(e) for e in obj["entry_ids"]]
            events.setdefault(account_id, []).append((named, entry_ids))
    later: dict[int, set[int]] = {}
    for account_id, found in events.items():
        ids = db.session.execute(
            select(Reconciliation.id)
            .where(Reconciliation.account_id == account_id)
            .order_by(Reconciliation.id)
        ).scalars()
        unnamed = iter(ids)
        after: set[int] = set()
        order = []
        for named, entry_ids in found:
            order.append((named if named is not None else next(unnamed, None), entry_ids))
        for rec_id, entry_ids in reversed(order):
            if rec_id is not None:
                later[int(rec_id)] = set(after)
            after.update(entry_ids)
    return later


_OUTSTANDING = select(
    Entry.id, Transaction.occurred_on, Transaction.description, Entry.amount_cents
).join(Transaction, Transaction.id == Entry.transaction_id)


def outstanding(start: date | None, end: date | None) -> Iterator[str]:
    """outstanding.csv: for each reconciliation of the window (as reconciliations.csv,
    in its order), the entries of the account dated on or before the statement date
    that were not cleared when it was made: those not reconciled yet, and those a later
    reconciliation of the account reconciled. Amounts signed as the reports show the
    account (a liability's charge positive), as the closing balance is."""
    recs = _window_reconciliations(start, end)
    later = _reconciled_later({int(r.account_id) for r in recs}) if recs else {}

    def rows() -> Iterator[tuple]:
        yield ("account", "statement_date", "date", "description", "amount")
        for rec in recs:
            mine = _OUTSTANDING.where(
                Entry.account_id == rec.account_id,
                Transaction.occurred_on <= rec.statement_date,
            )
            found = list(db.session.execute(mine.where(Entry.reconciled.is_(False))))
            for chunk in dialect.in_chunks(sorted(later.get(int(rec.id), ()))):
                found += db.session.execute(mine.where(Entry.id.in_(chunk))).all()
            sign = reports.sign_for(rec.kind)
            for row in sorted(found, key=lambda r: (r.occurred_on, r.id)):
                yield (
                    csv_text_cell(rec.name),
                    rec.statement_date.isoformat(),
                    row.occurred_on.isoformat(),
                    csv_text_cell(row.description),
                    format_cents(sign * row.amount_cents),
                )

    return _rows(rows())


def statement_day(period_to: date | None, created_at: datetime) -> date:
    """The day a statement counts for in a window: its period_to, else its upload
    date (UTC)."""
    return period_to if period_to is not None else created_at.astimezone(UTC).date()


def statements(start: date | None, end: date | None) -> Iterator[tuple[int, str]]:
    """(statement id, its path in the pack) of every statement whose period_to, else
    its upload date, lies in the window, by id: `statements/<id>-<account>-<day>.<ext>`,
    the account's name cleaned as a document's filename is."""
    query = (
        select(
            Statement.id, Statement.format, Statement.period_to, Statement.created_at, Account.name
        )
        .join(Account, Account.id == Statement.account_id)
        .order_by(Statement.id)
    )
    if start is not None:
        query = query.where(or_(Statement.period_to.is_(None), Statement.period_to >= start))
    if end is not None:
        query = query.where(or_(Statement.period_to.is_(None), Statement.period_to <= end))
    for row in db.session.execute(query).all():
        day = statement_day(row.period_to, row.created_at)
        if (start is not None and day < start) or (end is not None and day > end):
            continue
        ext = FILE_EXTENSIONS.get(row.format, "txt")  # as GET /statements/{id}/file
        yield int(row.id), f"statements/{int(row.id)}-{clean_filename(row.name)}-{day}.{ext}"


def statement_bytes(statement_id: int) -> bytes:
    """A statement's file as uploaded (at most MAX_STATEMENT_BYTES: one at a time)."""
    data = db.session.execute(
        select(Statement.content_bytes).where(Statement.id == statement_id)
    ).scalar_one()
    return bytes(data)


def _at_bounds(start: date | None, end: date | None) -> list:
    """GET /audit's from/to: on the event's (UTC) `at` date."""
    conditions = []
    if start is not None:
        conditions.append(AuditEvent.at >= datetime.combine(start, time(0), tzinfo=UTC))
    if end is not None:
        after = datetime.combine(end, time(0), tzinfo=UTC) + timedelta(days=1)
        conditions.append(AuditEvent.at < after)
    return conditions


def trail(start: date | None, end: date | None) -> Iterator[str]:
    """audit-trail.jsonl: the window's events oldest first, one JSON object a line."""
    after = 0
    while True:
        rows = db.session.execute(
            select(*audit.EVENT_COLUMNS)
            .where(AuditEvent.seq > after, *_at_bounds(start, end))
            .order_by(AuditEvent.seq)
            .limit(PAGE)
        ).all()
        if not rows:
            return
        yield "".join(
            json.dumps(audit.served(row), ensure_ascii=False, separators=(",", ":")) + "\n"
            for row in rows
        )
        after = int(rows[-1].seq)


def _trail_start(start: date | None, end: date | None) -> tuple[int | None, str]:
    """The first event of the pack's trail (None when it holds none) and its
    predecessor's hash (64 zeros before seq 1): where a re-walk starts."""
    first = db.session.execute(
        select(func.min(AuditEvent.seq)).where(*_at_bounds(start, end))
    ).scalar()
    if first is None or first == 1:
        return first, GENESIS
    before = db.session.execute(select(AuditEvent.hash).where(AuditEvent.seq == first - 1))
    return first, before.scalar() or GENESIS


def readme(start: date | None, end: date | None, head: dict) -> str:
    first, predecessor = _trail_start(start, end)
    window = f"{start or 'the first day'} to {end or 'the last day'}"
    if first is None:
        walk = "This pack's trail holds no event (nothing changed in the window)."
    else:
        walk = (
            f"Its first event is seq {first}; the hash before it (event seq {first - 1}, or\n"
            f"  64 zeros before seq 1) is\n    {predecessor}"
        )
    return README.format(
        window=window, walk=walk, head_seq=head["seq"], head_hash=head["hash"],
        as_of=balance_sheet_day(end),
    )  # fmt: skip


README = """\
The audit pack of ledger-service, for {window}.

FILES
  transactions.csv      every transaction of the window, one row per entry
                        (transaction_id, date, description, author, account, kind, cents).
  books.journal         the same transactions as an hledger/ledger journal. With a
                        start date it begins with one "Opening balances" transaction
                        dated that day: every asset, liability and equity account's
                        balance the day before, and the retained earnings up to then
                        on equity:Retained earnings.
  documents/<transaction id>/<document id>-<filename>
                        every receipt or invoice attached to a transaction of the
                        window, its bytes exactly as stored.
  reports/income-statement.csv
                        the window's income statement (section, account, amount; with
                        budget and variance when an approved budget covers the window).
  reports/balance-sheet.csv
                        the balance sheet as of {as_of}.
  reconciliations.csv   every bank statement reconciled with a statement date in the
                        window: account, statement_date, closing_balance,
                        reconciled_at (UTC), reconciled_by.
  outstanding.csv       for each of those reconciliations, the entries of its account
                        dated on or before the statement date that were not cleared
                        when it was made: account, statement_date, date,
                        description, amount.
  statements/<id>-<account>-<date>.<ofx|xml|sta>
                        every bank statement whose period end (else its upload date)
                        lies in the window, its file exactly as uploaded.
  audit-trail.jsonl     every change to the books made in the window (by the UTC date
                        of its `at`), oldest first, one JSON object per line, exactly
                        as GET /audit serves it.
  audit-head.json       the trail's newest event when the pack was made: seq {head_seq},
                        hash {head_hash}.
  README.txt            this file.
  manifest.json         the size and SHA-256 of every file above.
In the reports, reconciliations.csv and outstanding.csv amounts are decimal strings
of exact cents (25.00), and liabilities, equity and income are shown positive, as the
service's reports show them;
transactions.csv keeps the csv export's signed integer cents.

CHECKING THE MANIFEST
  Every file is listed in manifest.json with its size and lowercase hex SHA-256;
  `sha256sum <file>` must print the same digest. Any difference means the file is
  not the one the service wrote.

CHECKING THE TRAIL
  Each event's hash is the lowercase hex SHA-256 of the UTF-8 bytes of the previous
  event's hash (64 hex characters) followed by the event's canonical JSON without
  "hash" (keys sorted, "," and ":" with no spaces, non-ASCII characters as themselves).
  {walk}
  In Python, for each line in order:
      event = json.loads(line); stored = event.pop("hash")
      text = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
      assert hashlib.sha256((previous + text).encode()).hexdigest() == stored
      previous = stored
  The seq numbers run without a gap. When the window reaches today, the last event's
  hash equals audit-head.json's; later, GET /audit/head on the server shows that the
  history was only appended to since.

CHECKING THE BOOKS WITH HLEDGER
  hledger -f books.journal bal
  gives every asset and liability account its balance at the window's end (the
  balance sheet's figure, in hledger's signs: liabilities negative) and every income
  and expense account the window's figure (income negative).
"""
