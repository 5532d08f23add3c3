"""Receipts (documents) attached to transactions, over HTTP, on both stores: the type
read from the bytes, the size limit, filenames, the lock rules, detach on delete,
download headers, paging, the audit events and `verify` catching a swapped file
(docs/ledger.md, "Receipts"; docs/openapi.yaml)."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re

import pytest
from sqlalchemy import text

from app.extensions import db
from tests.testkit import BOUNDARY, JPEG, PDF, PNG, events, multipart, restored_backup, upload

WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 32
HEIC = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00" * 32
HTML = b"<!doctype html><html><script>alert(1)</script></html>"
SVG = b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"></svg>'
ZIP = b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + b"\x00" * 40
EXE = b"MZ\x90\x00\x03\x00\x00\x00" + b"\x00" * 60
ELF = b"\x7fELF\x02\x01\x01" + b"\x00" * 60


@pytest.fixture
def tx(make_account, post_tx):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")

    def make(day="2026-03-01", description="shop"):
        made = post_tx(day, description, (food, 500), (bank, -500))
        assert made.status_code == 201, made.get_json()
        return made.get_json()["id"]

    return make


def stored_count(app) -> int:
    with app.app_context():
        n = db.session.execute(text("SELECT count(*) FROM documents")).scalar_one()
        db.session.rollback()
        return n


def summary_count(output: str, what: str) -> int:
    """The number verify's summary gives for `what` (exactly: `11 documents` is 11)."""
    [found] = re.findall(rf"(?<![\w.])(\d+) {what}\b", output)
    return int(found)


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (PDF, "application/pdf"),
        (JPEG, "image/jpeg"),
        (PNG, "image/png"),
        (WEBP, "image/webp"),
        (HEIC, "image/heic"),
    ],
)
def test_each_accepted_type_is_read_from_the_bytes(api, tx, data, kind):
    tx_id = tx()
    # The part claims another type: the bytes decide.
    made = upload(api, tx_id, data, "photo.bin", "text/html")
    assert made.status_code == 201, made.get_json()
    doc = made.get_json()
    assert doc["content_type"] == kind
    assert doc["transaction_id"] == tx_id
    assert doc["size"] == len(data)
    assert doc["sha256"] == hashlib.sha256(data).hexdigest()
    # The name ends in the extension of the type the bytes are.
    assert doc["filename"] == "photo." + {"image/jpeg": "jpg"}.get(kind, kind.split("/")[1])
    assert doc["uploaded_by_email"] == "alice@example.com"
    assert doc["uploaded_at"].endswith("Z")
    assert set(doc) == {
        "id",
        "transaction_id",
        "filename",
        "content_type",
        "size",
        "sha256",
        "uploaded_at",
        "uploaded_by_email",
    }


@pytest.mark.parametrize(
    ("data", "claims"),
    [
        (HTML, ("receipt.pdf", "application/pdf")),
        (SVG, ("receipt.png", "image/png")),
        (ZIP, ("receipt.jpg", "image/jpeg")),
        (EXE, ("receipt.pdf", "application/pdf")),
        (ELF, ("scan.heic", "image/heic")),
        (b"\x00\x00\x00\x18ftypisom" + b"\x00" * 20, ("clip.heic", "image/heic")),
        (b"just some text", ("notes.pdf", "application/pdf")),
    ],
)
def test_other_types_are_415_whatever_they_claim(app, api, tx, data, claims):
    tx_id = tx()
    refused = upload(api, tx_id, data, *claims)
    assert refused.status_code == 415
    message = refused.get_json()["error"]
    for accepted in ("application/pdf", "image/jpeg", "image/png", "image/webp", "image/heic"):
        assert accepted in message
    assert stored_count(app) == 0
    assert events(api, "document.uploaded") == []


def test_a_body_that_is_not_multipart_is_415(app, api, tx):
    tx_id = tx()
    as_json = api.post(f"/transactions/{tx_id}/documents", json={"file": "x"})
    assert as_json.status_code == 415
    raw = api.post(
        f"/transactions/{tx_id}/documents", data=PDF, headers={"Content-Type": "application/pdf"}
    )
    assert raw.status_code == 415
    assert stored_count(app) == 0


