"""Documents attached to transactions: receipts, invoices, vouchers (docs/ledger.md,
"Receipts").

The one place for every rule about them, called by HTTP (routes/documents.py), the
web app (through HTTP), the CLI (verify, the audit pack) and the corrections flow
(move_documents):

- The type is read from the bytes, never from what the client claims: PDF, JPEG,
  PNG, WebP and HEIC/HEIF (sniff). Anything else is 415; so is HTML or SVG dressed
  up as an image.
- At most max_bytes() bytes (MAX_DOCUMENT_BYTES): 413 naming the limit. Empty: 400.
- The filename keeps only its last path component, loses control and format
  characters and is cut to FILENAME_MAX characters keeping its extension
  (clean_filename); `document` when nothing is left.
- Uploads, moves and deletions are audit events carrying the document's sha256,
  size, filename and transaction_id (audit_object), so `verify` can recompute every
  document's hash against the trail (verify_documents.py).
- A document attached to a transaction dated on or before the lock date can be
  neither moved nor deleted (409 naming the date); a new one may still be attached:
  evidence can arrive after the books are closed.
- Deleting a transaction detaches its documents (the foreign key is ON DELETE SET
  NULL); the replay in verify_documents.py applies the same rule.

Memory: an upload is hashed from its spooled temporary file a chunk at a time, then
written into its row a chunk at a time (_write_content), so it is never whole in the
process's memory; documents are always read one at a time.
"""

from __future__ import annotations

import hashlib
import sqlite3
import typing
import unicodedata
from collections.abc import Iterator
from pathlib import PurePath
from typing import IO, BinaryIO

from flask import current_app, has_app_context
from sqlalchemy import bindparam, delete, func, insert, select, text, update

from ...extensions import db
from ...models import Document, Transaction, User
from ...models.documents import FILENAME_MAX
from ...store import dialect
from .. import clock
from ..errors import BadRequestError, NotFoundError, PayloadTooLargeError, UnsupportedMediaTypeError
from . import audit, cursors, lock, validate

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
CHUNK = 1024 * 1024
ACCEPTED = ("application/pdf", "image/jpeg", "image/png", "image/webp", "image/heic")
# The extension a stored filename ends in, by the type read from the bytes; the others
# that count as right for it (any letter case).
EXTENSIONS = {
    "application/pdf": ("pdf",),
    "image/jpeg": ("jpg", "jpeg"),
    "image/png": ("png",),
    "image/webp": ("webp",),
    "image/heic": ("heic",),
}
HEIC_BRANDS = frozenset({b"heic", b"heix", b"heim", b"heis", b"hevc", b"mif1", b"msf1"})
FALLBACK_NAME = "document"
# Character categories removed from filenames: control, format (bidi overrides,
# zero-width joiners...), surrogates, line and paragraph separators.
_STRIPPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def max_bytes() -> int:
    if has_app_context():
        return int(current_app.config.get("MAX_DOCUMENT_BYTES") or DEFAULT_MAX_BYTES)
    return DEFAULT_MAX_BYTES


def too_large(limit: int | None = None) -> PayloadTooLargeError:
    limit = max_bytes() if limit is None else limit
    return PayloadTooLargeError(
        f"the document is larger than the limit of {limit} bytes "
        f"({limit / 1048576:.4g} MiB, MAX_DOCUMENT_BYTES); nothing was stored"
    )


def unsupported() -> UnsupportedMediaTypeError:
    return UnsupportedMediaTypeError(
        "this type of file is not accepted: send a PDF, JPEG, PNG, WebP or HEIC "
        "document (" + ", ".join(ACCEPTED) + "), whatever the file claims to be"
    )


# --- the rules on bytes and names --------------------------------------------------


def sniff(head: bytes) -> str | None:
    """The document's type from its first bytes, or None when it is not accepted."""
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    # HEIC/HEIF: an ISO BMFF file opens with its `ftyp` box; the major brand follows.
    if head[4:8] == b"ftyp" and head[8:12] in HEIC_BRANDS:
        return "image/heic"
    return None


