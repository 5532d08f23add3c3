"""A 10 MiB upload and its download each raise the serving process's peak memory
(VmHWM, started again before each) by at most UPLOAD_BOUND / DOWNLOAD_BOUND, well
under the file's size, and an audit pack of 1,000 documents streams in bounded memory,
on both stores: the multipart body is spooled to a temporary file, hashed and stored
a chunk at a time, and read back a slice at a time, never whole (docs/ledger.md,
"Receipts"; the measured figures are there). Holding the file whole once, on either
way, adds 10 MiB and fails the bound.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.request

import pytest

from harness.server import Service, http
from tests.support import throwaway_database
from tests.testkit import BOUNDARY, multipart

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)

MIB = 1024 * 1024
# Measured (docs/ledger.md, "Receipts"): see the figures there. A file held whole once
# adds 10 MiB to either.
UPLOAD_BOUND = 8 * MIB
DOWNLOAD_BOUND = 10 * MIB


def post_document(origin: str, token: str, tx_id: int, data: bytes):
    body = multipart(data, "scan.pdf", "application/pdf")
    request = urllib.request.Request(
        f"{origin}/transactions/{tx_id}/documents",
        data=body,
        method="POST",
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
        },
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.status, json.loads(response.read())


def get_document(origin: str, token: str, doc_id: int) -> tuple[int, str]:
    """(size, sha256) of a download, read by the client 256 KiB at a time."""
    request = urllib.request.Request(
        f"{origin}/documents/{doc_id}", headers={"Authorization": f"Bearer {token}"}
    )
    hasher = hashlib.sha256()
    size = 0
    with urllib.request.urlopen(request, timeout=120) as response:
        while chunk := response.read(256 * 1024):
            hasher.update(chunk)
            size += len(chunk)
    return size, hasher.hexdigest()


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_a_10_mib_upload_and_a_1000_document_audit_pack_in_bounded_memory(tmp_path, dialect):
    with (
        throwaway_database(dialect, tmp_path, "ledger_docs_memory_") as url,
        Service(url, tmp_path / "instance") as service,
    ):
        token = service.user_with_token()
        service.start()
        origin = service.origin
        bank = http("POST", origin + "/accounts", {"name": "Bank", "kind": "asset"}, token)
        food = http("POST", origin + "/accounts", {"name": "Food", "kind": "expense"}, token)
        status, made = http(
            "POST",
            origin + "/transactions",
            {
                "occurred_on": "2026-03-01",
                "description": "scanner",
                "entries": [
                    {"account_id": food[1]["id"], "amount_cents": 100},
                    {"account_id": bank[1]["id"], "amount_cents": -100},
                ],
            },
            token,
        )
        assert status == 201
        tx_id = made["id"]
        # Warm up every path (imports, connections, the spooling, a download) with a
        # file of a few chunks.
        small = b"%PDF-1.4\n" + os.urandom(3 * MIB)
        status, warm = post_document(origin, token, tx_id, small)
        assert status == 201
        assert get_document(origin, token, warm["id"]) == (len(small), warm["sha256"])
        service.reset_peak_memory()
        before = service.peak_memory_kib()
        data = b"%PDF-1.4\n" + os.urandom(10 * MIB - 9)
        status, doc = post_document(origin, token, tx_id, data)
        assert status == 201
        assert doc["sha256"] == hashlib.sha256(data).hexdigest()
        after = service.peak_memory_kib()
        assert before is not None and after is not None
        grown = (after - before) * 1024
        print(f"{dialect}: peak grew by {grown / MIB:.1f} MiB for a 10 MiB upload")
        assert grown <= UPLOAD_BOUND, f"peak grew by {grown / MIB:.1f} MiB"

        service.reset_peak_memory()
        before = service.peak_memory_kib()
        assert get_document(origin, token, doc["id"]) == (len(data), doc["sha256"])
        after = service.peak_memory_kib()
        assert before is not None and after is not None
        grown = (after - before) * 1024
        print(f"{dialect}: peak grew by {grown / MIB:.1f} MiB for a 10 MiB download")
        assert grown <= DOWNLOAD_BOUND, f"peak grew by {grown / MIB:.1f} MiB"

        # An audit pack of 1,000 documents (64 MiB of them) streams in bounded memory.
        add_documents(url, tx_id, 1000, 64 * 1024)
        service.reset_peak_memory()
        before = service.peak_memory_kib()
        request = urllib.request.Request(
            f"{origin}/export?format=audit-pack", headers={"Authorization": f"Bearer {token}"}
        )
        total = 0
        with urllib.request.urlopen(request, timeout=300) as response:
            while chunk := response.read(256 * 1024):
                total += len(chunk)
        after = service.peak_memory_kib()
        grown = (after - before) * 1024
        print(f"{dialect}: audit pack of {total / MIB:.1f} MiB: peak grew by {grown / MIB:.1f} MiB")
        assert total > 1000 * 64 * 1024
        # What the pack itself holds is about 2 MiB
        # (tests/services/interchange/test_audit_pack.py); the rest is waitress's output
        # buffer, which holds up to 16 MiB the client has not read yet before it pauses
        # the stream: the same ~32 MiB for a pack of 73 MiB or 199 MiB
        # (docs/export-import-backup.md).
        assert grown <= 48 * MIB, f"peak grew by {grown / MIB:.1f} MiB"


def add_documents(url: str, tx_id: int, count: int, size: int) -> None:
    """count documents straight into the store (the pack reads them; no trail needed)."""
    from datetime import UTC, datetime

    from sqlalchemy import create_engine, insert

    from app.config import normalise_database_url
    from app.models import Document, DocumentChunk

    engine = create_engine(normalise_database_url(url))
    try:
        with engine.begin() as conn:
            for n in range(count):
                data = b"%PDF-1.4\n" + os.urandom(size - 9)
                doc_id = conn.execute(
                    insert(Document).returning(Document.id),
                    {
                        "transaction_id": tx_id,
                        "filename": f"r{n}.pdf",
                        "content_type": "application/pdf",
                        "size": size,
                        "sha256": hashlib.sha256(data).hexdigest(),
                        "uploaded_at": datetime(2026, 3, 1, tzinfo=UTC),
                    },
                ).scalar_one()
                conn.execute(
                    insert(DocumentChunk), {"document_id": doc_id, "seq": 0, "chunk_bytes": data}
                )
    finally:
        engine.dispose()
