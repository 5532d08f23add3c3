"""The auditor's pack, complete (docs/export-import-backup.md, "The audit pack"): its
reports, reconciliations, trail and README, exactly, on both stores."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from datetime import UTC, datetime

import pytest

from tests.services.interchange.packs import read_pack

WINDOW = "from=2026-02-01&to=2026-02-28"


@pytest.fixture
def books(api, make_account, post_tx, session_client, clock):
    """January before the window, February inside it, March after; a statement each
    month, made on the day it is dated (the trail's `at` follows the clock)."""
    clock.current = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)
    ids = {
        "bank": make_account("Bank", "asset"),
        "card": make_account("Card", "liability"),
        "pay": make_account("Pay", "income"),
        "food": make_account("=Food", "expense"),  # a name a spreadsheet would run
    }

    def tx(day, description, *entries):
        made = post_tx(day, description, *[(ids[a], c) for a, c in entries])
        assert made.status_code == 201, made.get_json()
        return made.get_json()["id"]

    def reconcile(day, closing):
        register = api.get(f"/accounts/{ids['bank']}/register").get_json()["items"]
        entries = [i["entry_id"] for i in register if not i["cleared"]]
        api.post(f"/accounts/{ids['bank']}/cleared", json={"entry_ids": entries, "cleared": True})
        done = api.post(
            f"/accounts/{ids['bank']}/reconciliations",
            json={"statement_date": day, "closing_balance_cents": closing},
        )
        assert done.status_code == 201, done.get_json()

    tx("2026-01-15", "Pay", ("bank", 100000), ("pay", -100000))
    tx("2026-01-20", "Food", ("food", 2500), ("bank", -2500))
    clock.current = datetime(2026, 1, 31, 18, 0, tzinfo=UTC)
    reconcile("2026-01-31", 97500)
    clock.current = datetime(2026, 2, 10, 9, 30, tzinfo=UTC)
    tx("2026-02-10", "Food", ("food", 1234), ("card", -1234))
    tx("2026-02-11", "Card paid", ("card", 1234), ("bank", -1234))
    clock.current = datetime(2026, 2, 28, 17, 0, tzinfo=UTC)
    reconcile("2026-02-28", 96266)
    clock.current = datetime(2026, 3, 5, 8, 0, tzinfo=UTC)
    tx("2026-03-05", "Pay", ("bank", 50000), ("pay", -50000))
    reconcile("2026-03-31", 146266)
    return ids


def rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def test_the_reports_are_the_windows_with_decimal_amounts(api, books):
    files = read_pack(api.get(f"/export?format=audit-pack&{WINDOW}").data)
    assert rows(files["reports/income-statement.csv"]) == [
        ["section", "account", "amount"],
        ["income", "Pay", "0.00"],
        ["total income", "", "0.00"],
        ["expenses", "'=Food", "12.34"],
        ["total expenses", "", "12.34"],
        ["net", "", "-12.34"],
    ]
    assert rows(files["reports/balance-sheet.csv"]) == [
        ["section", "account", "amount"],
        ["assets", "Bank", "962.66"],
        ["total assets", "", "962.66"],
        ["liabilities", "Card", "0.00"],
        ["total liabilities", "", "0.00"],
        ["retained", "", "962.66"],
        ["total equity", "", "962.66"],
    ]
    # Without `to`: the balance sheet as of the newest transaction's date.
    files = read_pack(api.get("/export?format=audit-pack&from=2026-02-01").data)
    sheet = rows(files["reports/balance-sheet.csv"])
    assert ["assets", "Bank", "1462.66"] in sheet
    assert "balance sheet as of 2026-03-05" in files["README.txt"].decode()