def clean_filename(raw: str | None) -> str:
    """The name as stored: last path component, no control or format characters, at
    most FILENAME_MAX characters keeping the extension; `document` if nothing is left."""
    if not raw:
        return FALLBACK_NAME
    kept = "".join(c for c in raw if unicodedata.category(c) not in _STRIPPED_CATEGORIES)
    name = kept.replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not name.strip("."):  # "", ".", "..": a path, not a name
        return FALLBACK_NAME
    if len(name) > FILENAME_MAX:
        ext = PurePath(name).suffix
        stem = name[: len(name) - len(ext)]
        if 0 < len(ext) < FILENAME_MAX:
            name = stem[: FILENAME_MAX - len(ext)].rstrip() + ext
        else:
            name = name[:FILENAME_MAX]
    return name or FALLBACK_NAME


def with_extension(name: str, kind: str) -> str:
    """The cleaned name ending in the extension of the type read from the bytes: a
    different or missing one (the text after the last dot, when that dot is not the
    first character) is replaced or added, the stem cut so the whole fits FILENAME_MAX."""
    right = EXTENSIONS[kind]
    dot = name.rfind(".")
    stem = name[:dot] if dot > 0 else name
    if dot > 0 and name[dot + 1 :].lower() in right:
        return name
    ending = "." + right[0]
    return stem[: FILENAME_MAX - len(ending)].rstrip() + ending


def _measure(stream: IO[bytes], limit: int) -> tuple[int, str, str]:
    """(size, sha256 hex, content type) of a seekable stream, read CHUNK at a time;
    refuses (413, 400, 415) before anything is stored."""
    stream.seek(0)
    hasher = hashlib.sha256()
    size = 0
    head = b""
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            break
        if len(head) < 16:
            head += chunk[:16]
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        hasher.update(chunk)
    if size == 0:
        raise BadRequestError("the 'file' part is empty: send the document's bytes")
    kind = sniff(head)
    if kind is None:
        raise unsupported()
    return size, hasher.hexdigest(), kind


# --- reading ----------------------------------------------------------------------

_COLUMNS = (
    Document.id,
    Document.transaction_id,
    Document.filename,
    Document.content_type,
    Document.size,
    Document.sha256,
    Document.uploaded_at,
    User.email,
)


def _select():
    return select(*_COLUMNS).outerjoin(User, User.id == Document.uploaded_by)


def served(row) -> dict:
    """A document as the API serves it (docs/openapi.yaml, Document)."""
    return {
        "id": int(row.id),
        "transaction_id": None if row.transaction_id is None else int(row.transaction_id),
        "filename": row.filename,
        "content_type": row.content_type,
        "size": int(row.size),
        "sha256": row.sha256,
        "uploaded_at": clock.iso(row.uploaded_at),
        "uploaded_by_email": row.email,
    }


def audit_object(doc: dict, **extra) -> dict:
    """The object of a document.* event: what verify needs to check the document."""
    keys = ("id", "transaction_id", "filename", "content_type", "size", "sha256")
    return {"document": {k: doc[k] for k in keys}, **extra}


def _in_range(value: int) -> bool:
    return validate.INT64_MIN <= value <= validate.INT64_MAX


def _transaction_day(tx_id: int, *, share: bool = False):
    """The transaction's date, or None when there is no such transaction."""
    if not _in_range(tx_id):
        return None
    query = select(Transaction.occurred_on).where(Transaction.id == tx_id)
    if share and dialect.is_postgresql():
        query = query.with_for_update(read=True, key_share=True)
    return db.session.execute(query).scalar()


def _require_transaction(tx_id: int) -> None:
    if _transaction_day(tx_id) is None:
        raise NotFoundError("no such transaction")


def _row(doc_id: int, *, for_update: bool = False):
    if not _in_range(doc_id):
        raise NotFoundError("no such document")
    query = _select().where(Document.id == doc_id)
    if for_update and dialect.is_postgresql():
        query = query.with_for_update(of=Document)
    row = db.session.execute(query).first()
    if row is None:
        raise NotFoundError("no such document")
    return row


def get(doc_id: int) -> dict:
    """One document's description (404 when unknown)."""
    return served(_row(doc_id))


_SLICE_POSTGRESQL = text(
    "SELECT substring(content_bytes FROM :start FOR :count) FROM documents WHERE id = :id"
)


