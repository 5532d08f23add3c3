"""Bank statements over HTTP, on both stores: the upload's refusals, the status each
line gets (duplicate, match, new), the listing, the file as uploaded, deletion
(docs/statements.md; docs/openapi.yaml). The file format is a stand-in (stand_in.py):
these tests are about what the service does with what a reader found."""

from __future__ import annotations

import base64
import hashlib

import pytest
from sqlalchemy import text

from app.extensions import db
from tests.services.banking import stand_in
from tests.services.banking.stand_in import line, statement_file, upload_statement

pytestmark = pytest.mark.usefixtures("stand_in_reader")


def stored(app, table):
    with app.app_context():
        n = db.session.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
        db.session.rollback()
        return n


def test_upload_answers_the_statement_with_its_lines(api, books, clock):
    data = statement_file(
        line("2026-03-02", 2500, "Ann Member", "REF-1"),
        line("2026-03-03", -1299, "Corner Shop", None, memo="card 1234"),
        currency="EUR",
        period_from="2026-03-01",
        period_to="2026-03-31",
        opening_balance_cents=10000,
        closing_balance_cents=11201,
        closing_balance_on="2026-03-31",
    )
    made = upload_statement(api, books["bank"], data)
    assert made.status_code == 201, made.get_json()
    body = made.get_json()
    assert body == {
        "id": body["id"],
        "account_id": books["bank"],
        "format": "ofx",
        "bank_account": "NL91 ABNA 0417 1643 00",
        "currency": "EUR",
        "period_from": "2026-03-01",
        "period_to": "2026-03-31",
        "opening_balance_cents": 10000,
        "closing_balance_cents": 11201,
        "closing_balance_on": "2026-03-31",
        "sha256": hashlib.sha256(data).hexdigest(),
        "created_at": body["created_at"],
        "lines": [
            {
                "line_id": 1,
                "booked_on": "2026-03-02",
                "amount_cents": 2500,
                "payee": "Ann Member",
                "memo": None,
                "bank_ref": "REF-1",
                "status": "new",
                "transaction_id": None,
                "suggestion": None,
                "candidates": [],
            },
            {
                "line_id": 2,
                "booked_on": "2026-03-03",
                "amount_cents": -1299,
                "payee": "Corner Shop",
                "memo": "card 1234",
                "bank_ref": None,
                "status": "new",
                "transaction_id": None,
                "suggestion": None,
                "candidates": [],
            },
        ],
    }
    assert api.get(f"/statements/{body['id']}").get_json() == body


def test_what_the_file_leaves_out_is_null(api, books):
    body = upload_statement(api, books["bank"], statement_file(bank_account=None)).get_json()
    for key in (
        "bank_account",
        "currency",
        "period_from",
        "period_to",
        "opening_balance_cents",
        "closing_balance_cents",
        "closing_balance_on",
    ):
        assert body[key] is None, key
    assert body["lines"] == []


@pytest.mark.parametrize(
    ("kind", "archived", "status"),
    [("expense", False, 400), ("income", False, 400), ("equity", False, 400), ("asset", True, 400)],
)
def test_only_an_open_asset_or_liability_account_takes_a_statement(
    app, api, make_account, kind, archived, status
):
    account = make_account("Somewhere", kind)
    if archived:
        assert api.put(f"/accounts/{account}", json={"archived": True}).status_code == 200
    refused = upload_statement(api, account, statement_file(line("2026-03-02", 100)))
    assert refused.status_code == status and "error" in refused.get_json()
    assert stored(app, "statements") == 0


def test_unknown_account_is_404(api):
    assert upload_statement(api, 999, statement_file()).status_code == 404
    assert upload_statement(api, 2**40, statement_file()).status_code == 404


def test_not_a_statement_is_415_and_too_large_is_413(app, api, books):
    refused = upload_statement(api, books["bank"], b"%PDF-1.4 not a bank statement")
    assert refused.status_code == 415 and "error" in refused.get_json()
    app.config["MAX_STATEMENT_BYTES"] = 64
    big = statement_file(line("2026-03-02", 100, "x" * 100))
    refused = upload_statement(api, books["bank"], big)
    assert refused.status_code == 413 and "MAX_STATEMENT_BYTES" in refused.get_json()["error"]
    assert stored(app, "statements") == 0


def test_a_body_far_over_the_limit_is_413_before_it_is_read(app, api, books):
    app.config["MAX_STATEMENT_BYTES"] = 1024
    refused = upload_statement(api, books["bank"], stand_in.MAGIC + b" " * (200 * 1024))
    assert refused.status_code == 413