def test_an_approved_budget_adds_budget_and_variance(api, books, session_client):
    made = api.post("/budgets", json={"name": "2026", "starts_on": "2026-01-01"}).get_json()
    lines = [
        {"account_id": books["food"], "months": [1000] * 12},
        {"account_id": books["pay"], "months": [100000] * 12},
    ]
    assert api.put(f"/budgets/{made['id']}", json={"lines": lines}).status_code == 200
    person = session_client(mfa_complete=True)
    assert person.post(f"/budgets/{made['id']}/approve").status_code == 200
    files = read_pack(api.get(f"/export?format=audit-pack&{WINDOW}").data)
    assert rows(files["reports/income-statement.csv"]) == [
        ["section", "account", "amount", "budget", "variance"],
        ["income", "Pay", "0.00", "1000.00", "-1000.00"],
        ["total income", "", "0.00", "1000.00", "-1000.00"],
        ["expenses", "'=Food", "12.34", "10.00", "-2.34"],
        ["total expenses", "", "12.34", "10.00", "-2.34"],
        ["net", "", "-12.34", "990.00", "-1002.34"],
    ]


def test_reconciliations_of_the_window(api, books):
    files = read_pack(api.get(f"/export?format=audit-pack&{WINDOW}").data)
    assert rows(files["reconciliations.csv"]) == [
        ["account", "statement_date", "closing_balance", "reconciled_at", "reconciled_by"],
        ["Bank", "2026-02-28", "962.66", "2026-02-28T17:00:00Z", "alice@example.com"],
    ]
    everything = read_pack(api.get("/export?format=audit-pack").data)
    assert [r[1] for r in rows(everything["reconciliations.csv"])[1:]] == [
        "2026-01-31",
        "2026-02-28",
        "2026-03-31",
    ]


def test_the_trail_is_the_windows_events_and_re_walks_from_the_readme(api, books):
    files = read_pack(api.get(f"/export?format=audit-pack&{WINDOW}").data)
    lines = files["audit-trail.jsonl"].decode("utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    served = api.get(f"/audit?{WINDOW}&limit=500").get_json()["items"]
    assert events == list(reversed(served)) and len(events) == 4
    assert all(e["at"].startswith("2026-02-") for e in events)
    readme = files["README.txt"].decode("utf-8")
    first = events[0]["seq"]
    assert f"first event is seq {first};" in readme
    (previous,) = re.findall(r"\n +([0-9a-f]{64})\n", readme)
    before = api.get("/audit?limit=500&to=2026-01-31").get_json()["items"][0]
    assert before["seq"] == first - 1 and before["hash"] == previous
    for event in events:  # the README's own recipe
        stored = event.pop("hash")
        text = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert hashlib.sha256((previous + text).encode()).hexdigest() == stored
        previous = stored


def test_the_manifest_lists_every_file_and_the_readme_explains_them(api, books):
    files = read_pack(api.get(f"/export?format=audit-pack&{WINDOW}").data)
    manifest = json.loads(files["manifest.json"])
    assert [f["path"] for f in manifest["files"]] == [p for p in files if p != "manifest.json"]
    for entry in manifest["files"]:
        assert entry["sha256"] == hashlib.sha256(files[entry["path"]]).hexdigest()
    readme = files["README.txt"].decode("utf-8")
    for path in manifest["files"]:
        name = path["path"]
        if not name.startswith("documents/"):
            assert name in readme, name
    assert "sha256sum" in readme and "hledger -f books.journal bal" in readme
    # What it says of amounts holds for each file: decimal strings in the reports,
    # the csv export's integer cents in transactions.csv.
    assert "transactions.csv keeps the csv export's signed integer cents" in readme
    rows = list(csv.DictReader(io.StringIO(files["transactions.csv"].decode("utf-8"))))
    assert any(row["cents"] for row in rows)
    assert all(re.fullmatch(r"-?\d+", row["cents"]) for row in rows if row["cents"])
    # Every line of the trail's recipe keeps the section's indent.
    recipe = readme.split("CHECKING THE TRAIL\n", 1)[1].split("\n\n", 1)[0]
    assert all(line.startswith("  ") for line in recipe.splitlines()), recipe
    head = json.loads(files["audit-head.json"])
    assert f"seq {head['seq']}" in readme and head["hash"] in readme
