"""The audit pack (docs/export-import-backup.md, "The audit pack"): GET
/export?format=audit-pack and `ledger-service export --format audit-pack`, on both
stores: the exact file list, the manifest's hashes, the window, and bounded memory."""

from __future__ import annotations

import hashlib
import json
import os
import tracemalloc
from datetime import UTC, datetime

import pytest
from sqlalchemy import insert, update

from app.extensions import db
from app.models import Document, DocumentChunk
from tests.services.interchange.packs import read_pack
from tests.testkit import JPEG, PDF, PNG, upload


@pytest.fixture
def books(make_account, post_tx, api):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")

    def tx(day, description):
        made = post_tx(day, description, (food, 500), (bank, -500))
        assert made.status_code == 201
        return made.get_json()["id"]

    before, inside, later = (
        tx("2026-01-15", "before"),
        tx("2026-02-10", "in"),
        tx("2026-03-05", "after"),
    )
    docs = {
        "before": upload(api, before, PDF, "jan.pdf").get_json(),
        "in1": upload(api, inside, JPEG, "feb photo.jpg").get_json(),
        "in2": upload(api, inside, PNG, "../feb.png").get_json(),
        "after": upload(api, later, PDF, "mar.pdf").get_json(),
    }
    return {"tx": (before, inside, later), "docs": docs}


def test_the_pack_holds_exactly_the_window(api, books, clock):
    got = api.get("/export?format=audit-pack&from=2026-02-01&to=2026-02-28")
    assert got.status_code == 200
    assert got.headers["Content-Type"] == "application/zip"
    assert got.headers["Content-Disposition"].startswith("attachment;")
    files = read_pack(got.data)
    inside = books["tx"][1]
    in1, in2 = books["docs"]["in1"], books["docs"]["in2"]
    assert list(files) == [
        "transactions.csv",
        "books.journal",
        f"documents/{inside}/{in1['id']}-feb photo.jpg",
        f"documents/{inside}/{in2['id']}-feb.png",
        "reports/income-statement.csv",
        "reports/balance-sheet.csv",
        "reconciliations.csv",
        "outstanding.csv",
        "audit-trail.jsonl",
        "audit-head.json",
        "README.txt",
        "manifest.json",
    ]
    assert files[f"documents/{inside}/{in1['id']}-feb photo.jpg"] == JPEG
    assert files[f"documents/{inside}/{in2['id']}-feb.png"] == PNG
    window = "from=2026-02-01&to=2026-02-28"
    assert files["transactions.csv"] == api.get(f"/export?format=csv&{window}").data
    assert files["books.journal"] == api.get(f"/export?format=hledger&{window}").data
    assert json.loads(files["audit-head.json"]) == api.get("/audit/head").get_json()
    manifest = json.loads(files["manifest.json"])
    assert manifest["from"] == "2026-02-01" and manifest["to"] == "2026-02-28"
    assert manifest["generated_at"].endswith("Z")
    assert [f["path"] for f in manifest["files"]] == list(files)[:-1]
    for entry in manifest["files"]:
        data = files[entry["path"]]
        assert entry["size"] == len(data)
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()


def test_without_a_window_every_attached_document_travels(api, books, post_tx):
    tx_id = books["tx"][0]
    loose = upload(api, tx_id, PDF, "loose.pdf").get_json()
    assert api.delete(f"/documents/{loose['id']}").status_code == 204
    # A detached document: its transaction deleted, the document kept (attached=false).
    account = api.get("/accounts").get_json()[0]["id"]
    gone = post_tx("2026-02-12", "gone", (account, 1), (account, -1)).get_json()["id"]
    detached = upload(api, gone, PNG, "detached.png").get_json()
    assert api.delete(f"/transactions/{gone}").status_code == 204
    listed = api.get("/documents?attached=false").get_json()["items"]
    assert [d["id"] for d in listed] == [detached["id"]]
    files = read_pack(api.get("/export?format=audit-pack").data)
    manifest = json.loads(files["manifest.json"])
    assert manifest["from"] is None and manifest["to"] is None
    travelled = [p for p in files if p.startswith("documents/")]
    assert len(travelled) == 4
    assert not [p for p in travelled if f"/{detached['id']}-" in p or "None" in p]