def test_multipart_is_required(api, books):
    refused = api.post(f"/accounts/{books['bank']}/statements", json={"file": "x"})
    assert refused.status_code == 415
    empty = api.post(
        f"/accounts/{books['bank']}/statements",
        data=f"--{stand_in.BOUNDARY}--\r\n",
        content_type=f"multipart/form-data; boundary={stand_in.BOUNDARY}",
    )
    assert empty.status_code == 400 and "'file'" in empty.get_json()["error"]


def test_several_bank_accounts_need_bank_account(app, api, books):
    data = stand_in.several_file(
        {"bank_account": "NL91 ABNA 0417 1643 00", "lines": [line("2026-03-02", 100)]},
        {"bank_account": "DE89370400440532013000", "lines": [line("2026-03-02", 200)]},
    )
    refused = upload_statement(api, books["bank"], data)
    assert refused.status_code == 400
    assert refused.get_json()["bank_accounts"] == [
        "NL91 ABNA 0417 1643 00",
        "DE89370400440532013000",
    ]
    wrong = upload_statement(api, books["bank"], data, bank_account="GB00")
    assert wrong.status_code == 400 and len(wrong.get_json()["bank_accounts"]) == 2
    assert stored(app, "statements") == 0
    # Compared without spaces, case-insensitively.
    made = upload_statement(api, books["bank"], data, bank_account="de89 3704 0044 0532 0130 00")
    assert made.status_code == 201, made.get_json()
    assert made.get_json()["bank_account"] == "DE89370400440532013000"
    assert [x["amount_cents"] for x in made.get_json()["lines"]] == [200]


def test_duplicate_when_the_account_already_holds_the_reference_and_amount(api, books):
    first = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", 2500, "Ann", "R-1"))
    )
    sid = first.get_json()["id"]
    posted = api.post(
        f"/statements/{sid}/lines",
        json={"lines": [{"line_id": 1, "action": "post", "account_id": books["dues"]}]},
    )
    assert posted.status_code == 200, posted.get_json()
    tx_id = posted.get_json()["lines"][0]["transaction_id"]
    again = upload_statement(
        api,
        books["bank"],
        statement_file(
            line("2026-03-02", 2500, "Ann", "R-1"),  # same ref and amount: duplicate
            line("2026-03-03", 100, "Bob", "R-2"),
        ),
    ).get_json()
    assert [(x["status"], x["transaction_id"]) for x in again["lines"]] == [
        ("duplicate", tx_id),
        ("new", None),
    ]
    # The same reference with another amount (in a file of its own: one file giving a
    # reference to two amounts is read as none) is another line.
    other = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", 2600, "Ann", "R-1"))
    ).get_json()
    assert [(x["status"], x["bank_ref"]) for x in other["lines"]] == [("new", "R-1")]
    # Another account's statement with the same reference is not a duplicate.
    card = upload_statement(
        api, books["card"], statement_file(line("2026-03-02", 2500, "Ann", "R-1"))
    )
    assert card.get_json()["lines"][0]["status"] == "new"


def test_no_match_with_a_reconciled_entry_or_one_holding_a_reference(api, books, post_tx):
    made = post_tx("2026-03-05", "by hand", (books["bank"], -500), (books["food"], 500))
    tx_id = made.get_json()["id"]
    entry = api.get(f"/accounts/{books['bank']}/register").get_json()["items"][0]["entry_id"]
    assert (
        api.post(
            f"/accounts/{books['bank']}/cleared", json={"entry_ids": [entry], "cleared": True}
        ).status_code
        == 204
    )
    body = upload_statement(
        api, books["bank"], statement_file(line("2026-03-05", -500, "X"))
    ).get_json()
    assert body["lines"][0]["transaction_id"] == tx_id  # cleared is still a candidate
    assert api.delete(f"/statements/{body['id']}").status_code == 204
    done = api.post(
        f"/accounts/{books['bank']}/reconciliations",
        json={"statement_date": "2026-03-31", "closing_balance_cents": -500},
    )
    assert done.status_code == 201, done.get_json()
    body = upload_statement(
        api, books["bank"], statement_file(line("2026-03-05", -500, "X"))
    ).get_json()
    assert body["lines"][0]["status"] == "new"


def test_listing_newest_first_without_lines_and_by_account(api, books):
    a = upload_statement(api, books["bank"], statement_file(line("2026-03-02", 1))).get_json()
    b = upload_statement(api, books["card"], statement_file(line("2026-03-02", 1))).get_json()
    listed = api.get("/statements").get_json()
    assert [s["id"] for s in listed] == [b["id"], a["id"]]
    assert "lines" not in listed[0]
    assert {k: v for k, v in a.items() if k != "lines"} == listed[1]
    only = api.get(f"/statements?account_id={books['bank']}").get_json()
    assert [s["id"] for s in only] == [a["id"]]
    assert api.get("/statements?account_id=x").status_code == 400
    for unknown in (0, -87, 7202926266):  # beyond PostgreSQL's INTEGER: simply none
        assert api.get(f"/statements?account_id={unknown}").get_json() == []


