"""The audit pack: one zip for an auditor, for a period (docs/export-import-backup.md,
"The audit pack"). GET /export?format=audit-pack and `ledger-service export --format
audit-pack -o FILE`.

The zip holds exactly, in this order:

    transactions.csv                      the csv export of the window
    books.journal                         the hledger export of the window
    documents/<tx id>/<doc id>-<filename> every document attached to a transaction
                                          of the window (its bytes as stored; the
                                          filename cleaned again, whatever is stored)
    statements/<id>-<account>-<day>.<ext> every bank statement whose period_to (else
                                          its upload date) lies in the window, as
                                          uploaded
    reports/income-statement.csv          the window's income statement
    reports/balance-sheet.csv             as of `to` (or the newest transaction's date)
    reconciliations.csv                   the statements dated in the window
    outstanding.csv                       what was not cleared at each of them
    audit-trail.jsonl                     the window's events, as GET /audit serves them
    audit-head.json                       {seq, hash}: the trail's head, as GET /audit/head
    README.txt                            what each file is and how to check them
    manifest.json                         {from, to, generated_at, files: [{path, size,
                                          sha256}]} of every file above

(the reports, reconciliations, outstanding entries, statements, trail and README:
pack_files.py)

Written as a stream in bounded memory: zipfile writes into a sink that the
generator empties after every write (the zip's data descriptors make a seekable
output unnecessary), the exports are written a chunk at a time, and documents are
read from the database a slice at a time. What is held at once is a megabyte of one
document (ledger.documents.iter_content), one statement file (at most
MAX_STATEMENT_BYTES), one export chunk and the manifest's lines.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Iterator
from datetime import date

from sqlalchemy import select

from ... import store
from ...extensions import db
from ...models import Document, Transaction
from .. import clock
from ..ledger import audit, documents
from . import export, pack_files

CONTENT_TYPE = "application/zip"
FORMAT = "audit-pack"
PAGE = 200
# Document bytes go into the zip (and out to the client) in pieces this size: the
# server buffers what the client has not read yet, a few pieces at a time.
PIECE = 64 * 1024


def filename() -> str:
    return f"audit-pack-{clock.today().isoformat()}.zip"


class _Sink(io.RawIOBase):
    """A write-only stream whose bytes the generator takes away after each write."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._written = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        chunk = bytes(data)
        self._chunks.append(chunk)
        self._written += len(chunk)
        return len(chunk)

    def tell(self) -> int:
        return self._written

    def flush(self) -> None:
        return None

    def take(self) -> bytes:
        out = b"".join(self._chunks)
        self._chunks.clear()
        return out


def _documents(start: date | None, end: date | None) -> Iterator[tuple[int, int, str]]:
    """(transaction_id, document_id, filename) of the window's documents, in order,
    read PAGE at a time (without their bytes)."""
    after = (0, 0)
    while True:
        query = (
            select(Document.transaction_id, Document.id, Document.filename)
            .join(Transaction, Transaction.id == Document.transaction_id)
            .order_by(Document.transaction_id, Document.id)
            .limit(PAGE)
        )
        if start is not None:
            query = query.where(Transaction.occurred_on >= start)
        if end is not None:
            query = query.where(Transaction.occurred_on <= end)
        query = query.where(
            (Document.transaction_id > after[0])
            | ((Document.transaction_id == after[0]) & (Document.id > after[1]))
        )
        rows = db.session.execute(query).all()
        if not rows:
            return
        for row in rows:
            yield int(row.transaction_id), int(row.id), row.filename
        after = (int(rows[-1].transaction_id), int(rows[-1].id))


def generate(start: date | None, end: date | None) -> Iterator[bytes]:
    """The audit pack as a stream of bytes (see the module docstring)."""
    audit.seal()  # PostgreSQL: the trail's waiting events into the chain first
    store.begin_snapshot(read_only=True)
    sink = _Sink()
    files: list[dict] = []
    generated_at = clock.iso(clock.now())
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED) as pack:

        def add_stream(
            path: str, chunks: Iterator[bytes], compress: int = zipfile.ZIP_DEFLATED
        ) -> Iterator[bytes]:
            hasher = hashlib.sha256()
            size = 0
            info = zipfile.ZipInfo(path, date_time=_zip_time())
            info.compress_type = compress
            with pack.open(info, "w", force_zip64=True) as member:
                for chunk in chunks:
                    hasher.update(chunk)
                    size += len(chunk)
                    member.write(chunk)
                    yield sink.take()
            files.append({"path": path, "size": size, "sha256": hasher.hexdigest()})
            yield sink.take()

        def encoded(chunks: Iterator[str]) -> Iterator[bytes]:
            return (chunk.encode("utf-8") for chunk in chunks)

        yield from add_stream("transactions.csv", encoded(export.generate("csv", start, end)))
        yield from add_stream("books.journal", encoded(export.generate("hledger", start, end)))
        for tx_id, doc_id, name in _documents(start, end):
            # Cleaned again: a stored name is not trusted to be one component.
            path = f"documents/{int(tx_id)}/{int(doc_id)}-{documents.clean_filename(name)}"
            # Stored as they are: PDFs and photos are compressed already.
            chunks = documents.iter_content(doc_id, PIECE)
            yield from add_stream(path, chunks, zipfile.ZIP_STORED)
        for statement_id, path in list(pack_files.statements(start, end)):
            data = pack_files.statement_bytes(statement_id)
            yield from add_stream(path, iter((data,)))
        for path, pieces in (
            ("reports/income-statement.csv", pack_files.income_statement(start, end)),
            ("reports/balance-sheet.csv", pack_files.balance_sheet(end)),
            ("reconciliations.csv", pack_files.reconciliations(start, end)),
            ("outstanding.csv", pack_files.outstanding(start, end)),
            ("audit-trail.jsonl", pack_files.trail(start, end)),
        ):
            yield from add_stream(path, encoded(pieces))
        trail_head = audit.head()
        head = json.dumps(trail_head, separators=(",", ":")).encode() + b"\n"
        yield from add_stream("audit-head.json", iter((head,)))
        readme = pack_files.readme(start, end, trail_head)
        yield from add_stream("README.txt", encoded(iter((readme,))))
        manifest = {
            "from": start.isoformat() if start else None,
            "to": end.isoformat() if end else None,
            "generated_at": generated_at,
            "files": files,
        }
        text = json.dumps(manifest, ensure_ascii=False, indent=2).encode("utf-8") + b"\n"
        pack.writestr(_info("manifest.json"), text)
        yield sink.take()
    yield sink.take()  # the central directory


def _zip_time() -> tuple[int, int, int, int, int, int]:
    now = clock.now()
    return (max(now.year, 1980), now.month, now.day, now.hour, now.minute, now.second)


def _info(path: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(path, date_time=_zip_time())
    info.compress_type = zipfile.ZIP_DEFLATED
    return info
