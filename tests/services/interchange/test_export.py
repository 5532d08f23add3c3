"""GET /export and `ledger-service export`: formats, headers, windows, refusals."""

import csv
import io

import pytest

from tests.testkit import ApiClient

CSV_HEADER = "transaction_id,date,description,author,account,kind,cents\r\n"


def test_hledger_export_is_a_streamed_attachment_with_exact_amounts(api, sample_books):
    response = api.get("/export?format=hledger")
    assert response.status_code == 200
    assert response.is_streamed
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    disposition = response.headers["Content-Disposition"]
    assert disposition.startswith("attachment;") and 'filename="ledger-' in disposition
    assert disposition.endswith('.journal"')
    body = response.get_data(as_text=True)
    assert "account equity:Unused fund\n" in body  # declared even without postings
    # One block per transaction, id as the code, exact decimals from cents.
    assert (
        "2026-01-07 (6) Split  ; author:alice@example.com\n"
        "    expenses:co-op  0.05 USD\n"
        "    assets:Petty cash  0.95 USD\n"
        "    assets:Checking  -1.00 USD\n\n"
    ) in body
    assert "    income:Dues%3B late fees  -0.01 USD\n" in body
    # A description's ';' and newline are escaped so the header stays one line.
    assert '2026-01-04 (3) Aldi "big" shop%3B milk%0Aand eggs  ; author:' in body
    assert "2026-01-01 (1) Opening" in body.split("2026-01-03")[0]  # oldest first


def test_beancount_export_keeps_id_and_author_as_metadata(api, sample_books):
    response = api.get("/export?format=beancount")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert response.headers["Content-Disposition"].endswith('.beancount"')
    body = response.get_data(as_text=True)
    assert "2026-01-01 open Equity:Unused-fund USD\n" in body
    assert (
        '2026-01-04 * "Aldi \\"big\\" shop; milk\\nand eggs"\n'
        '  id: "3"\n'
        '  author: "alice@example.com"\n'
        "  Expenses:Groceries---26-food  43.21 USD\n"
        "  Assets:Checking  -43.21 USD\n"
    ) in body


def test_csv_export_has_one_row_per_entry(api, sample_books):
    response = api.get("/export?format=csv")
    assert response.status_code == 200
    assert response.mimetype == "text/csv"
    assert response.headers["Content-Disposition"].endswith('.csv"')
    rows = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert rows[0] == CSV_HEADER.strip().split(",")
    assert ["", "", "", "", "Unused fund", "equity", ""] in rows  # no entries, still there
    assert len(rows) == 1 + 1 + 17
    assert ["6", "2026-01-07", "Split", "alice@example.com", "co-op", "expense", "5"] in rows
    assert [
        "3",
        "2026-01-04",
        'Aldi "big" shop; milk\nand eggs',
        "alice@example.com",
        "Checking",
        "asset",
        "-4321",
    ] in rows


def test_window_limits_transactions_not_accounts(api, sample_books):
    body = api.get("/export?format=hledger&from=2026-02-01&to=2026-02-01").get_data(as_text=True)
    assert "2026-02-01 (7)" in body
    assert "2026-02-02" not in body and "2026-01-" not in body
    assert "account expenses:co-op\n" in body
    rows = list(
        csv.reader(io.StringIO(api.get("/export?format=csv&to=2026-01-03").get_data(as_text=True)))
    )
    assert {r[0] for r in rows[1:] if r[0]} == {"1", "2"}
    # Accounts without entries in the window travel as account-and-kind rows.
    assert ["", "", "", "", "Visa card", "liability", ""] in rows


def test_empty_ledger_exports_cleanly(api):
    bodies = {}
    for fmt in ("hledger", "beancount", "csv"):
        response = api.get(f"/export?format={fmt}")
        assert response.status_code == 200
        bodies[fmt] = response.get_data(as_text=True)
    assert bodies["csv"] == CSV_HEADER
    assert "account " not in bodies["hledger"] and "\n20" not in bodies["hledger"]
    assert 'option "operating_currency" "USD"' in bodies["beancount"]
    assert " open " not in bodies["beancount"]


