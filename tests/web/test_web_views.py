"""The web app's views in headless Chromium, at a desktop size and on a 390x844
phone: books (paged list, search), register (cleared, reconcile), accounts
(rename, archive), reports and downloads, the CSV statement import, connections,
and no page wider than the screen. Fixtures come from
tests/web/conftest.py, helpers from tests/web/pages.py.

Screenshots: docs/screenshot-*.png are written by this module when
LEDGER_SCREENSHOTS=docs is set (see docs/web.md "Screenshots"); otherwise they go
to build/screenshots/.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from app import store
from tests.web.pages import fits, go, seed, shot, sign_in
from tests.web.web_support import SIZES, expect, expect_text

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


def test_signed_out_pages_fit_the_screen(browser, live, size):
    context = browser.new_context(viewport=SIZES[size])
    page = context.new_page()
    try:
        for path in ("/signin", "/device", "/authorize?client_id=nobody"):
            page.goto(live.web + path)
            page.wait_for_load_state("networkidle")
            fits(page)
    finally:
        context.close()


def test_books_page_and_search(treasurer, live, size):
    ids = seed(live)
    page = sign_in(treasurer, live)
    rows = page.locator("#transactions tbody tr[data-id]")
    expect(rows).to_have_count(50)  # one page of the 61
    expect_text(page, "#tx-count", r"^Showing the newest 50\.$")
    fits(page)
    shot(page, "books", size)
    page.click("#tx-more")
    expect(rows).to_have_count(61)
    expect_text(page, "#tx-count", r"^61 transactions\.$")
    assert page.locator("#tx-more").is_hidden()
    ids_shown = rows.evaluate_all("rs => rs.map(r => r.dataset.id)")
    assert len(set(ids_shown)) == 61  # no row twice across the pages

    # Search: words in the description, then an account and an amount range (on a
    # phone the search folds away until opened).
    if size == "phone":
        page.click("#tx-search > summary")
    page.fill("#tx-q", "coffee 1")
    page.click("#tx-filter button[type=submit]")
    expect(rows).to_have_count(11)  # Coffee 1, 10..19
    page.fill("#tx-q", "")
    page.select_option("#tx-account", str(ids["Bank"]))
    page.fill("#tx-min", "20.25")
    page.fill("#tx-max", "450")
    page.click("#tx-filter button[type=submit]")
    descriptions = page.locator("#transactions tbody tr[data-id] td:nth-child(2)")
    expect(descriptions).to_have_text(
        ["Hall rent", *[f"Dues from member {d}" for d in range(30, 24, -1)]]
    )
    # A refused bound: said in the page, the field marked, nothing asked.
    page.fill("#tx-max", "4.505")
    page.click("#tx-filter button[type=submit]")
    expect_text(page, "#tx-message", r"Largest amount: .*two decimal places")
    assert page.locator("#tx-max").get_attribute("aria-invalid") == "true"
    assert page.evaluate("document.activeElement.id") == "tx-max"
    page.click("#tx-clear")
    expect(rows).to_have_count(50)
    assert page.locator("#tx-message").is_hidden()
    assert page.locator("#tx-max").get_attribute("aria-invalid") is None

    # Recording still works, and a refused amount is marked and focused.
    if size == "phone":
        page.click("#record-section > summary")
    page.check("input[name=mode][value=out]")
    page.fill("#occurred-on", "2026-02-02")
    page.fill("#description", "Milk")
    page.fill("#amount", "1,23")
    page.select_option("#credit", label="Cash")
    page.select_option("#debit", label="Coffee")
    page.click("#record-submit")
    expect_text(page, "#record-message", r"Commas may only separate thousands")
    assert page.locator("#amount").get_attribute("aria-invalid") == "true"
    assert page.locator("#amount").get_attribute("aria-describedby") == "record-message"
    page.fill("#amount", "1.20")
    page.click("#record-submit")
    expect_text(page, "#record-message", r"^Recorded: Milk, 1\.20\.$")
    expect(descriptions.first).to_have_text("Milk")
    # Edit, delete reachable on the phone too (inside the screen).
    row = page.locator("#transactions tbody tr", has_text="Milk")
    row.get_by_role("button", name="Delete").click()
    row.get_by_role("button", name="Yes, delete").click()
    expect_text(page, "#tx-message", r"^Deleted “Milk”\.$")
    fits(page)


def test_register_reconcile_and_accounts(treasurer, live, size):
    ids = seed(live)
    page = sign_in(treasurer, live, "/accounts")
    fits(page)
    balances = page.locator("#account-groups tr[data-account]")
    expect(balances).to_have_count(5)
    assert page.locator("tr[data-account=Bank] .num").inner_text() == "154.65"
    shot(page, "accounts", size)

    # Rename: the duplicate (after case-folding) is refused; a new name is kept.
    row = page.locator("tr[data-account=Cash]")
    row.get_by_role("button", name="Rename").click()
    page.fill(".rename-input", "  bank ")
    page.locator("form.rename button[type=submit]").click()
    expect_text(page, "#account-message", r"\w")
    assert "error" in page.locator("#account-message").get_attribute("class")
    assert page.locator(".rename-input").get_attribute("aria-invalid") == "true"
    text = page.locator("#account-message").inner_text()
    assert "[]" not in text and "{" not in text
    page.fill(".rename-input", "Cash box")
    page.locator("form.rename button[type=submit]").click()
    expect_text(page, "#account-message", r"^Renamed “Cash” to “Cash box”\.$")
    expect(page.locator("tr[data-account='Cash box']")).to_have_count(1)

    # Archive: hidden here and in every picker, shown again on request.
    page.locator("tr[data-account=Rent]").get_by_role("button", name="Archive").click()
    expect_text(page, "#account-message", r"^Archived “Rent”")
    expect(page.locator("tr[data-account=Rent]")).to_have_count(0)
    page.check("#show-archived")
    expect(page.locator("tr.archived[data-account=Rent]")).to_have_count(1)
    go(page, live, "/")
    if size == "phone":  # the entry form folds away on a phone
        page.click("#record-section > summary")
    page.check("input[name=mode][value=transfer]")
    options = page.locator("#debit option").all_inner_texts()
    assert "Rent" not in options and "Cash box" in options

    # The register: running balance, cleared marks, reconciliation.
    go(page, live, f"/register?account={ids['Bank']}")
    fits(page)
    entries = page.locator("#register tbody tr[data-entry]")
    expect(entries).to_have_count(31)
    expect_text(page, "#register-balance", r"^154\.65$")
    assert entries.first.locator("td:nth-child(4)").inner_text() == "154.65"  # after the rent
    assert entries.nth(1).locator("td:nth-child(4)").inner_text() == "604.65"
    for n in (30, 29):  # the two oldest dues: 20.01 and 20.02
        box = entries.nth(n).locator("input[type=checkbox]")
        box.check()
        expect_text(page, "#register-cleared", r"^(20\.01|40\.03)$")
    expect_text(page, "#register-cleared", r"^40\.03$")
    page.fill("#rec-date", "2026-01-31")
    page.fill("#rec-balance", "40.00")
    page.click("#rec-submit")
    expect_text(page, "#rec-message", r"difference is -?0\.03\. Nothing was reconciled")
    assert page.evaluate("document.activeElement.id") == "rec-balance"
    shot(page, "register", size)
    page.fill("#rec-balance", "40.03")
    page.click("#rec-submit")
    expect_text(page, "#rec-message", r"^Reconciled to 2026-01-31: 2 entries now locked")
    assert page.locator("#rec-balance").get_attribute("aria-invalid") is None
    expect(page.locator("#register tbody tr.reconciled")).to_have_count(2)
    # Only the entries up to the statement date; a reconciled one shows no box to tick.
    expect(entries).to_have_count(30)
    expect(entries.last.locator("input[type=checkbox]")).to_have_count(0)
    assert "reconciled" in entries.last.inner_text()
    fits(page)


STATEMENT = [
    ["Date", "Details", "Debit", "Credit"],
    ["05/01/2026", "Dues from member 5", "", "20.05"],  # already in the books
    ["06/02/2026", "Printer ink", "32.10", ""],
    ["07/02/2026", "Raffle, tickets", "", "1,204.00"],
]


def test_csv_import_flags_duplicates_and_leaves_them_out(treasurer, live, size):
    ids = seed(live)
    page = sign_in(treasurer, live, "/import")
    fits(page)
    buffer = io.StringIO()
    csv.writer(buffer).writerows(STATEMENT)
    page.set_input_files(
        "#csv-file",
        files=[
            {"name": "statement.csv", "mimeType": "text/csv", "buffer": buffer.getvalue().encode()}
        ],
    )
    expect_text(page, "#file-message", r"^Read 4 lines from statement\.csv\.$")
    # The header row was recognised: debit and credit columns, day-first dates.
    assert page.locator("input[name=amount-mode][value=split]").is_checked()
    assert page.locator("#date-format").input_value() == "DD/MM/YYYY"
    page.select_option("#import-bank", label="Bank")
    page.select_option("#import-counter", label="Bank")
    page.click("#preview")
    expect_text(page, "#mapping-message", r"other side")
    assert page.evaluate("document.activeElement.id") == "import-counter"
    page.select_option("#import-counter", label="Dues")
    page.click("#preview")
    preview = page.locator("#preview-table tbody tr")
    expect(preview).to_have_count(3)
    expect(page.locator("#preview-table tr.duplicate")).to_have_count(1)
    assert "Possible duplicate" in page.locator("tr[data-line='2']").inner_text()
    expect_text(page, "#preview-summary", r"3 lines: 2 ticked to import, 1 possible duplicate")
    fits(page)
    shot(page, "import", size)
    before = len(live.transactions())
    page.click("#import-submit")
    expect_text(page, "#import-message", r"^Imported 2 transactions; 1 line left out\.")
    assert len(live.transactions()) == before + 2
    stored = {tx["description"]: tx for tx in live.transactions()}
    ink = stored["Printer ink"]
    assert ink["occurred_on"] == "2026-02-06"
    assert sorted((e["account_id"], e["amount_cents"]) for e in ink["entries"]) == sorted(
        [(ids["Bank"], -3210), (ids["Dues"], 3210)]
    )
    assert stored["Raffle, tickets"]["entries"][0]["amount_cents"] in (120400, -120400)


def test_reports_downloads_and_connections(treasurer, live, size, mint_for_live):
    seed(live)
    page = sign_in(treasurer, live, "/reports")
    page.fill("#is-from", "2026-01-01")
    page.fill("#is-to", "2026-12-31")
    page.click("#is-form button[type=submit]")
    expect_text(page, "#income-statement-table tr.grand", r"Left over\s+49\.65$")
    fits(page)
    shot(page, "reports", size)
    with page.expect_download() as info:
        page.click("#is-csv")
    body = Path(info.value.path()).read_text()
    # The period shown and the screen's words.
    assert body.splitlines()[0] == '"Income and spending, 2026-01-01 to 2026-12-31"'
    assert body.splitlines()[1] == "Section,Account,Amount"
    assert "Left over,,49.65" in body.splitlines()
    with page.expect_download() as info:
        page.select_option("#export-format", "csv")
        page.click("#export-submit")
    assert info.value.suggested_filename.endswith(".csv")
    exported = Path(info.value.path()).read_text()
    assert exported.startswith("transaction_id,date,description,author,account,kind,cents")
    assert exported.count("Hall rent") == 2  # two entries
    expect_text(page, "#export-message", r"^Downloaded ledger-")

    mint_for_live("backup script")
    go(page, live, "/security")
    row = page.locator("#connections tbody tr", has_text="backup script")
    row.wait_for()
    assert "script token" in row.inner_text()
    fits(page)
    shot(page, "security", size)
    row.get_by_role("button", name="Revoke").click()
    row.get_by_role("button", name="Yes").click()
    expect_text(page, "#connection-message", r"^Revoked")


@pytest.fixture
def mint_for_live(live):
    def mint(label):
        from app.services.identity import credentials

        with live.app.app_context():
            credentials.mint_token("alice@example.com", label=label, days=30, audience=live.api)
            store.commit()

    return mint