def test_no_file_part_or_an_empty_one_is_400(app, api, tx):
    tx_id = tx()
    other = api.post(
        f"/transactions/{tx_id}/documents",
        data={"other": (io.BytesIO(PDF), "a.pdf")},
        content_type="multipart/form-data",
    )
    assert other.status_code == 400
    assert "file" in other.get_json()["error"]
    empty = upload(api, tx_id, b"", "a.pdf")
    assert empty.status_code == 400
    field = api.post(
        f"/transactions/{tx_id}/documents",
        data={"file": "not a file"},
        content_type="multipart/form-data",
    )
    assert field.status_code == 400
    assert stored_count(app) == 0


def test_unknown_transaction_is_404(app, api, tx):
    tx()
    assert upload(api, 999999).status_code == 404
    assert upload(api, 2**63).status_code == 404
    assert api.get("/transactions/999999/documents").status_code == 404
    assert stored_count(app) == 0


def test_too_large_is_413_naming_the_limit(app, api, tx):
    app.config["MAX_DOCUMENT_BYTES"] = 4096
    tx_id = tx()
    big = PDF + b"\x00" * 4096
    refused = upload(api, tx_id, big)
    assert refused.status_code == 413
    assert "4096" in refused.get_json()["error"]
    # Just at the limit is fine, and well beyond the 1 MiB body limit is refused by the
    # document limit (not the generic body limit).
    assert upload(api, tx_id, (PDF + b"\x00" * 4096)[:4096]).status_code == 201
    app.config["MAX_DOCUMENT_BYTES"] = 2 * 1024 * 1024
    assert upload(api, tx_id, PDF + b"\x00" * (1536 * 1024)).status_code == 201
    huge = upload(api, tx_id, PDF + b"\x00" * (3 * 1024 * 1024))
    assert huge.status_code == 413
    assert "2097152" in huge.get_json()["error"]
    assert stored_count(app) == 2
    assert len(events(api, "document.uploaded")) == 2


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("../../etc/passwd.pdf", "passwd.pdf"),
        ("C:\\Users\\me\\Desktop\\receipt.pdf", "receipt.pdf"),
        ("rece\x00ipt\x1b[31m.pdf", "receipt[31m.pdf"),
        ("in\u202evoice\u200b.pdf", "invoice.pdf"),
        ("tab\there\x7f.pdf", "tabhere.pdf"),
        ("reçu d'achat.pdf", "reçu d'achat.pdf"),
        ("a/b/", "document.pdf"),
        ("..", "document.pdf"),
        ("\x01\x02", "document.pdf"),
        ("x" * 300 + ".pdf", "x" * 196 + ".pdf"),
        ("x" * 300 + ".jpeg", "x" * 195 + ".pdf"),  # cut keeping .jpeg, then replaced
        ("x" * 250, "x" * 196 + ".pdf"),
    ],
)
def test_filenames_lose_paths_and_control_characters(api, tx, given, stored):
    made = upload(api, tx(), PDF, given)
    assert made.status_code == 201, made.get_json()
    assert made.get_json()["filename"] == stored
    assert len(made.get_json()["filename"]) <= 200


@pytest.mark.parametrize(
    ("data", "given", "stored"),
    [
        (JPEG, "receipt.html", "receipt.jpg"),
        (PNG, "scan.svg", "scan.png"),
        (PNG, "document", "document.png"),
        (PNG, "", "document.png"),
        (JPEG, "photo.JPEG", "photo.JPEG"),
        (JPEG, "photo.jpeg", "photo.jpeg"),
        (JPEG, "photo.Jpg", "photo.Jpg"),
        (PDF, "invoice.PDF", "invoice.PDF"),
        (WEBP, "a.b.png", "a.b.webp"),
        (HEIC, "IMG_0001.heif", "IMG_0001.heic"),
        (PDF, ".pdf", ".pdf.pdf"),
        (PDF, "trailing.", "trailing.pdf"),
        (PDF, "../x.html/invoice", "invoice.pdf"),
    ],
)
def test_the_stored_name_ends_in_the_extension_of_the_bytes(api, tx, data, given, stored):
    """`receipt.html` holding a JPEG is stored (served, downloaded, packed) as
    `receipt.jpg`; `.jpeg` and any letter case count as right; a dot that opens the
    name starts no extension."""
    made = upload(api, tx(), data, given)
    assert made.status_code == 201, made.get_json()
    assert made.get_json()["filename"] == stored
    got = api.get(f"/documents/{made.get_json()['id']}")
    assert f"filename*=UTF-8''{stored}" in got.headers["Content-Disposition"]