@pytest.mark.parametrize(
    "query, needle",
    [
        ("format=ledger", "format must be one of: hledger, beancount, csv"),
        ("", "format must be one of"),
        ("format=csv&from=2026-13-01", "'from' must be a date"),
        ("format=csv&from=2026-02-01&to=2026-01-01", "'to' must not be before 'from'"),
    ],
)
def test_bad_requests_are_400_with_error(api, query, needle):
    response = api.get(f"/export?{query}")
    assert response.status_code == 400
    assert needle in response.get_json()["error"]


def test_export_needs_full_authentication(client, session_client):
    response = client.get("/export?format=csv")
    assert response.status_code == 401
    assert "resource_metadata=" in response.headers["WWW-Authenticate"]
    half = session_client(mfa_complete=False)
    assert half.get("/export?format=csv").status_code == 401
    full = session_client(mfa_complete=True)
    # Read and close the streamed body: a stream left open is finished by the garbage
    # collector later, inside whatever test is running then.
    with full.get("/export?format=csv") as response:
        assert response.status_code == 200
        assert response.get_data(as_text=True).startswith("transaction_id,")


def test_cli_export_writes_the_same_file(app, api, sample_books, runner, tmp_path):
    target = tmp_path / "books.journal"
    result = runner.invoke(args=["export", "--format", "hledger", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert target.read_text(encoding="utf-8") == api.get("/export?format=hledger").get_data(
        as_text=True
    )
    windowed = runner.invoke(args=["export", "--format", "csv", "--from", "2026-02-02"])
    assert windowed.exit_code == 0
    rows = list(csv.reader(io.StringIO(windowed.output)))
    assert [r[0] for r in rows[1:] if r[0]] == ["8", "8"]  # the two entries of one transaction
    bad = runner.invoke(args=["export", "--format", "csv", "--from", "2026-02-30"])
    assert bad.exit_code == 1
    assert "'from' must be a date" in bad.output


def test_paging_gives_the_same_file_as_one_page(app, api, sample_books, monkeypatch):
    from app.services.interchange import export

    whole = {fmt: api.get(f"/export?format={fmt}").get_data(as_text=True) for fmt in export.FORMATS}
    monkeypatch.setattr(export, "PAGE", 2)  # same-day transactions straddle page boundaries
    for fmt in export.FORMATS:
        assert api.get(f"/export?format={fmt}").get_data(as_text=True) == whole[fmt]


def test_a_streaming_export_reads_one_snapshot(app, sample_books):
    """Writes committed while the file streams are not in it (and do not tear it)."""
    import threading

    from app import store
    from app.services.interchange import export
    from app.services.ledger import transactions

    def post_one(description):
        with app.app_context():
            store.write_intent.set(True)
            transactions.record_transaction(
                "2026-01-02",
                description,
                [
                    {"account_id": sample_books["Checking"], "amount_cents": 1},
                    {"account_id": sample_books["Salary"], "amount_cents": -1},
                ],
                created_by=None,
            )
            store.commit()

    with app.app_context():
        store.write_intent.set(False)  # a reader, as GET /export and the CLI command are
        chunks = export.generate("csv", None, None)
        first = next(chunks)  # header and account rows: the snapshot is open now
        writer = threading.Thread(target=post_one, args=("written meanwhile",))
        writer.start()
        writer.join(timeout=30)
        assert not writer.is_alive()
        text = first + "".join(chunks)
        store.rollback()
    assert "written meanwhile" not in text
    assert text.count("\r\n") == 1 + 1 + 17
    with app.app_context():
        later = "".join(export.generate("csv", None, None))
        store.rollback()
    assert "written meanwhile" in later


# Text a spreadsheet would run as a formula, and text that must stay exactly as it is.
FORMULA_DESCRIPTIONS = {
    '=HYPERLINK("http://evil.example","click")': '\'=HYPERLINK("http://evil.example","click")',
    "+1+1": "'+1+1",
    "-2+3": "'-2+3",
    "@SUM(1,2)": "'@SUM(1,2)",
    "'\tcmd": "''\tcmd",  # tab and CR are stripped from the ends of stored text,
    "'\rcmd": "''\rcmd",  # so they only lead once the apostrophes are set aside
    "'=already quoted": "''=already quoted",
    "''-twice": "'''-twice",
    "'tis fine": "'tis fine",
    "Plain coffee": "Plain coffee",
    "a=b": "a=b",
}
FORMULA_ACCOUNTS = {
    "=Bank": "'=Bank",
    "+Cash": "'+Cash",
    "-Loan": "'-Loan",
    "@Home": "'@Home",
    "'tis": "'tis",
}
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def test_csv_export_never_starts_a_text_cell_with_a_formula_character(
    app, client, make_user, mint, runner
):
    make_user()
    make_user("-mallory@example.com")
    alice, mallory = ApiClient(client, mint()), ApiClient(client, mint("-mallory@example.com"))
    ids = {}
    for name, kind in zip(
        FORMULA_ACCOUNTS, ("asset", "asset", "liability", "expense", "asset"), strict=True
    ):
        response = alice.post("/accounts", json={"name": name, "kind": kind})
        assert response.status_code == 201, response.get_json()
        ids[name] = response.get_json()["id"]
    assert alice.post("/accounts", json={"name": "=Unused", "kind": "equity"}).status_code == 201
    for n, description in enumerate(FORMULA_DESCRIPTIONS):
        response = (mallory if n % 2 else alice).post(
            "/transactions",
            json={
                "occurred_on": f"2026-03-{n + 1:02d}",
                "description": description,
                "entries": [
                    {"account_id": ids["@Home"], "amount_cents": 4321 + n},
                    {"account_id": ids["=Bank"], "amount_cents": -4321 - n},
                ],
            },
        )
        assert response.status_code == 201, response.get_json()
    for name in ("+Cash", "-Loan", "'tis"):
        response = alice.post(
            "/transactions",
            json={
                "occurred_on": "2026-04-01",
                "description": "Move",
                "entries": [
                    {"account_id": ids[name], "amount_cents": 100},
                    {"account_id": ids["=Bank"], "amount_cents": -100},
                ],
            },
        )
        assert response.status_code == 201, response.get_json()

    body = alice.get("/export?format=csv").get_data(as_text=True)
    rows = list(csv.reader(io.StringIO(body, newline="")))
    assert ["", "", "", "", "'=Unused", "equity", ""] in rows
    by_date = {}
    for row in rows[1:]:
        for cell in row[2:5]:  # description, author, account: never a formula
            assert not cell.startswith(FORMULA_STARTS), row
        if row[0]:
            by_date.setdefault(row[1], []).append(row)
    for n, (description, written) in enumerate(FORMULA_DESCRIPTIONS.items()):
        (home, bank) = by_date[f"2026-03-{n + 1:02d}"]
        assert home[2] == bank[2] == written, description
        assert home[3] == ("'-mallory@example.com" if n % 2 else "alice@example.com")
        assert (home[4], home[6]) == ("'@Home", str(4321 + n))
        # Amounts are numbers, written from integer cents: a negative stays a number.
        assert (bank[4], bank[6]) == ("'=Bank", str(-4321 - n))
    written_accounts = {row[4] for row in rows[1:]}
    assert set(FORMULA_ACCOUNTS.values()) <= written_accounts
    # The command line writes the same file.
    result = runner.invoke(args=["export", "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert list(csv.reader(io.StringIO(result.output, newline=""))) == rows
