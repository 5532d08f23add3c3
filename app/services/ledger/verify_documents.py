"""`verify`'s check of the documents (docs/ledger.md, "Receipts"): every stored
document's bytes, link and existence against the audit trail.

The trail's document events (document.uploaded / moved / deleted, each carrying the
document's sha256, size, filename, content_type and transaction_id) are replayed in
seq order, with transaction.deleted detaching the documents of that transaction as the
database's ON DELETE SET NULL does. Then every stored document's bytes are read, one
document at a time, and their SHA-256 recomputed: a document whose bytes, stored
sha256, size, filename, type, link or very existence differ from what the trail says
is named (verify.Disagreement).

The chain itself (seq and hashes) is checked by verify_trail.walk_chain; this check only
reads the events' objects.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from dataclasses import dataclass

import orjson
from sqlalchemy import select, true

from ...extensions import db
from ...models import AuditEvent, AuditPending, Document
from . import documents

BATCH = 1000
ACTIONS = ("document.uploaded", "document.moved", "document.deleted", "transaction.deleted")


@dataclass
class Recorded:
    """A document as the trail leaves it."""

    transaction_id: int | None
    sha256: str
    size: int
    filename: str
    content_type: str
    seq: int


def _keyed(key, columns, where) -> Iterator:
    after = None
    while True:
        query = select(key, *columns).where(where).order_by(key).limit(BATCH)
        if after is not None:
            query = query.where(key > after)
        rows = db.session.execute(query).all()
        if not rows:
            return
        yield from rows
        after = rows[-1][0]


def _events() -> Iterator[tuple[str, int, str, str]]:
    """(label, seq, action, object) of the relevant events, sealed ones then pending."""
    last = 0
    for seq, action, obj in _keyed(
        AuditEvent.seq, (AuditEvent.action, AuditEvent.object), AuditEvent.action.in_(ACTIONS)
    ):
        last = seq
        yield f"event seq {seq}", seq, action, obj
    pending = _keyed(
        AuditPending.id,
        (AuditPending.action, AuditPending.object),
        AuditPending.action.in_(ACTIONS),
    )
    for waiting, (_, action, obj) in enumerate(pending, start=1):
        yield f"a pending event (to follow seq {last})", last + waiting, action, obj


def replay(disagreement) -> dict[int, Recorded]:
    """The documents the trail implies: id -> Recorded."""
    docs: dict[int, Recorded] = {}
    by_tx: dict[int, set[int]] = {}
    for label, seq, action, text in _events():
        try:
            obj = orjson.loads(text)
            if action == "transaction.deleted":
                for doc_id in by_tx.pop(int(obj["transaction"]["id"]), ()):
                    docs[doc_id].transaction_id = None
                continue
            doc = obj["document"]
            doc_id = int(doc["id"])
            tx_id = None if doc["transaction_id"] is None else int(doc["transaction_id"])
            previous = docs.get(doc_id)
            if previous is not None and previous.transaction_id is not None:
                by_tx.get(previous.transaction_id, set()).discard(doc_id)
            if action == "document.deleted":
                docs.pop(doc_id, None)
                continue
            docs[doc_id] = Recorded(
                tx_id,
                str(doc["sha256"]),
                int(doc["size"]),
                str(doc["filename"]),
                str(doc["content_type"]),
                seq,
            )
            if tx_id is not None:
                by_tx.setdefault(tx_id, set()).add(doc_id)
        except (KeyError, TypeError, ValueError, orjson.JSONDecodeError) as exc:
            raise disagreement(f"audit {label}: its object is not a {action} object") from exc
    return docs


def _digest(doc_id: int) -> str:
    hasher = hashlib.sha256()
    for piece in documents.iter_content(doc_id):
        hasher.update(piece)
    return hasher.hexdigest()


def check(disagreement) -> int:
    """Compare every stored document with the trail; how many there are. Raises
    `disagreement` (verify.Disagreement) naming the first document that differs."""
    recorded = replay(disagreement)
    count = 0
    columns = (
        Document.transaction_id,
        Document.size,
        Document.sha256,
        Document.filename,
        Document.content_type,
    )
    for doc_id, tx_id, size, stored_sha, name, kind in _keyed(Document.id, columns, true()):
        count += 1
        doc_id = int(doc_id)
        trail = recorded.pop(doc_id, None)
        if trail is None:
            raise disagreement(
                f"document {doc_id} is in the ledger but no event uploaded it "
                "(or an event deleted it): it was added outside the service"
            )
        actual = _digest(doc_id)
        if not hmac.compare_digest(actual, trail.sha256):
            raise disagreement(
                f"document {doc_id}: its bytes' SHA-256 is {actual} in the ledger but "
                f"{trail.sha256} in event seq {trail.seq}: the document was replaced or "
                "changed outside the service"
            )
        if stored_sha != trail.sha256:
            raise disagreement(
                f"document {doc_id}: its sha256 is {stored_sha} in the ledger but "
                f"{trail.sha256} in event seq {trail.seq}: it was changed outside the service"
            )
        if int(size) != trail.size:
            raise disagreement(
                f"document {doc_id}: its size is {size} in the ledger but {trail.size} "
                f"in event seq {trail.seq}: it was changed outside the service"
            )
        for key, mine, theirs in (
            ("filename", name, trail.filename),
            ("content_type", kind, trail.content_type),
        ):
            if mine != theirs:
                raise disagreement(
                    f"document {doc_id}: its {key} is {mine!r} in the ledger but {theirs!r} "
                    f"in event seq {trail.seq}: it was changed outside the service"
                )
        linked = None if tx_id is None else int(tx_id)
        if linked != trail.transaction_id:
            raise disagreement(
                f"document {doc_id} is attached to transaction {linked} in the ledger but "
                f"to {trail.transaction_id} after event seq {trail.seq}: its link was "
                "changed outside the service"
            )
    if recorded:
        doc_id = min(recorded)
        raise disagreement(
            f"document {doc_id} (event seq {recorded[doc_id].seq}) is missing from the "
            "ledger: it was removed outside the service"
        )
    return count