def test_a_body_of_too_many_parts_is_400_saying_so(app, api, tx):
    """5,000 small form fields are not "larger than 10 MiB": 400 naming the parts."""
    tx_id = tx()
    fields = "".join(
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="f{n}"\r\n\r\nx\r\n'
        for n in range(5000)
    )
    body = fields.encode() + multipart(PDF, "a.pdf", "application/pdf")
    assert len(body) < 1024 * 1024
    refused = api.post(
        f"/transactions/{tx_id}/documents",
        data=body,
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
    )
    assert refused.status_code == 400, refused.get_json()
    message = refused.get_json()["error"]
    assert "too many parts" in message and "larger" not in message and "MiB" not in message
    assert stored_count(app) == 0


def test_download_is_the_bytes_with_safe_headers(api, tx):
    tx_id = tx()
    doc = upload(api, tx_id, JPEG, 'my "receipt" €.jpg').get_json()
    got = api.get(f"/documents/{doc['id']}")
    assert got.status_code == 200
    assert got.data == JPEG
    assert got.headers["Content-Type"] == "image/jpeg"
    assert got.headers["X-Content-Type-Options"] == "nosniff"
    assert got.headers["Cache-Control"] == "no-store"
    assert got.headers["Content-Disposition"].startswith("attachment;")
    assert (
        "filename*=UTF-8''my%20%22receipt%22%20%E2%82%AC.jpg" in got.headers["Content-Disposition"]
    )
    expected = base64.b64encode(hashlib.sha256(JPEG).digest()).decode()
    assert got.headers["Repr-Digest"] == f"sha-256=:{expected}:"
    assert api.get("/documents/999999").status_code == 404


def test_list_for_a_transaction_oldest_first(api, tx, clock):
    a, b = tx(), tx()
    first = upload(api, a, PDF, "one.pdf").get_json()
    second = upload(api, a, PNG, "two.png").get_json()  # same second: by id
    upload(api, b, JPEG, "other.jpg")
    listed = api.get(f"/transactions/{a}/documents")
    assert listed.status_code == 200
    assert [d["id"] for d in listed.get_json()] == [first["id"], second["id"]]
    assert listed.get_json()[0] == first


def test_paging_and_the_attached_filter(api, tx):
    a, b = tx(), tx()
    ids = [upload(api, a if n % 2 else b, PDF, f"{n}.pdf").get_json()["id"] for n in range(5)]
    assert api.delete(f"/transactions/{b}").status_code == 204  # detaches n = 0, 2, 4
    everything = api.get("/documents?limit=2").get_json()
    assert [d["id"] for d in everything["items"]] == ids[::-1][:2]
    second = api.get(f"/documents?limit=2&cursor={everything['next_cursor']}").get_json()
    assert [d["id"] for d in second["items"]] == ids[::-1][2:4]
    loose = api.get("/documents?attached=false").get_json()
    assert [d["id"] for d in loose["items"]] == [ids[4], ids[2], ids[0]]
    assert all(d["transaction_id"] is None for d in loose["items"])
    assert loose["next_cursor"] is None
    kept = api.get("/documents?attached=true").get_json()
    assert [d["id"] for d in kept["items"]] == [ids[3], ids[1]]
    for bad in ("limit=0", "limit=501", "limit=x", "attached=maybe", "cursor=nonsense"):
        assert api.get(f"/documents?{bad}").status_code == 400, bad
    # A cursor of another filter is refused rather than misread.
    cursor = api.get("/documents?attached=false&limit=1").get_json()["next_cursor"]
    assert api.get(f"/documents?limit=1&cursor={cursor}").status_code == 400


