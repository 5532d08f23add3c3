"""The auditor's pack and the bank (docs/export-import-backup.md, "The audit pack"):
`statements/` (each statement of the window as uploaded) and `outstanding.csv` (what
was not cleared at each reconciliation of the window), listed in the README and the
manifest; every CSV of the pack begins with its header. On both stores."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from datetime import UTC, datetime
from pathlib import Path

from tests.services.interchange.packs import read_pack
from tests.testkit import BOUNDARY, multipart

FILES = Path(__file__).resolve().parent.parent / "banking" / "files"
# period_to 2009-05-23; 2007-10-18; none (MT940 without a period: the upload date).
OFX, CAMT, MT940 = "ofxparse_bank_medium.ofx", "genkgo_camt053.v2.minimal.xml", "jejik_abnamro.sta"


def upload_bank_file(api, account_id: int, name: str) -> tuple[int, bytes]:
    data = (FILES / name).read_bytes()
    made = api.post(
        f"/accounts/{account_id}/statements",
        data=multipart(data, name, "application/octet-stream"),
        content_type=f"multipart/form-data; boundary={BOUNDARY}",
    )
    assert made.status_code == 201, made.get_json()
    return made.get_json()["id"], data


def rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def pack(api, query: str = "") -> dict[str, bytes]:
    got = api.get(f"/export?format=audit-pack{query}")
    assert got.status_code == 200
    return read_pack(got.data)


def test_each_statement_of_the_window_travels_as_uploaded(api, make_account, clock):
    clock.current = datetime(2026, 4, 2, 9, 0, tzinfo=UTC)
    savings = make_account("Savings/Main: €", "asset")  # a path, cleaned as a filename is
    giro = make_account("Giro", "asset")
    ofx_id, ofx = upload_bank_file(api, savings, OFX)
    camt_id, camt = upload_bank_file(api, giro, CAMT)
    sta_id, sta = upload_bank_file(api, giro, MT940)
    expected = {
        "2009": {f"statements/{ofx_id}-Main: €-2009-05-23.ofx": ofx},
        "2007": {f"statements/{camt_id}-Giro-2007-10-18.xml": camt},
        "2026": {f"statements/{sta_id}-Giro-2026-04-02.sta": sta},  # by its upload date
    }
    for year, wanted in expected.items():
        files = pack(api, f"&from={year}-01-01&to={year}-12-31")
        assert {p: d for p, d in files.items() if p.startswith("statements/")} == wanted
    # Just outside the window on either side: not in the pack.
    between = pack(api, "&from=2009-05-24&to=2026-04-01")
    assert not any(p.startswith("statements/") for p in between)
    assert not any(p.startswith("statements/") for p in pack(api, "&from=2007-10-19&to=2009-05-22"))
    files = pack(api)
    everything = {k: v for part in expected.values() for k, v in part.items()}
    assert [p for p in files if p.startswith("statements/")] == list(everything)
    # Listed in the manifest with their digests, and named in the README.
    manifest = json.loads(files["manifest.json"])
    listed = {f["path"]: f for f in manifest["files"]}
    for path, data in everything.items():
        assert listed[path]["size"] == len(data)
        assert listed[path]["sha256"] == hashlib.sha256(data).hexdigest()
    readme = files["README.txt"].decode("utf-8")
    assert "statements/<id>-<account>-<date>" in readme and "outstanding.csv" in readme


def test_outstanding_lists_what_was_not_cleared_at_each_reconciliation(api, make_account, post_tx):
    bank, card = make_account("Bank", "asset"), make_account("Card", "liability")
    pay, food = make_account("Pay", "income"), make_account("=Food", "expense")

    def tx(day, description, account, cents, other):
        made = post_tx(day, description, (account, cents), (other, -cents))
        assert made.status_code == 201, made.get_json()

    def reconcile(account, day, closing, *descriptions):
        register = api.get(f"/accounts/{account}/register").get_json()["items"]
        ids = [
            i["entry_id"] for i in register if i["description"] in descriptions and not i["cleared"]
        ]
        assert len(ids) == len(descriptions)
        cleared = api.post(f"/accounts/{account}/cleared", json={"entry_ids": ids, "cleared": True})
        assert cleared.status_code in (200, 204), cleared.get_json()
        done = api.post(
            f"/accounts/{account}/reconciliations",
            json={"statement_date": day, "closing_balance_cents": closing},
        )
        assert done.status_code == 201, done.get_json()

    tx("2026-01-15", "Salary", bank, 100000, pay)
    tx("2026-01-20", "Cheque 17", bank, -20000, food)
    tx("2026-01-25", "Bakery", bank, -2500, food)
    tx("2026-01-28", "Shoes", card, -4000, food)
    reconcile(bank, "2026-01-31", 97500, "Salary", "Bakery")  # the cheque outstanding
    reconcile(card, "2026-01-31", 0)  # the shoes not yet on the card's statement
    tx("2026-02-10", "Salary", bank, 100000, pay)
    tx("2026-02-20", "Cheque 18", bank, -500, food)
    tx("2026-03-02", "Cheque 19", bank, -700, food)  # after the statement date
    reconcile(bank, "2026-02-28", 177500, "Cheque 17", "Salary")
    header = ["account", "statement_date", "date", "description", "amount"]
    january = rows(pack(api, "&from=2026-01-01&to=2026-01-31")["outstanding.csv"])
    # The cheque is reconciled now (in February), but was not cleared on January 31.
    assert january == [
        header,
        ["Bank", "2026-01-31", "2026-01-20", "Cheque 17", "-200.00"],
        ["Card", "2026-01-31", "2026-01-28", "Shoes", "40.00"],  # a debt, as reports show it
    ]
    february = rows(pack(api, "&from=2026-02-01&to=2026-02-28")["outstanding.csv"])
    assert february == [header, ["Bank", "2026-02-28", "2026-02-20", "Cheque 18", "-5.00"]]
    assert rows(pack(api, "&from=2026-03-01")["outstanding.csv"]) == [header]
    whole = rows(pack(api)["outstanding.csv"])
    assert [r[:3] for r in whole[1:]] == [
        ["Bank", "2026-01-31", "2026-01-20"],
        ["Card", "2026-01-31", "2026-01-28"],
        ["Bank", "2026-02-28", "2026-02-20"],
    ]


CSV_HEADERS = {
    "transactions.csv": "transaction_id,date,description,author,account,kind,cents",
    "reports/income-statement.csv": "section,account,amount",
    "reports/balance-sheet.csv": "section,account,amount",
    "reconciliations.csv": "account,statement_date,closing_balance,reconciled_at,reconciled_by",
    "outstanding.csv": "account,statement_date,date,description,amount",
}


def test_every_csv_of_the_pack_begins_with_its_header(api, make_account, post_tx):
    for query in ("", "&from=2026-02-01&to=2026-02-28"):
        files = pack(api, query)  # empty books, then some
        csvs = [p for p in files if p.endswith(".csv")]
        assert sorted(csvs) == sorted(CSV_HEADERS)
        for path in csvs:
            text = files[path].decode("utf-8")
            assert text.split("\r\n", 1)[0] == CSV_HEADERS[path], (path, text[:80])
            assert "\r\n\r\n" not in text and not text.startswith(("\r", "\n")), path
        bank, food = (
            make_account(f"Bank{query[:3]}", "asset"),
            make_account(f"Food{query[:3]}", "expense"),
        )
        post_tx("2026-02-03", "Bread", (food, 250), (bank, -250))