def test_the_file_as_uploaded_and_deletion(app, api, books):
    data = statement_file(line("2026-03-02", 1, "Ann", "R-9"))
    sid = upload_statement(api, books["bank"], data).get_json()["id"]
    got = api.get(f"/statements/{sid}/file")
    assert got.status_code == 200 and got.data == data
    assert got.mimetype == "application/octet-stream"
    assert got.headers["Content-Disposition"].startswith("attachment")
    assert got.headers["X-Content-Type-Options"] == "nosniff"
    digest = base64.b64encode(hashlib.sha256(data).digest()).decode()
    assert got.headers["Repr-Digest"] == f"sha-256=:{digest}:"
    assert api.delete(f"/statements/{sid}").status_code == 204
    for path in (f"/statements/{sid}", f"/statements/{sid}/file"):
        assert api.get(path).status_code == 404
    assert api.delete(f"/statements/{sid}").status_code == 404
    assert stored(app, "statement_lines") == 0


def test_unknown_statement_is_404_everywhere(api):
    assert api.get("/statements/5").status_code == 404
    assert api.get("/statements/5/file").status_code == 404
    assert api.delete("/statements/5").status_code == 404
    assert api.post("/statements/5/lines", json={"lines": []}).status_code == 404
    assert api.post("/statements/5/reconcile").status_code == 404
    assert api.get(f"/statements/{2**63}").status_code == 404


def test_statements_need_the_full_tier(client, books):
    assert client.get("/statements").status_code == 401
    assert client.post(f"/accounts/{books['bank']}/statements").status_code == 401


def test_the_same_file_again_is_409_naming_when_it_was_uploaded(app, api, books, clock):
    data = statement_file(line("2026-03-02", 2500, "Ann", "R-1"), line("2026-03-03", -5, "Fee"))
    first = upload_statement(api, books["bank"], data)
    assert first.status_code == 201, first.get_json()
    first = first.get_json()
    counts = [stored(app, t) for t in ("statements", "statement_lines", "audit_events")]
    again = upload_statement(api, books["bank"], data)
    assert again.status_code == 409, again.get_json()
    body = again.get_json()
    assert body["statement_id"] == first["id"]
    assert first["created_at"] in body["error"], body
    assert set(body) == {"error", "statement_id"}
    assert [stored(app, t) for t in ("statements", "statement_lines", "audit_events")] == counts
    # Other bytes of the same lines (another download) are another file; the same
    # bytes for another account are that account's first; once the statement is
    # deleted, its file may come again.
    assert upload_statement(api, books["bank"], data + b"\n").status_code == 201
    assert upload_statement(api, books["card"], data).status_code == 201
    assert api.delete(f"/statements/{first['id']}").status_code == 204
    assert upload_statement(api, books["bank"], data).status_code == 201


def test_references_the_file_does_not_keep_unique_are_none(app, api, books):
    """NONREF in any case, a reference of fewer than three characters, and one the file
    gives to lines of other dates or amounts (in any of its statements) are read as
    none; one given twice to a line of one date and amount stays (a line listed twice),
    and so does a plain one. Every line is stored so: its duplicates are told apart by
    date, amount, payee and memo instead."""
    data = stand_in.several_file(
        {
            "bank_account": "NL91 ABNA 0417 1643 00",
            "lines": [
                line("2026-03-02", -100, "A", "NONREF"),
                line("2026-03-02", -101, "B", "nonRef"),
                line("2026-03-02", -102, "C", "12"),
                line("2026-03-03", -103, "D", "SEQ1"),
                line("2026-03-04", -103, "E", "SEQ1"),  # same amount, another date
                line("2026-03-05", -104, "F", "SEQ2"),
                line("2026-03-05", -105, "G", "SEQ2"),  # same date, another amount
                line("2026-03-06", -106, "H", "TWICE"),
                line("2026-03-06", -106, "H", "TWICE"),
                line("2026-03-07", -107, "I", "ABC"),
                line("2026-03-08", -108, "J", "OTHER1"),
            ],
        },
        # The file's other account gives OTHER1 to a line of its own, another date.
        {"bank_account": "DE89370400440532013000", "lines": [line("2026-03-09", 1, "K", "OTHER1")]},
    )
    made = upload_statement(api, books["bank"], data, bank_account="NL91ABNA0417164300")
    assert made.status_code == 201, made.get_json()
    refs = [x["bank_ref"] for x in made.get_json()["lines"]]
    assert refs == [None] * 7 + ["TWICE", "TWICE", "ABC", None]
    with app.app_context():
        stored_refs = db.session.execute(
            text("SELECT bank_ref FROM statement_lines ORDER BY line_id")
        ).scalars()
        assert list(stored_refs) == refs
        db.session.rollback()