def test_deleting_a_transaction_detaches_its_documents(app, api, tx):
    tx_id = tx()
    doc = upload(api, tx_id).get_json()
    assert api.delete(f"/transactions/{tx_id}").status_code == 204
    got = api.get(f"/documents/{doc['id']}")
    assert got.status_code == 200 and got.data == PDF
    assert api.get("/documents?attached=false").get_json()["items"][0]["id"] == doc["id"]


def test_move_and_delete(app, api, tx, runner):
    a, b = tx(), tx()
    doc = upload(api, a).get_json()
    moved = api.put(f"/documents/{doc['id']}", json={"transaction_id": b})
    assert moved.status_code == 200
    assert moved.get_json() == {**doc, "transaction_id": b}
    assert api.get(f"/transactions/{a}/documents").get_json() == []
    for bad in ({"transaction_id": 999999}, {"transaction_id": "x"}, {}, {"transaction_id": 1.5}):
        assert api.put(f"/documents/{doc['id']}", json=bad).status_code == 400, bad
    assert api.put("/documents/999999", json={"transaction_id": b}).status_code == 404
    assert api.delete(f"/documents/{doc['id']}").status_code == 204
    assert api.get(f"/documents/{doc['id']}").status_code == 404
    assert api.delete(f"/documents/{doc['id']}").status_code == 404
    assert stored_count(app) == 0
    uploaded = events(api, "document.uploaded")[0]["object"]["document"]
    assert uploaded == {
        "id": doc["id"],
        "transaction_id": a,
        "filename": "receipt.pdf",
        "content_type": "application/pdf",
        "size": len(PDF),
        "sha256": hashlib.sha256(PDF).hexdigest(),
    }
    moved_event = events(api, "document.moved")[0]["object"]
    assert moved_event["document"]["transaction_id"] == b
    assert moved_event["previous_transaction_id"] == a
    deleted = events(api, "document.deleted")[0]["object"]["document"]
    assert deleted["sha256"] == uploaded["sha256"] and deleted["transaction_id"] == b
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 0, result.output


def test_the_lock_date_keeps_documents_of_closed_periods(app, api, tx, session_client):
    closed, open_ = tx("2026-01-10"), tx("2026-03-10")
    old = upload(api, closed).get_json()
    new = upload(api, open_).get_json()
    person = session_client(mfa_complete=True)
    assert person.put("/books/lock", json={"locked_through": "2026-01-31"}).status_code == 200
    # Evidence may still arrive for a closed period.
    late = upload(api, closed, PNG, "late.png")
    assert late.status_code == 201
    for refused in (
        api.put(f"/documents/{old['id']}", json={"transaction_id": open_}),
        api.delete(f"/documents/{old['id']}"),
    ):
        assert refused.status_code == 409
        assert "2026-01-31" in refused.get_json()["error"]
    listed = api.get(f"/transactions/{closed}/documents").get_json()
    assert [d["id"] for d in listed] == [old["id"], late.get_json()["id"]]
    # A document of an open period may be moved onto a closed transaction.
    assert api.put(f"/documents/{new['id']}", json={"transaction_id": closed}).status_code == 200
    assert stored_count(app) == 3


def test_verify_names_a_document_changed_behind_the_service(app, api, tx, runner):
    a, b = tx(), tx()
    doc = upload(api, a).get_json()
    other = upload(api, b, PNG, "b.png").get_json()
    assert runner.invoke(args=["verify"]).exit_code == 0
    api.get("/audit/head")  # seal

    def tamper(statement, **params):
        with app.app_context(), db.engine.begin() as conn:
            conn.execute(text(statement), params)

    swap = "UPDATE document_chunks SET chunk_bytes = :c WHERE document_id = :i"
    tamper(swap, c=b"%PDF-forged", i=doc["id"])
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 1
    assert f"document {doc['id']}" in result.output and "SHA-256" in result.output
    tamper(swap, c=PDF, i=doc["id"])
    assert runner.invoke(args=["verify"]).exit_code == 0

    tamper("UPDATE documents SET transaction_id = :t WHERE id = :i", t=b, i=doc["id"])
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 1 and f"document {doc['id']} is attached" in result.output
    tamper("UPDATE documents SET transaction_id = :t WHERE id = :i", t=a, i=doc["id"])

    tamper("DELETE FROM documents WHERE id = :i", i=other["id"])
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 1
    assert f"document {other['id']}" in result.output and "missing" in result.output