def iter_content(doc_id: int, chunk: int = CHUNK) -> Iterator[bytes]:
    """A stored document's bytes, CHUNK at a time (never whole in memory): downloads,
    the audit pack and verify read them so. SQLite: incremental blob I/O; PostgreSQL:
    substring() of the bytea, one slice per statement."""
    connection = db.session.connection()
    if dialect.is_sqlite(connection):
        raw = typing.cast(sqlite3.Connection, connection.connection.driver_connection)
        with raw.blobopen("documents", "content_bytes", doc_id, readonly=True) as blob:
            while data := blob.read(chunk):
                yield data
        return
    start = 1
    while True:
        piece = connection.execute(
            _SLICE_POSTGRESQL, {"start": start, "count": chunk, "id": doc_id}
        ).scalar()
        if not piece:
            return
        yield bytes(piece)
        start += len(piece)


def content(doc_id: int) -> tuple[dict, Iterator[bytes]]:
    """GET /documents/{id}: the description and its bytes exactly as stored, as chunks."""
    doc = get(doc_id)
    return doc, iter_content(doc_id)


def for_transaction(tx_id: int) -> list[dict]:
    """GET /transactions/{id}/documents: its documents, oldest first (404 when unknown)."""
    _require_transaction(tx_id)
    rows = db.session.execute(
        _select().where(Document.transaction_id == tx_id).order_by(Document.id)
    ).all()
    return [served(r) for r in rows]


# Built once: a page's document counts in one indexed statement. PostgreSQL gets the
# ids as one array literal (psycopg's per-element dumping and an expanding IN cost
# more than the query, as in listing._entries_of).
_COUNTS = (
    select(Document.transaction_id, func.count())
    .where(Document.transaction_id.in_(bindparam("ids", expanding=True)))
    .group_by(Document.transaction_id)
)
_COUNTS_POSTGRESQL = text(
    "SELECT transaction_id, count(*) FROM documents"
    " WHERE transaction_id = ANY (CAST(:ids AS bigint[])) GROUP BY transaction_id"
)


def counts(connection, tx_ids: list[int]) -> dict[int, int]:
    """How many documents each of these transactions has (absent: none): the paged
    listing's and the register's document_count."""
    if not tx_ids:
        return {}
    wanted = sorted(set(tx_ids))
    if dialect.is_postgresql(connection):
        literal = "{" + ",".join(str(int(i)) for i in wanted) + "}"
        rows = connection.execute(_COUNTS_POSTGRESQL, {"ids": literal}).all()
    else:
        rows = connection.execute(_COUNTS, {"ids": wanted}).all()
    return {int(tx): int(n) for tx, n in rows if tx is not None}


def parse_attached(value) -> bool | None:
    """None (every document) when absent; `true` or `false`; anything else, even an
    empty `?attached=`, is 400 naming it."""
    if value is None:
        return None
    if value in ("true", "false"):
        return value == "true"
    raise BadRequestError("'attached' must be true or false")


def page(*, attached=None, limit=None, cursor=None) -> dict:
    """GET /documents: {items, next_cursor}, newest first, paged as GET /audit is."""
    wanted = parse_attached(attached)
    size = validate.page_limit(limit, default=validate.PAGE_DEFAULT)
    filters = f"documents|{wanted}"
    query = _select().order_by(Document.id.desc())
    after = validate.cursor_text(cursor)
    if after is not None:
        query = query.where(Document.id < cursors.decode_seq(after, filters))
    if wanted is True:
        query = query.where(Document.transaction_id.is_not(None))
    elif wanted is False:
        query = query.where(Document.transaction_id.is_(None))
    rows = db.session.execute(query.limit(size + 1)).all()
    items = [served(r) for r in rows[:size]]
    more = len(rows) > size
    return {
        "items": items,
        "next_cursor": cursors.encode_seq(items[-1]["id"], filters) if more else None,
    }


# --- writing ----------------------------------------------------------------------


def upload(
    tx_id: int,
    stream: BinaryIO | IO[bytes] | None,
    filename: str | None,
    uploaded_by: int | None,
    *,
    limit: int | None = None,
) -> dict:
    """Store one document on a transaction; one document.uploaded event. Every check
    comes before the INSERT, so a refusal stores nothing."""
    # Read FOR KEY SHARE (PostgreSQL): a concurrent delete of the transaction waits for
    # this upload, which then detaches it, rather than failing its foreign key.
    if _transaction_day(tx_id, share=True) is None:
        raise NotFoundError("no such transaction")
    if stream is None:
        raise BadRequestError("send the document as a multipart/form-data part named 'file'")
    size, sha256, kind = _measure(stream, max_bytes() if limit is None else limit)
    connection = db.session.connection()
    sqlite = dialect.is_sqlite(connection)
    values = {
        "transaction_id": tx_id,
        "filename": with_extension(clean_filename(filename), kind),
        "content_type": kind,
        "size": size,
        "sha256": sha256,
        "uploaded_at": clock.now().replace(microsecond=0),
        "uploaded_by": uploaded_by,
    }
    # The bytes follow a chunk at a time (_write_content): never whole in memory.
    statement = _INSERT_SQLITE if sqlite else _INSERT_POSTGRESQL
    doc_id = connection.execute(statement, {**values, "reserved": size}).scalar_one()
    if _write_content(connection, doc_id, stream) != sha256:
        raise BadRequestError("the document changed while it was being stored; send it again")
    doc = get(doc_id)
    audit.record("document.uploaded", audit_object(doc))
    return doc


