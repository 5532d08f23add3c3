"""Export the books as hledger/ledger journal, Beancount file or CSV, streamed.

Every format writes one transaction per block in date order (then id), amounts as
exact decimals of integer cents, and keeps the transaction id and author so a
reader (and our importer) can tell transactions apart. The account-name rules
live in services.plaintext. Generation reads in pages from one read-only snapshot
(store.begin_snapshot: REPEATABLE READ on PostgreSQL, one read transaction on
SQLite), so a large ledger is never held in memory and the file is consistent.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import date, timedelta

from sqlalchemy import func, select, tuple_

from ... import store
from ...extensions import db
from ...models import Account, Entry, Transaction, User
from .. import clock
from ..errors import BadRequestError
from ..ledger import reports, settings
from . import plaintext

FORMATS = ("hledger", "beancount", "csv")
EXTENSIONS = {"hledger": "journal", "beancount": "beancount", "csv": "csv"}
CSV_COLUMNS = ("transaction_id", "date", "description", "author", "account", "kind", "cents")
PAGE = 500
# A window's journal opens on this equity account with the retained earnings (income
# minus expenses) of everything before the window (docs/export-import-backup.md).
RETAINED = ("equity", "Retained earnings")


def check_format(fmt) -> str:
    if fmt not in FORMATS:
        # audit-pack is answered by services/interchange/audit_pack.py.
        raise BadRequestError("format must be one of: " + ", ".join((*FORMATS, "audit-pack")))
    return fmt


def content_type(fmt: str) -> str:
    return "text/csv; charset=utf-8" if fmt == "csv" else "text/plain; charset=utf-8"


def filename(fmt: str) -> str:
    return f"ledger-{clock.today().isoformat()}.{EXTENSIONS[fmt]}"


def _window(query, start: date | None, end: date | None):
    if start is not None:
        query = query.where(Transaction.occurred_on >= start)
    if end is not None:
        query = query.where(Transaction.occurred_on <= end)
    return query


def iter_transactions(start: date | None, end: date | None) -> Iterator[dict]:
    """Transactions oldest first, each with (kind, name, cents) entries, read in pages."""
    after = None
    while True:
        query = _window(
            select(Transaction.id, Transaction.occurred_on, Transaction.description, User.email)
            .outerjoin(User, User.id == Transaction.created_by)
            .order_by(Transaction.occurred_on, Transaction.id)
            .limit(PAGE),
            start,
            end,
        )
        if after is not None:
            query = query.where(tuple_(Transaction.occurred_on, Transaction.id) > after)
        headers = db.session.execute(query).all()
        if not headers:
            return
        ids = [h.id for h in headers]
        entries: dict[int, list] = {i: [] for i in ids}
        for row in db.session.execute(
            select(Entry.transaction_id, Account.kind, Account.name, Entry.amount_cents)
            .join(Account, Account.id == Entry.account_id)
            .where(Entry.transaction_id.in_(ids))
            .order_by(Entry.id)
        ):
            entries[row.transaction_id].append((row.kind, row.name, row.amount_cents))
        for h in headers:
            yield {
                "id": h.id,
                "date": h.occurred_on.isoformat(),
                "description": h.description,
                "author": h.email,
                "entries": entries[h.id],
            }
        after = (headers[-1].occurred_on, headers[-1].id)


def _accounts() -> list[tuple[str, str]]:
    return [
        (r.kind, r.name)
        for r in db.session.execute(select(Account.kind, Account.name).order_by(Account.id))
    ]


def _opening(start: date, declared: list[str], commodity: str) -> str:
    """The window's opening transaction, dated `start`: every asset, liability and
    equity account's raw balance at the end of the day before, and the retained
    earnings up to then (income and expenses) on RETAINED, so that hledger's `bal`
    over the window's journal gives assets and liabilities their balance at its end
    and income and expenses the window's figures."""
    retained = plaintext.hledger_account(*RETAINED)
    lines = [f"{start.isoformat()} Opening balances  ; balances at the end of the day before"]
    profit = 0
    for _, name, kind, raw in reports.account_sums(None, start - timedelta(days=1)):
        if kind in ("income", "expense"):
            profit += raw
            continue
        amount = f"{plaintext.format_cents(raw)} {commodity}"
        lines.append(f"    {plaintext.hledger_account(kind, name)}  {amount}")
    lines.append(f"    {retained}  {plaintext.format_cents(profit)} {commodity}")
    head = "" if retained in declared else f"account {retained}\n\n"
    return head + "\n".join(lines) + "\n\n"


