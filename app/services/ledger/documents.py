"""Documents attached to transactions: receipts, invoices, vouchers (docs/ledger.md,
"Receipts").

The one place for every rule about them, called by HTTP (routes/documents.py), the
web app (through HTTP), the CLI (verify, the audit pack) and the corrections flow
(move_documents):

- The type is read from the bytes, never from what the client claims: PDF, JPEG,
  PNG, WebP and HEIC/HEIF (sniff). Anything else is 415; so is HTML or SVG dressed
  up as an image.
- At most max_bytes() bytes (MAX_DOCUMENT_BYTES): 413 naming the limit. Empty: 400.
- At most MAX_DOCUMENTS_PER_TRANSACTION documents on a transaction (409, an upload or a
  move past it) and MAX_DOCUMENT_STORE_BYTES of documents in all (507): checked and
  the document stored under the store's quota lock, so concurrent uploads cannot both
  pass the last place.
- The filename keeps only its last path component, loses control and format
  characters and is cut to FILENAME_MAX characters keeping its extension
  (clean_filename); `document` when nothing is left; then it ends in the extension
  of the type the bytes are (with_extension).
- Uploads, moves and deletions are audit events carrying the document's sha256,
  size, filename and transaction_id (audit_object), so `verify` can recompute every
  document's hash against the trail (verify_documents.py).
- A document attached to a transaction dated on or before the lock date can be
  neither moved nor deleted (409 naming the date); a new one may still be attached:
  evidence can arrive after the books are closed.
- Deleting a transaction detaches its documents (the foreign key is ON DELETE SET
  NULL); the replay in verify_documents.py applies the same rule.

Memory: an upload is hashed from its spooled temporary file a chunk at a time, then
written as chunk rows a chunk at a time (store/documents.py: each byte written once),
so it is never whole in the process's memory; documents are read a slice at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, BinaryIO

from sqlalchemy import delete, func, insert, select, update

from ...extensions import db
from ...models import Document, Transaction, User
from ...models.documents import CHUNK_BYTES
from ...store import documents as stored
from .. import clock
from ..errors import BadRequestError, ConflictError, InsufficientStorageError, NotFoundError
from . import audit, cursors, lock, validate
from .document_rules import (
    clean_filename,
    max_bytes,
    max_per_transaction,
    max_store_bytes,
    measure,
    with_extension,
)

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
    """The transaction's date, or None when there is no such transaction. share: read
    FOR KEY SHARE (PostgreSQL; SQLite has no row locks and renders none)."""
    if not _in_range(tx_id):
        return None
    query = select(Transaction.occurred_on).where(Transaction.id == tx_id)
    if share:
        query = query.with_for_update(read=True, key_share=True)
    return db.session.execute(query).scalar()


def _require_transaction(tx_id: int) -> None:
    if _transaction_day(tx_id) is None:
        raise NotFoundError("no such transaction")


def _row(doc_id: int, *, for_update: bool = False):
    return validate.row_by_id(
        _select(), Document, doc_id, "no such document", for_update=for_update
    )


def get(doc_id: int) -> dict:
    """One document's description (404 when unknown)."""
    return served(_row(doc_id))


# A stored document is read in slices this size (downloads, verify; the audit pack
# asks for its own): one chunk row. Smaller slices cost the serving process more, not
# less: a 10 MiB download in 256 KiB slices raised its peak by 12.7 to 15.9 MiB
# against 3.5 in 1 MiB ones on SQLite, in the serving path (read in-process, the
# slices raise it by nothing); docs/ledger.md, "Receipts".
SLICE = CHUNK_BYTES


def iter_content(doc_id: int, chunk: int = SLICE) -> Iterator[bytes]:
    """A stored document's bytes, at most `chunk` at a time (never whole in memory):
    downloads, the audit pack and verify read them so (store/documents.py)."""
    yield from stored.read(db.session.connection(), doc_id, chunk)  # the connection when read


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


# The same count as counts(), for one transaction, as a column of a read that lists
# transactions (the register's entries: _ENTRIES in register.py), so that read needs no
# statement of its own for it. {transaction_id}: the read's transaction id column.
COUNT_OF = "(SELECT count(*) FROM documents WHERE documents.transaction_id = {transaction_id})"


def counts(connection, tx_ids: list[int]) -> dict[int, int]:
    """How many documents each of these transactions has (absent: none): the paged
    listing's and the register's document_count (one indexed statement)."""
    return stored.counts(connection, tx_ids)


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
    _require_transaction(tx_id)
    if stream is None:
        raise BadRequestError("send the document as a multipart/form-data part named 'file'")
    size, sha256, kind = measure(stream, max_bytes() if limit is None else limit)
    connection = db.session.connection()
    stored.lock_quota(connection)
    # Read FOR KEY SHARE (PostgreSQL): a concurrent delete of the transaction waits for
    # this upload, which then detaches it, rather than failing its foreign key.
    if _transaction_day(tx_id, share=True) is None:
        raise NotFoundError("no such transaction")
    _refuse_past_the_count(tx_id, "nothing was stored")
    _refuse_past_the_store(size)
    values = {
        "transaction_id": tx_id,
        "filename": with_extension(clean_filename(filename), kind),
        "content_type": kind,
        "size": size,
        "sha256": sha256,
        "uploaded_at": clock.now().replace(microsecond=0),
        "uploaded_by": uploaded_by,
    }
    made = db.session.execute(insert(Document).values(values).returning(Document.id))
    doc_id = int(made.scalar_one())
    # The bytes follow a chunk at a time, each written once: never whole in memory.
    if stored.write(connection, doc_id, stream) != (size, sha256):
        raise BadRequestError("the document changed while it was being stored; send it again")
    doc = get(doc_id)
    audit.record("document.uploaded", audit_object(doc))
    return doc


def _refuse_past_the_count(tx_id: int, outcome: str) -> None:
    """409 when the transaction has its MAX_DOCUMENTS_PER_TRANSACTION already."""
    cap = max_per_transaction()
    count = db.session.execute(
        select(func.count()).select_from(Document).where(Document.transaction_id == tx_id)
    ).scalar_one()
    if count >= cap:
        raise ConflictError(
            f"transaction {tx_id} has {count} documents, the most one may have "
            f"(MAX_DOCUMENTS_PER_TRANSACTION is {cap}); {outcome}"
        )


def _refuse_past_the_store(size: int) -> None:
    """507 when the documents stored and this one would pass MAX_DOCUMENT_STORE_BYTES."""
    cap = max_store_bytes()
    used = db.session.execute(select(func.coalesce(func.sum(Document.size), 0))).scalar_one()
    if int(used) + size > cap:
        raise InsufficientStorageError(
            f"the documents would take more than the {cap} bytes allowed in all "
            f"({cap / 1073741824:.4g} GiB, MAX_DOCUMENT_STORE_BYTES): {int(used)} bytes are "
            f"stored and this one has {size}; nothing was stored"
        )


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
    stored.lock_quota(db.session.connection())
    _refuse_past_the_count(to_tx, "nothing was moved")
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
    query = query.with_for_update(of=Document)
    return [_move(served(r), to_transaction_id) for r in db.session.execute(query).all()]