@pytest.mark.parametrize(
    ("column", "value", "named"),
    [
        ("size", 12345, "its size is 12345 in the ledger"),
        ("sha256", "0" * 64, f"its sha256 is {'0' * 64} in the ledger"),
        ("filename", "receipt.html", "its filename is 'receipt.html' in the ledger"),
        ("content_type", "text/html", "its content_type is 'text/html' in the ledger"),
    ],
)
def test_verify_names_a_document_whose_description_changed(
    app, api, tx, runner, column, value, named
):
    """The bytes unchanged, one column of the document's row changed behind the
    service: verify exits 1 naming the document and the column against the trail."""
    doc = upload(api, tx(), JPEG, "receipt.jpg").get_json()
    assert runner.invoke(args=["verify"]).exit_code == 0
    with app.app_context(), db.engine.begin() as conn:
        conn.execute(
            text(f"UPDATE documents SET {column} = :v WHERE id = :i"), {"v": value, "i": doc["id"]}
        )
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 1, result.output
    assert f"verify: FAILED: document {doc['id']}: {named}" in result.output
    assert "in event seq" in result.output


def test_verify_names_a_document_added_behind_the_service(app, api, tx, runner):
    tx_id = tx()
    with app.app_context(), db.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO documents (id, transaction_id, filename, content_type, size,"
                " sha256, uploaded_at) VALUES (77, :t, 'x.pdf', 'application/pdf',"
                " 5, :h, '2026-01-01 00:00:00')"
            ),
            {"t": tx_id, "h": hashlib.sha256(b"%PDF-").hexdigest()},
        )
        conn.execute(
            text("INSERT INTO document_chunks (document_id, seq, chunk_bytes) VALUES (77, 0, :c)"),
            {"c": b"%PDF-"},
        )
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 1 and "document 77 is in the ledger" in result.output


def test_verify_follows_a_transaction_deletion_that_detached(api, tx, runner):
    tx_id = tx()
    upload(api, tx_id)
    assert api.delete(f"/transactions/{tx_id}").status_code == 204
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 0, result.output
    assert summary_count(result.output, "documents") == 1


