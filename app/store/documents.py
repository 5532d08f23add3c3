"""Documents' bytes in the store: chunk rows written once, read a slice at a time.

A document's bytes are rows of document_chunks (document_id, seq, chunk_bytes), at most
CHUNK_BYTES each (models/documents.py). write() inserts them from a stream, one
statement a chunk, so each byte is written once on either store and the document is
never whole in memory (until migration 0019 the bytes were one column appended to,
which PostgreSQL rewrote whole on every append). read() gives them back in slices of
at most the size asked for: PostgreSQL one substr() of a chunk row a statement,
SQLite through its incremental blob I/O on the chunk row.

Also what services/ledger/documents.py asks of the dialect, answered here once:
counts() (a page's document counts: PostgreSQL gets the ids as one array literal,
psycopg's per-element dumping and an expanding IN costing more than the query), and
lock_quota() (the documents' quotas checked and the document stored by one writer at a
time: PostgreSQL's advisory lock; SQLite's writes are one at a time already).
"""

from __future__ import annotations

import hashlib
import sqlite3
import typing
from collections.abc import Iterator
from typing import IO

from sqlalchemy import bindparam, func, insert, select, text

from ..models import Document, DocumentChunk
from ..models.documents import CHUNK_BYTES
from . import dialect

# PostgreSQL advisory lock key: the documents' quotas (the count per transaction, the
# bytes in all) are read and the new document written under it, one writer at a time.
QUOTA_LOCK = 0x646F6373

_INSERT = insert(DocumentChunk)
_LENGTHS = (
    select(DocumentChunk.seq, func.length(DocumentChunk.chunk_bytes))
    .where(DocumentChunk.document_id == bindparam("id"))
    .order_by(DocumentChunk.seq)
)
_SLICE = select(
    func.substr(DocumentChunk.chunk_bytes, bindparam("start"), bindparam("count"))
).where(DocumentChunk.document_id == bindparam("id"), DocumentChunk.seq == bindparam("seq"))
_COUNTS = (
    select(Document.transaction_id, func.count())
    .where(Document.transaction_id.in_(bindparam("ids", expanding=True)))
    .group_by(Document.transaction_id)
)
_COUNTS_POSTGRESQL = text(
    "SELECT transaction_id, count(*) FROM documents"
    " WHERE transaction_id = ANY (CAST(:ids AS bigint[])) GROUP BY transaction_id"
)


def write(connection, doc_id: int, stream: IO[bytes]) -> tuple[int, str]:
    """Store the stream (from its start) as document doc_id's chunks, one INSERT a
    chunk; (size, SHA-256 hex) of what was written."""
    stream.seek(0)
    hasher = hashlib.sha256()
    size = seq = 0
    while chunk := stream.read(CHUNK_BYTES):
        hasher.update(chunk)
        size += len(chunk)
        connection.execute(_INSERT, {"document_id": doc_id, "seq": seq, "chunk_bytes": chunk})
        seq += 1
    return size, hasher.hexdigest()


def read(connection, doc_id: int, piece: int = CHUNK_BYTES) -> Iterator[bytes]:
    """Document doc_id's bytes in order, in slices of at most `piece` bytes: never
    more than one slice in memory. PostgreSQL: one substr() of a chunk row a
    statement (the server sends only the slice); SQLite:
    its incremental blob I/O on the chunk row (substr() would load the whole row's
    value for each slice)."""
    if dialect.is_sqlite(connection):
        yield from _read_sqlite(connection, doc_id, piece)
        return
    lengths = connection.execute(_LENGTHS, {"id": doc_id}).all()
    for seq, length in lengths:
        start = 1
        while start <= length:
            data = connection.execute(
                _SLICE, {"id": doc_id, "seq": seq, "start": start, "count": piece}
            ).scalar()
            if not data:
                break
            yield bytes(data)
            start += len(data)


_ROWIDS_SQLITE = text("SELECT rowid FROM document_chunks WHERE document_id = :id ORDER BY seq")


def _read_sqlite(connection, doc_id: int, piece: int) -> Iterator[bytes]:
    rowids = connection.execute(_ROWIDS_SQLITE, {"id": doc_id}).scalars().all()
    raw = typing.cast(sqlite3.Connection, connection.connection.driver_connection)
    for rowid in rowids:
        with raw.blobopen("document_chunks", "chunk_bytes", rowid, readonly=True) as blob:
            while data := blob.read(piece):
                yield data


def counts(connection, tx_ids: list[int]) -> dict[int, int]:
    """How many documents each of these transactions has (absent: none)."""
    if not tx_ids:
        return {}
    wanted = sorted(set(tx_ids))
    if dialect.is_postgresql(connection):
        rows = connection.execute(_COUNTS_POSTGRESQL, {"ids": dialect.int_array(wanted)}).all()
    else:
        rows = connection.execute(_COUNTS, {"ids": wanted}).all()
    return {int(tx): int(n) for tx, n in rows if tx is not None}


def lock_quota(connection) -> None:
    """Hold the documents' quota lock until the unit ends (PostgreSQL; on SQLite the
    unit already writes alone)."""
    if dialect.is_postgresql(connection):
        connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": QUOTA_LOCK})