@pytest.mark.parametrize(
    "stored", ["../x.pdf", "../../outside/x.pdf", "/etc/x.pdf", "..", "a\\..\\b"]
)
def test_every_path_is_cleaned_again_whatever_is_stored(app, api, books, stored):
    """A filename edited in the database (never through the service) still lands as one
    file inside documents/<transaction id>/."""
    doc = books["docs"]["in1"]
    with app.app_context():
        db.session.execute(update(Document).where(Document.id == doc["id"]).values(filename=stored))
        db.session.commit()
    files = read_pack(api.get("/export?format=audit-pack").data)
    inside = books["tx"][1]
    paths = [p for p in files if p.startswith(f"documents/{inside}/{doc['id']}-")]
    assert len(paths) == 1, list(files)
    (path,) = paths
    name = path.removeprefix(f"documents/{inside}/")
    assert "/" not in name and "\\" not in name and name not in (".", "..")
    assert all(part not in ("..", "") for part in path.split("/"))
    assert files[path] == JPEG


def test_bad_windows_are_400(api, books):
    for query in ("from=2026-13-01", "to=x", "from=2026-03-01&to=2026-02-01"):
        response = api.get(f"/export?format=audit-pack&{query}")
        assert response.status_code == 400, query
    assert "audit-pack" in api.get("/export?format=pdf").get_json()["error"]


def test_the_cli_writes_the_same_pack(api, books, runner, tmp_path):
    path = tmp_path / "pack.zip"
    result = runner.invoke(
        args=["export", "--format", "audit-pack", "--from", "2026-02-01", "-o", str(path)]
    )
    assert result.exit_code == 0, result.output
    files = read_pack(path.read_bytes())
    manifest = json.loads(files["manifest.json"])
    assert manifest["from"] == "2026-02-01" and manifest["to"] is None
    assert len([p for p in files if p.startswith("documents/")]) == 3
    for entry in manifest["files"]:
        assert entry["sha256"] == hashlib.sha256(files[entry["path"]]).hexdigest()


@pytest.mark.slow  # a big loop: seconds (README, the quick loop)
def test_a_thousand_documents_stream_in_bounded_memory(app, api, books):
    """1,000 documents of 64 KiB (64 MiB in all): the stream's Python allocations peak
    far below the total (docs/export-import-backup.md states the figure)."""
    from app.services.interchange import audit_pack

    tx_id = books["tx"][1]
    size = 64 * 1024
    with app.app_context():
        at = datetime(2026, 2, 10, tzinfo=UTC)
        for start in range(0, 1000, 100):
            rows, contents = [], []
            for n in range(start, start + 100):
                data = PDF + os.urandom(size - len(PDF) - 4) + n.to_bytes(4, "big")
                contents.append(data)
                rows.append(
                    {
                        "transaction_id": tx_id,
                        "filename": f"r{n}.pdf",
                        "content_type": "application/pdf",
                        "size": len(data),
                        "sha256": hashlib.sha256(data).hexdigest(),
                        "uploaded_at": at,
                    }
                )
            ids = db.session.scalars(
                insert(Document).returning(Document.id, sort_by_parameter_order=True), rows
            ).all()
            db.session.execute(
                insert(DocumentChunk),
                [
                    {"document_id": i, "seq": 0, "chunk_bytes": data}
                    for i, data in zip(ids, contents, strict=True)
                ],
            )
            db.session.commit()
            del rows, contents
        tracemalloc.start()
        try:
            total = count = 0
            for chunk in audit_pack.generate(None, None):
                total += len(chunk)
                count += 1
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
            db.session.rollback()
    print(f"audit pack: {total} bytes in {count} chunks, Python peak {peak} bytes")
    assert total > 1000 * size
    assert peak < 8 * 1024 * 1024, f"peak {peak} bytes while streaming {total} bytes"