# slow: a restore into a new PostgreSQL database (created, migrated, dropped) takes seconds
@pytest.mark.parametrize("target", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_backup_and_restore_carry_documents_byte_for_byte(
    api, tx, runner, app_config, tmp_path, target
):
    kept, gone = tx(), tx()
    photo = JPEG + bytes(range(256)) * 64
    docs = [
        upload(api, kept, PDF, "a.pdf").get_json(),
        upload(api, kept, photo, "b.jpg").get_json(),
        upload(api, gone, PNG, "c.png").get_json(),
    ]
    assert api.delete(f"/transactions/{gone}").status_code == 204  # one detached
    with restored_backup(runner, app_config, tmp_path, target, "ledger_docs_restore_") as (
        restored,
        _,
        verified,
    ):
        assert summary_count(verified, "documents") == 3
        client = restored.test_client()
        headers = {"Authorization": f"Bearer {api.token}"}
        for doc, data in zip(docs, (PDF, photo, PNG), strict=True):
            got = client.get(f"/documents/{doc['id']}", headers=headers)
            assert got.status_code == 200 and got.data == data
        listed = client.get(f"/transactions/{kept}/documents", headers=headers).get_json()
        assert listed == docs[:2]
        loose = client.get("/documents?attached=false", headers=headers).get_json()["items"]
        assert loose == [{**docs[2], "transaction_id": None}]
        # The restored store goes on numbering documents after the restored ones.
        made = client.post(
            f"/transactions/{kept}/documents",
            data=multipart(WEBP, "d.webp", "image/webp"),
            content_type=f"multipart/form-data; boundary={BOUNDARY}",
            headers=headers,
        )
        assert made.status_code == 201 and made.get_json()["id"] == docs[-1]["id"] + 1
        with restored.app_context():
            db.session.remove()
            db.engine.dispose()


def test_document_count_in_the_paged_listing_and_the_register(api, tx):
    a, b = tx("2026-03-01"), tx("2026-03-02")
    upload(api, a)
    upload(api, a, PNG, "b.png")
    paged = api.get("/transactions?limit=10").get_json()["items"]
    assert {t["id"]: t["document_count"] for t in paged} == {a: 2, b: 0}
    # SPEC's array form is unchanged.
    assert all("document_count" not in t for t in api.get("/transactions").get_json())
    account = paged[0]["entries"][0]["account_id"]
    register = api.get(f"/accounts/{account}/register?limit=10").get_json()["items"]
    assert {i["transaction_id"]: i["document_count"] for i in register} == {a: 2, b: 0}


def test_the_registers_document_count_is_its_transactions(api, tx):
    """Each register item counts its transaction's documents, whatever the entry's own
    id (here entry ids and transaction ids differ: two entries a transaction)."""
    a, b, c = tx("2026-03-01"), tx("2026-03-02"), tx("2026-03-03")
    upload(api, c)
    paged = api.get("/transactions?limit=10").get_json()["items"]
    for account in {e["account_id"] for e in paged[0]["entries"]}:
        items = api.get(f"/accounts/{account}/register?limit=10").get_json()["items"]
        assert {i["transaction_id"]: i["document_count"] for i in items} == {a: 0, b: 0, c: 1}


def test_document_count_in_the_list_transactions_tool(api, tx):
    from tests.testkit import Rpc

    a = tx()
    upload(api, a)
    rpc = Rpc(api)
    answer = rpc.post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "list_transactions", "arguments": {"limit": 5}},
        }
    ).get_json()
    assert answer["result"]["structuredContent"]["items"][0]["document_count"] == 1, answer


def test_move_documents_moves_every_document_with_one_event_each(app, api, tx, runner):
    from app import store
    from app.services.ledger import documents

    original, replacement, other = tx(), tx(), tx()
    first = upload(api, original).get_json()
    second = upload(api, original, PNG, "b.png").get_json()
    untouched = upload(api, other, JPEG, "c.jpg").get_json()
    with app.app_context():
        moved = documents.move_documents(original, replacement)
        store.commit()
    assert [d["id"] for d in moved] == [first["id"], second["id"]]
    assert [d["id"] for d in api.get(f"/transactions/{replacement}/documents").get_json()] == [
        first["id"],
        second["id"],
    ]
    assert api.get(f"/transactions/{original}/documents").get_json() == []
    assert api.get(f"/transactions/{other}/documents").get_json() == [untouched]
    moved_events = events(api, "document.moved")
    assert sorted(e["object"]["document"]["id"] for e in moved_events) == [
        first["id"],
        second["id"],
    ]
    assert all(e["object"]["previous_transaction_id"] == original for e in moved_events)
    # The original can then go; its evidence stays with the replacement.
    assert api.delete(f"/transactions/{original}").status_code == 204
    assert len(api.get(f"/transactions/{replacement}/documents").get_json()) == 2
    assert runner.invoke(args=["verify"]).exit_code == 0
    with app.app_context():
        assert documents.move_documents(original, replacement) == []
        with pytest.raises(Exception, match="unknown transaction_id"):
            documents.move_documents(replacement, 999999)
        store.rollback()


