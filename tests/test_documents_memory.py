"""An upload of 10 MiB raises the serving process's peak memory (VmHWM) by at most
3x the file, on both stores: the multipart body is spooled to a temporary file, hashed
a chunk at a time and read into memory once, for the INSERT (docs/ledger.md,
"Receipts"; the measured figures are there)."""

from __future__ import annotations

import hashlib
import json
import os
import urllib.request

import pytest

from bench.server import Service, http
from tests.support import throwaway_database

MIB = 1024 * 1024
BOUNDARY = "----receipts-memory-boundary"


def post_document(origin: str, token: str, tx_id: int, data: bytes):
    body = (
        (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; '
            'filename="scan.pdf"\r\nContent-Type: application/pdf\r\n\r\n'
        ).encode()
        + data
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )
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


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_a_10_mib_upload_costs_at_most_3x_its_size(tmp_path, dialect):
    with throwaway_database(dialect, tmp_path, "ledger_docs_memory_") as url:
        with Service(url, tmp_path / "instance") as service:
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
            # Warm up every path (imports, connections, the spooling) with a small file.
            small = b"%PDF-1.4\n" + os.urandom(600 * 1024)
            assert post_document(origin, token, tx_id, small)[0] == 201
            before = service.peak_memory_kib()
            data = b"%PDF-1.4\n" + os.urandom(10 * MIB - 9)
            status, doc = post_document(origin, token, tx_id, data)
            assert status == 201
            assert doc["sha256"] == hashlib.sha256(data).hexdigest()
            after = service.peak_memory_kib()
            assert before is not None and after is not None
            grown = (after - before) * 1024
            print(f"{dialect}: peak grew by {grown / MIB:.1f} MiB for a 10 MiB upload")
            assert grown <= 3 * len(data), f"peak grew by {grown / MIB:.1f} MiB"