def _hledger(start, end, commodity: str) -> Iterator[str]:
    yield (
        "; ledger-service export (hledger/ledger journal). Amounts are exact cents.\n"
        "; Transaction code (N) is the ledger-service id; %XX in names and descriptions\n"
        "; is an escaped character (see docs/export-import-backup.md).\n\n"
    )
    declared = [plaintext.hledger_account(k, n) for k, n in _accounts()]
    yield "".join(f"account {name}\n" for name in declared) + "\n"
    if start is not None:
        yield _opening(start, declared, commodity)
    for tx in iter_transactions(start, end):
        head = f"{tx['date']} ({tx['id']}) {plaintext.percent_encode_text(tx['description'])}"
        if tx["author"]:
            author = plaintext.percent_encode_text(tx["author"]).replace(",", "%2C")
            head += f"  ; author:{author}"
        lines = [head]
        for kind, name, cents in tx["entries"]:
            amount = f"{plaintext.format_cents(cents)} {commodity}"
            lines.append(f"    {plaintext.hledger_account(kind, name)}  {amount}")
        yield "\n".join(lines) + "\n\n"


def bean_string(text: str) -> str:
    escaped = (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\t", "\\t")
        .replace("\r", "\\r")
    )
    return f'"{escaped}"'


def _beancount(start, end, commodity: str) -> Iterator[str]:
    first = db.session.execute(_window(select(func.min(Transaction.occurred_on)), start, end))
    opened = first.scalar() or date(1970, 1, 1)
    yield (
        "; ledger-service export (Beancount). Amounts are exact cents.\n"
        "; Account components are escaped reversibly (see docs/export-import-backup.md).\n"
        f'option "operating_currency" "{commodity}"\n\n'
    )
    yield (
        "".join(
            f"{opened.isoformat()} open {plaintext.beancount_account(k, n)} {commodity}\n"
            for k, n in _accounts()
        )
        + "\n"
    )
    for tx in iter_transactions(start, end):
        lines = [f"{tx['date']} * {bean_string(tx['description'])}", f'  id: "{tx["id"]}"']
        if tx["author"]:
            lines.append(f"  author: {bean_string(tx['author'])}")
        for kind, name, cents in tx["entries"]:
            amount = f"{plaintext.format_cents(cents)} {commodity}"
            lines.append(f"  {plaintext.beancount_account(kind, name)}  {amount}")
        yield "\n".join(lines) + "\n\n"


def _csv(start, end, commodity: str) -> Iterator[str]:  # noqa: ARG001 (no commodity)
    # Free text (description, author, account name) never starts a spreadsheet
    # formula: plaintext.csv_text_cell; ids, dates, kinds and integer cents are as stored.
    text = plaintext.csv_text_cell
    buffer = io.StringIO()
    writer = csv.writer(buffer)  # RFC 4180: CRLF rows; fields holding CR or LF are quoted

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    writer.writerow(CSV_COLUMNS)
    # Accounts without an entry in the file still travel: one row with only account and kind.
    used = _window(
        select(Entry.account_id).join(Transaction, Transaction.id == Entry.transaction_id),
        start,
        end,
    )
    for row in db.session.execute(
        select(Account.kind, Account.name).where(Account.id.not_in(used)).order_by(Account.id)
    ):
        writer.writerow(("", "", "", "", text(row.name), row.kind, ""))
    yield flush()
    for tx in iter_transactions(start, end):
        for kind, name, cents in tx["entries"]:
            writer.writerow(
                (
                    tx["id"],
                    tx["date"],
                    text(tx["description"]),
                    text(tx["author"] or ""),
                    text(name),
                    kind,
                    cents,
                )
            )
        yield flush()


_WRITERS = {"hledger": _hledger, "beancount": _beancount, "csv": _csv}


def generate(fmt: str, start: date | None, end: date | None) -> Iterator[str]:
    """The export as a stream of text chunks (validate fmt with check_format first).
    Amounts carry the books' currency (USD while none is set: settings.commodity)."""
    store.begin_snapshot(read_only=True)
    return _WRITERS[check_format(fmt)](start, end, settings.commodity())