def test_a_correction_moves_the_originals_documents_to_its_replacement(app, api, tx, runner):
    """POST /transactions with `replaces`: the original's receipts are attached to the
    replacement in the same step (a document.moved event each) and verify agrees."""
    original = tx()
    first = upload(api, original).get_json()
    second = upload(api, original, PNG, "photo.png", "image/png").get_json()
    entries = [
        {"account_id": e["account_id"], "amount_cents": e["amount_cents"] * 2}
        for t in api.get("/transactions").get_json()
        if t["id"] == original
        for e in t["entries"]
    ]
    made = api.post(
        "/transactions",
        json={
            "occurred_on": "2026-03-01",
            "description": "shop, corrected",
            "entries": entries,
            "replaces": original,
        },
    )
    assert made.status_code == 201, made.get_json()
    replacement = made.get_json()["id"]
    moved = api.get(f"/transactions/{replacement}/documents").get_json()
    assert [d["id"] for d in moved] == [first["id"], second["id"]]
    assert all(d["transaction_id"] == replacement for d in moved)
    assert [d["sha256"] for d in moved] == [first["sha256"], second["sha256"]]
    assert api.get("/documents?attached=false").get_json()["items"] == []
    trail = events(api, "document.moved")
    assert sorted(e["object"]["document"]["id"] for e in trail) == [first["id"], second["id"]]
    assert {e["object"]["previous_transaction_id"] for e in trail} == {original}
    result = runner.invoke(args=["verify"])
    assert result.exit_code == 0, result.output


def test_a_refused_correction_leaves_the_documents_where_they_were(app, api, tx):
    """The correction is refused after its first document has moved (the second one
    would pass MAX_DOCUMENTS_PER_TRANSACTION, lowered since the upload): the whole unit
    is undone, the replacement, the first move and its event with it."""
    original = tx()
    docs = [upload(api, original, PDF, f"{n}.pdf").get_json() for n in range(2)]
    app.config["MAX_DOCUMENTS_PER_TRANSACTION"] = 1
    entries = [
        {"account_id": e["account_id"], "amount_cents": e["amount_cents"] * 2}
        for t in api.get("/transactions").get_json()
        if t["id"] == original
        for e in t["entries"]
    ]
    made = api.post(
        "/transactions",
        json={
            "occurred_on": "2026-03-01",
            "description": "corrected",
            "entries": entries,
            "replaces": original,
        },
    )
    assert made.status_code == 409, made.get_json()
    assert "MAX_DOCUMENTS_PER_TRANSACTION" in made.get_json()["error"]
    assert [t["id"] for t in api.get("/transactions").get_json()] == [original]
    listed = api.get(f"/transactions/{original}/documents").get_json()
    assert listed == docs
    assert events(api, "document.moved") == []
    assert events(api, "transaction.posted")[-1]["object"]["transaction"]["id"] == original


@pytest.mark.parametrize("query", ["attached=", "limit=", "attached=yes", "limit=0"])
def test_an_empty_or_bad_paging_parameter_is_400_naming_it(api, query):
    """As GET /transactions: a parameter given empty is not absent (the fuzzer sent
    `?attached=` and `?limit=`, which were served as if left out)."""
    response = api.get(f"/documents?{query}")
    assert response.status_code == 400
    assert f"'{query.split('=')[0]}'" in response.get_json()["error"]


def test_at_most_max_documents_per_transaction(app, api, tx):
    """MAX_DOCUMENTS_PER_TRANSACTION: an upload or a move past it is 409, nothing
    changed; other transactions are not held to the first one's count."""
    app.config["MAX_DOCUMENTS_PER_TRANSACTION"] = 2
    full, other = tx(), tx()
    kept = [upload(api, full, PDF, f"{n}.pdf").get_json() for n in range(2)]
    refused = upload(api, full, PNG, "third.png")
    assert refused.status_code == 409, refused.get_json()
    message = refused.get_json()["error"]
    assert "MAX_DOCUMENTS_PER_TRANSACTION" in message and "2" in message
    assert stored_count(app) == 2
    assert len(events(api, "document.uploaded")) == 2
    elsewhere = upload(api, other, PNG, "b.png").get_json()
    moved = api.put(f"/documents/{elsewhere['id']}", json={"transaction_id": full})
    assert moved.status_code == 409, moved.get_json()
    assert api.get(f"/documents/{elsewhere['id']}").status_code == 200
    assert [d["id"] for d in api.get(f"/transactions/{other}/documents").get_json()] == [
        elsewhere["id"]
    ]
    assert events(api, "document.moved") == []
    assert api.get(f"/transactions/{full}/documents").get_json() == kept
    # One removed: room for one again.
    assert api.delete(f"/documents/{kept[0]['id']}").status_code == 204
    assert upload(api, full, PNG, "third.png").status_code == 201