_INSERT_SQLITE = (
    insert(Document)
    .values(content_bytes=func.zeroblob(bindparam("reserved")))
    .returning(Document.id)
)
_INSERT_POSTGRESQL = insert(Document).values(content_bytes=b"").returning(Document.id)
_APPEND_POSTGRESQL = text(
    "UPDATE documents SET content_bytes = content_bytes || :chunk WHERE id = :id"
)


def _write_content(connection, doc_id: int, stream: IO[bytes]) -> str:
    """Write the stream into the new row's content, CHUNK at a time; the SHA-256 of
    what was written. SQLite: into the zeroblob the INSERT reserved, through its
    incremental blob I/O; PostgreSQL: appended to the bytea, one statement a chunk
    (escaping a whole 10 MiB parameter would hold it twice more in memory)."""
    stream.seek(0)
    hasher = hashlib.sha256()
    if dialect.is_sqlite(connection):
        raw = connection.connection.driver_connection
        with raw.blobopen("documents", "content_bytes", doc_id) as blob:
            while chunk := stream.read(CHUNK):
                hasher.update(chunk)
                blob.write(chunk)
        return hasher.hexdigest()
    while chunk := stream.read(CHUNK):
        hasher.update(chunk)
        connection.execute(_APPEND_POSTGRESQL, {"chunk": chunk, "id": doc_id})
    return hasher.hexdigest()


def _refuse_if_locked(doc: dict) -> None:
    """A document of a closed period stays where it is (409 naming the lock date)."""
    if doc["transaction_id"] is None:
        return
    day = _transaction_day(doc["transaction_id"], share=True)
    if day is not None:
        lock.refuse_if_locked(day)


def _target(value) -> int:
    if value is None:
        raise BadRequestError(
            "transaction_id is required: the id of the transaction to attach it to"
        )
    tx_id = validate.integer("transaction_id", value)
    if _transaction_day(tx_id, share=True) is None:
        raise BadRequestError(f"unknown transaction_id {tx_id}")
    return tx_id


def _move(doc: dict, to_tx: int) -> dict:
    if doc["transaction_id"] == to_tx:
        return doc
    _refuse_if_locked(doc)
    db.session.execute(
        update(Document).where(Document.id == doc["id"]).values(transaction_id=to_tx)
    )
    moved = {**doc, "transaction_id": to_tx}
    audit.record(
        "document.moved",
        audit_object(moved, previous_transaction_id=doc["transaction_id"]),
    )
    return moved


def move(doc_id: int, body: dict) -> dict:
    """PUT /documents/{id} {transaction_id}: attach it there; one document.moved event."""
    doc = served(_row(doc_id, for_update=True))
    return _move(doc, _target(body.get("transaction_id")))


def remove(doc_id: int) -> None:
    """DELETE /documents/{id}: one document.deleted event carrying what was removed."""
    doc = served(_row(doc_id, for_update=True))
    _refuse_if_locked(doc)
    db.session.execute(delete(Document).where(Document.id == doc_id))
    audit.record("document.deleted", audit_object(doc))


def move_documents(from_transaction_id: int, to_transaction_id: int) -> list[dict]:
    """Move every document of one transaction onto another (a correction: the
    replacement takes the original's evidence); one document.moved event each."""
    if _transaction_day(to_transaction_id, share=True) is None:
        raise BadRequestError(f"unknown transaction_id {to_transaction_id}")
    if not _in_range(from_transaction_id):
        return []
    query = _select().where(Document.transaction_id == from_transaction_id).order_by(Document.id)
    if dialect.is_postgresql():
        query = query.with_for_update(of=Document)
    return [_move(served(r), to_transaction_id) for r in db.session.execute(query).all()]