def test_at_most_max_document_store_bytes_in_all(app, api, tx):
    """MAX_DOCUMENT_STORE_BYTES: the document that would pass it is 507, nothing
    stored; detached documents count (they are stored); a deletion makes room."""
    app.config["MAX_DOCUMENT_STORE_BYTES"] = 2 * len(PDF) + len(PNG) - 1
    a, b = tx(), tx()
    first = upload(api, a, PDF, "a.pdf").get_json()
    upload(api, b, PDF, "b.pdf")
    assert api.delete(f"/transactions/{b}").status_code == 204  # detached, still stored
    refused = upload(api, a, PNG, "c.png")
    assert refused.status_code == 507, refused.get_json()
    message = refused.get_json()["error"]
    assert "MAX_DOCUMENT_STORE_BYTES" in message and "nothing was stored" in message
    assert stored_count(app) == 2
    assert len(events(api, "document.uploaded")) == 2
    assert upload(api, a, PNG[: len(PNG) - 1], "d.png").status_code == 201  # just fits
    assert api.delete(f"/documents/{first['id']}").status_code == 204
    assert upload(api, a, PNG, "c.png").status_code == 201


def test_storing_a_document_writes_each_byte_once(app, api, tx):
    """The bytes go to the store as chunk rows, each sent once: the statements of an
    upload carry the document's size in bytes parameters, no more (appending to one
    column sent each chunk once too, but rewrote the column: no UPDATE is sent
    either), and the rows read back are the document, a megabyte at most each."""
    from sqlalchemy import event

    data = PDF + os.urandom(2 * 1024 * 1024 + 12345)
    tx_id = tx()
    sent: list[tuple[str, int]] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        values = parameters.values() if isinstance(parameters, dict) else parameters or ()
        values = [getattr(v, "obj", v) for v in values]  # psycopg's Binary wraps bytes
        size = sum(len(v) for v in values if isinstance(v, (bytes, bytearray, memoryview)))
        sent.append((statement, size))

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        made = upload(api, tx_id, data, "big.pdf")
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert made.status_code == 201, made.get_json()
    assert sum(size for _, size in sent) == len(data)
    assert not [s for s, _ in sent if s.lstrip().upper().startswith("UPDATE DOCUMENT")]
    with app.app_context():
        rows = db.session.execute(
            text(
                "SELECT seq, chunk_bytes FROM document_chunks WHERE document_id = :d ORDER BY seq"
            ),
            {"d": made.get_json()["id"]},
        ).all()
        db.session.rollback()
    assert [seq for seq, _ in rows] == [0, 1, 2]
    assert [len(c) for _, c in rows] == [1024 * 1024, 1024 * 1024, len(data) - 2 * 1024 * 1024]
    assert b"".join(bytes(c) for _, c in rows) == data
    assert api.get(f"/documents/{made.get_json()['id']}").data == data


def test_concurrent_uploads_never_pass_the_count(app, api, tx):
    """Eight uploads at once onto a transaction with room for three: exactly three are
    stored (PostgreSQL: the quota is read under the store's lock, so no two uploads
    both take the last place; SQLite writes one at a time)."""
    from tests.services.oauth.flow import race

    app.config["MAX_DOCUMENTS_PER_TRANSACTION"] = 3
    tx_id = tx()
    body = multipart(PDF, "a.pdf", "application/pdf")

    def send(client, i):
        return client.post(
            f"/transactions/{tx_id}/documents",
            data=body,
            content_type=f"multipart/form-data; boundary={BOUNDARY}",
            headers={"Authorization": f"Bearer {api.token}"},
        )

    statuses = sorted(status for status, _ in race(app, send=send, threads=8))
    assert statuses == [201] * 3 + [409] * 5, statuses
    assert stored_count(app) == 3
