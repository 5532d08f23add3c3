"""A treasurer's second walk (issue 37) in headless Chromium, at 1280x800 and on a
390x844 phone, over a club's year of books: budget against actual opening on the year
to date, tables that never cut a word or a date, a receipt taken from the record form
and shown in the page, History's wording for receipts, the budget grid (the Year
column first, totals, the planned surplus, approving asked once more), every
control's size on a phone, and the month's end in the register (the last
reconciliation, the opening balance, a missing statement line added there).

Screenshots: docs/screenshot-*.png with LEDGER_SCREENSHOTS=docs (as
tests/web/test_web_views.py), otherwise build/screenshots/.
"""

from __future__ import annotations

import struct
import zlib
from datetime import date

import pytest

from app import store
from tests.web.pages import all_big_enough, fits, go, shot, sign_in
from tests.web.web_support import SIZES, expect, expect_text, person_at

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


TODAY = "2026-11-15T10:00:00"  # the page's clock: mid-November of the budget's year
LONG = (
    "Reimbursement to the secretary for the annual general meeting: hall hire, "
    "refreshments, printed agendas and postage for the whole membership"
)


def png(width=24, height=16, rgb=(200, 40, 40)) -> bytes:
    """A real (decodable) PNG of one colour."""

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


INVOICE = b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n%%EOF\n"


@pytest.fixture
def treasurer_today(treasurer):
    """tests/web/conftest.py's treasurer (at each of SIZES), with the page's clock at TODAY."""
    treasurer.page.clock.set_fixed_time(TODAY)
    return treasurer


def seed(live, *, budget=True) -> dict:
    """A club's 2026 through mid-November: ~150 transactions, one with a long
    description; with `budget`, the year's approved budget (ahead of it to date,
    behind it for the whole year, as December is still to come)."""
    from app.services.ledger import accounts, budgets, transactions

    with live.app.app_context():
        ids = {
            name: accounts.create_account(name, kind)["id"]
            for name, kind in [
                ("Bank", "asset"),
                ("Petty cash", "asset"),
                ("Donations", "income"),
                ("Subscriptions", "income"),
                ("Grants", "income"),
                ("Hall hire", "expense"),
                ("Refreshments", "expense"),
                ("Printing", "expense"),
                ("Bank charges", "expense"),
            ]
        }

        def post(day, description, debit, credit, cents):
            transactions.record_transaction(
                day,
                description,
                [
                    {"account_id": ids[debit], "amount_cents": cents},
                    {"account_id": ids[credit], "amount_cents": -cents},
                ],
                created_by=None,
            )

        for month in range(1, 12):
            last = 15 if month == 11 else 28
            for n in range(1, 11):
                day = f"2026-{month:02d}-{min(n * 2, last):02d}"
                post(day, f"Subscription from member {month}{n}", "Bank", "Subscriptions", 5200)
            post(f"2026-{month:02d}-03", "Hall hire for club nights", "Hall hire", "Bank", 40000)
            post(f"2026-{month:02d}-09", "Tea and biscuits", "Refreshments", "Petty cash", 9000)
            post(f"2026-{month:02d}-12", "Newsletter printing", "Printing", "Bank", 5500)
        post("2026-06-20", "Council grant", "Bank", "Grants", 655000)
        post("2026-07-04", "Donation at the summer fair", "Bank", "Donations", 2500)
        post("2026-11-14", LONG, "Hall hire", "Bank", 12345)
        if budget:
            made = budgets.create_budget({"name": "Club budget 2026", "starts_on": "2026-01-01"})
            twelve = lambda cents: [cents] * 12  # noqa: E731
            grant = [0] * 5 + [655000] + [0] * 6
            budgets.update_budget(
                made["id"],
                {
                    "lines": [
                        # December: the renewals (so the whole year is behind to date)
                        {"account_id": ids["Subscriptions"], "months": [50000] * 11 + [200000]},
                        {"account_id": ids["Grants"], "months": grant},
                        {"account_id": ids["Hall hire"], "months": twelve(40000)},
                        {"account_id": ids["Refreshments"], "months": twelve(10000)},
                        {"account_id": ids["Printing"], "months": twelve(5000)},
                    ]
                },
            )
            budgets.approve_budget(made["id"], "alice@example.com")
            ids["budget"] = made["id"]
        store.commit()
    return ids


# Every word of every visible table cell, measured in the page: a word (a run of
# non-spaces, so a date too) laid out on more than one line was cut. Returns the cut
# words with their cells.
CUT_WORDS_JS = """() => {
  const cut = [];
  for (const cell of document.querySelectorAll("table td, table th")) {
    if (!cell.getClientRects().length || cell.getBoundingClientRect().width <= 1) continue;
    const head = cell.closest("thead"); // a phone's card rows hide the header (1 px)
    if (head && head.getBoundingClientRect().width <= 1) continue;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (parent && parent.closest(".sr-only, svg, option, select")) continue;
      for (const match of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const tops = new Set([...range.getClientRects()]
          .filter((r) => r.width > 0 && r.height > 0).map((r) => Math.round(r.top)));
        if (tops.size > 1) cut.push(`${match[0]} in “${cell.textContent.trim().slice(0, 60)}”`);
      }
    }
  }
  return cut.slice(0, 12);
}"""

# The cells holding only a date: each on one line (its text's line boxes).
DATE_LINES_JS = """() => [...document.querySelectorAll("table td, table th")]
  .filter((c) => c.getBoundingClientRect().width > 1)
  .filter((c) => /^\\d{4}-\\d\\d-\\d\\d$/.test(c.textContent.trim()))
  .map((c) => {
    const r = document.createRange();
    r.selectNodeContents(c);
    const boxes = [...r.getClientRects()].filter((x) => x.width > 0);
    return new Set(boxes.map((x) => Math.round(x.top))).size;
  })"""


def no_word_cut(page, dates=True):
    cut = page.evaluate(CUT_WORDS_JS)
    assert cut == [], f"{page.url}: words cut across lines: {cut}"
    lines = page.evaluate(DATE_LINES_JS)
    assert set(lines) == ({1} if dates else set()), f"{page.url}: date cells on {lines} lines"


def test_no_table_cuts_a_word_or_a_date(treasurer_today, live, size):
    ids = seed(live)
    page = sign_in(treasurer_today, live)
    no_word_cut(page)  # the books, with the long description among them
    go(page, live, f"/register?account={ids['Bank']}")
    expect(page.locator("#register tbody tr[data-entry]").first).to_be_visible()
    no_word_cut(page)
    fits(page)
    go(page, live, "/accounts")
    cut = page.evaluate(CUT_WORDS_JS)
    assert cut == [], cut
    go(page, live, "/reports")
    expect_text(page, "#budget-report-table caption", r"Club budget 2026")
    cut = page.evaluate(CUT_WORDS_JS)
    assert cut == [], f"budget against actual: {cut}"
    fits(page)
    go(page, live, f"/budgets?budget={ids['budget']}")
    page.locator("#budget-grid").wait_for()
    no_word_cut(page, dates=False)  # the list and the grid's names and figures
    go(page, live, "/history")
    page.locator("#events li").first.wait_for()


def test_budget_against_actual_opens_on_the_year_to_date(treasurer_today, live, size):
    seed(live)
    page = sign_in(treasurer_today, live, "/reports")
    table = "#budget-report-table"
    # Mid-November: January to November, said above the table and in the caption.
    expect_text(page, f"{table} caption", r"^Club budget 2026: 2026-01-01 to 2026-11-30$")
    expect_text(page, "#bva-span", r"^Showing year to date: Jan 2026 to Nov 2026$")
    assert page.locator("#bva-spans button[data-span=ytd]").get_attribute("aria-pressed") == "true"
    # To date the club is ahead of its plan (more subscriptions, less spent) ...
    net = page.locator(f"{table} tr.grand td").last
    assert net.inner_text() == "176.55"  # 245.00 more income, 68.45 more spent
    assert "variance-pos" in net.get_attribute("class")
    # ... the chart opens on a line with a budget and has a scale.
    assert page.locator("#bva-account option").first.inner_text() == "Donations"  # no budget
    assert page.locator("#bva-account").input_value() == "Grants"
    expect(page.locator("#bva-chart svg .scale text")).to_have_count(3)
    fits(page)
    page.evaluate("document.getElementById('budget-section').scrollIntoView()")
    shot(page, "budget-report", size)

    page.locator("#bva-spans").get_by_role("button", name="This month").click()
    expect_text(page, f"{table} caption", r"2026-11-01 to 2026-11-30$")
    expect_text(page, "#bva-span", r"^Showing this month: Nov 2026$")
    page.locator("#bva-spans").get_by_role("button", name="This quarter").click()
    expect_text(page, f"{table} caption", r"2026-10-01 to 2026-12-31$")
    page.locator("#bva-spans").get_by_role("button", name="Whole year").click()
    expect_text(page, f"{table} caption", r"2026-01-01 to 2026-12-31$")
    expect_text(page, "#bva-span", r"^Showing whole year: Jan 2026 to Dec 2026$")
    # The whole year counts December's plan against nothing yet: behind.
    expect_text(page, f"{table} tr.grand", r"-1,273\.45$")
    assert "variance-neg" in page.locator(f"{table} tr.grand td").last.get_attribute("class")
    # Months picked by hand: no preset pressed, the months said.
    page.select_option("#bva-from", label="Feb 2026")
    page.select_option("#bva-to", label="Mar 2026")
    page.click("#bva-show")
    expect_text(page, f"{table} caption", r"2026-02-01 to 2026-03-31$")
    expect_text(page, "#bva-span", r"^Showing Feb 2026 to Mar 2026$")
    assert page.locator("#bva-spans button[aria-pressed=true]").count() == 0


def test_a_receipt_from_the_record_form_is_shown_in_the_page(treasurer_today, live, size):
    ids = seed(live, budget=False)
    page = sign_in(treasurer_today, live)
    if size == "phone":
        page.click("#record-section > summary")
    page.select_option("#book-style", "club")
    expect_text(page, "#title", r"^Club accounts$")
    # Money in is no longer called "Receipt" in club wording: that is the paper.
    modes = page.locator("#record-form fieldset.modes label").all_inner_texts()
    assert [m.strip() for m in modes] == ["Money received", "Payment", "Transfer"]
    page.check("input[name=mode][value=out]")
    page.fill("#occurred-on", "2026-11-15")
    page.fill("#description", "Raffle prizes")
    page.fill("#amount", "23.40")
    page.select_option("#credit", label="Bank")
    page.select_option("#debit", label="Refreshments")
    page.set_input_files(
        "#record-receipt", {"name": "prizes.png", "mimeType": "image/png", "buffer": png()}
    )
    page.click("#record-submit")
    expect_text(
        page,
        "#record-message",
        r"^Recorded: Raffle prizes, 23\.40\. Receipt attached: prizes\.png\.$",
    )
    assert page.locator("#record-receipt").input_value() == ""
    row = page.locator("#transactions tbody tr[data-id]", has_text="Raffle prizes")
    tx_id = row.get_attribute("data-id")
    clip = row.locator("td.receipts button.clip")
    expect(clip).to_have_text("1")
    with live.app.app_context():
        from app.services.ledger import documents

        (doc,) = documents.for_transaction(int(tx_id))
        store.rollback()
    assert doc["filename"] == "prizes.png"

    # Opened in the page, not downloaded: a thumbnail on its line, the picture below.
    downloads = []
    page.on("download", lambda d: downloads.append(d))
    clip.click()
    panel = page.locator(f"tr.receipts-row[data-receipts-of='{tx_id}']")
    thumb = panel.locator("li img.thumb")
    expect(thumb).to_have_count(1)
    page.wait_for_function(
        "el => el.complete && el.naturalWidth === 24", arg=thumb.element_handle()
    )
    panel.get_by_role("button", name="prizes.png").click()
    picture = panel.locator(".receipt-viewer img.receipt-image")
    expect(picture).to_be_visible()
    page.wait_for_function(
        "el => el.complete && el.naturalHeight === 16", arg=picture.element_handle()
    )
    assert downloads == []
    fits(page)
    shot(page, "receipts", size)
    # A PDF opens in a frame in the page; Download still saves the file.
    panel.locator(f"#receipt-file-{tx_id}").set_input_files(
        {"name": "invoice.pdf", "mimeType": "application/pdf", "buffer": INVOICE}
    )
    expect(clip).to_have_text("2")
    expect(panel.locator("li .thumb.pdf")).to_have_count(1)
    panel.get_by_role("button", name="invoice.pdf").click()
    frame = panel.locator(".receipt-viewer iframe.receipt-pdf")
    expect(frame).to_be_visible()
    assert frame.get_attribute("src").startswith("blob:")
    assert frame.bounding_box()["height"] >= 200
    with page.expect_download() as info:
        panel.locator(".receipt-viewer").get_by_role("button", name="Download").click()
    assert info.value.suggested_filename == "invoice.pdf"
    assert treasurer_today.errors == []
    del ids


def test_history_names_the_receipt_and_its_transaction(treasurer_today, live, size):
    import io

    ids = seed(live, budget=False)
    from app.services.ledger import documents, listing, reconciliation, register

    with live.app.app_context():
        hall = next(
            t
            for t in listing.list_transactions(None, None)
            if t["description"] == "Hall hire for club nights"
        )
        doc = documents.upload(hall["id"], io.BytesIO(png()), "hall invoice.png", None)
        items = register.register(ids["Bank"], None, None, 500, None)["items"]
        entry = next(i["entry_id"] for i in items if i["transaction_id"] == hall["id"])
        reconciliation.set_cleared(ids["Bank"], [entry], True)
        store.commit()
    page = sign_in(treasurer_today, live, "/history")
    body = page.locator("main").inner_text()
    assert "document." not in body  # no internal names
    receipt = page.locator("#events li[data-action='document.uploaded']")
    expect(receipt.locator(".event-action")).to_have_text("Receipt attached")
    expect_text(
        page,
        "#events li[data-action='document.uploaded'] .event-what",
        rf"^hall invoice\.png \(\d+ bytes\) · attached to transaction {hall['id']} "
        rf"\({hall['occurred_on']} · Hall hire for club nights\)$",
    )
    # One entry is "1 entry".
    expect_text(
        page,
        "#events li[data-action='entries.cleared'] .event-what",
        r"^Bank: 1 entry marked cleared$",
    )
    # Receipts can be shown on their own.
    options = page.locator("#history-action option").all_inner_texts()
    assert {"Receipt attached", "Receipt moved", "Receipt removed"} <= set(options)
    page.select_option("#history-action", label="Receipt attached")
    page.click("#history-filter button[type=submit]")
    expect(page.locator("#events li")).to_have_count(1)
    assert page.url.endswith("?action=document.uploaded")
    fits(page)
    shot(page, "history", size)
    del doc


def test_the_budget_grid_reads_and_approves_as_a_club_means(treasurer_today, live, size):
    seed(live, budget=False)
    page = sign_in(treasurer_today, live, "/budgets")
    # No budget for this year yet: a new one starts this January.
    assert page.locator("#budget-start").input_value() == "2026-01"
    page.fill("#budget-name", "Plan 2026")
    page.click("#budget-create")
    expect_text(page, "#new-budget-message", r"^Created “Plan 2026”\.$")
    grid = page.locator("#budget-grid")
    year = grid.locator("thead th.year")
    expect(year).to_have_text("Year")
    if size == "desktop":  # the column a club types into is on the screen
        box = year.bounding_box()
        assert box["x"] + box["width"] <= 1280
    first = grid.locator("tr[data-account] input.annual").first  # Donations
    first.fill("6000")
    first.press("Tab")
    assert first.input_value() == "6,000.00"  # written like every other figure
    hall = grid.locator("tr[data-account]", has_text="Hall hire").locator("input.annual")
    hall.fill("12550")
    hall.press("Tab")
    assert hall.input_value() == "12,550.00"
    income = grid.locator("#total-income td")
    expect(income.first).to_have_text("6,000.00")  # the year, then each month
    expect(income.nth(1)).to_have_text("500.00")
    expect(grid.locator("#total-expense td").first).to_have_text("12,550.00")
    expect(grid.locator("#total-surplus td").first).to_have_text("-6,550.00")
    expect(grid.locator("#total-surplus td").nth(1)).to_have_text("-545.84")
    page.click("#budget-save")
    expect_text(page, "#editor-message", r"^Saved “Plan 2026”")
    assert page.locator("#new-budget-message").is_hidden()  # "Created" answered the last step

    # Approving asks once more; "Not yet" keeps the draft.
    page.click("#budget-approve")
    expect(page.locator("#budget-approve")).to_have_text(
        r"Approve: it can never change again. Sure?"
    )
    page.click("#budget-approve-keep")
    expect(page.locator("#budget-approve")).to_have_text("Approve")
    expect_text(page, "#editor-status", r"^Draft$")
    page.click("#budget-approve")
    page.click("#budget-approve")
    expect_text(page, "#editor-status", r"^Approved ")
    # Approved: plain figures, nothing that looks editable.
    expect(grid.locator("input")).to_have_count(0)
    expect(grid.locator("tr[data-account]", has_text="Hall hire").locator("td.year")).to_have_text(
        "12,550.00"
    )
    expect(grid.locator("#total-surplus td").first).to_have_text("-6,550.00")
    page.evaluate("document.getElementById('budget-editor').scrollIntoView()")
    shot(page, "budgets", size)
    go(page, live, "/budgets")
    assert page.locator("#budget-start").input_value() == "2027-01"  # this year has one now


def test_every_control_is_big_enough_to_tap_on_a_phone(browser, live):
    ids = seed(live)
    someone = person_at(browser, live, SIZES["phone"])
    someone.page.clock.set_fixed_time(TODAY)
    try:
        page = sign_in(someone, live)
        page.click("#menu-toggle")  # the views and Sign out, open
        page.click("#record-section > summary")
        page.click("#tx-search > summary")
        row = page.locator("#transactions tbody tr[data-id]").first
        row.locator("td.receipts button.clip").click()
        page.locator("tr.receipts-row .receipts-actions").wait_for()
        all_big_enough(page)
        page.locator("#transactions tbody tr[data-id]").nth(2).get_by_role(
            "button", name="Edit"
        ).click()
        page.locator("tr.editing").wait_for()
        all_big_enough(page)
        for path in (
            "/accounts",
            f"/register?account={ids['Bank']}",
            "/reports",
            f"/budgets?budget={ids['budget']}",
            "/import",
            "/history",
            "/year-end",
            "/security",
        ):
            go(page, live, path)
            page.click("#menu-toggle")
            for fold in page.locator("details:not([open]) > summary").all():
                if fold.is_visible():
                    fold.click()
            all_big_enough(page)
    finally:
        someone.close()


def test_month_end_in_the_register(treasurer_today, live, size):
    ids = seed(live, budget=False)
    from app.services.ledger import reconciliation, register

    with live.app.app_context():
        items = register.register(ids["Bank"], None, date(2026, 9, 30), 500, None)["items"]
        reconciliation.set_cleared(ids["Bank"], [i["entry_id"] for i in items], True)
        closing = items[0]["balance_cents"]
        reconciliation.reconcile(ids["Bank"], "2026-09-30", closing, None)
        store.commit()
    page = sign_in(treasurer_today, live, f"/register?account={ids['Bank']}")
    # The last reconciliation, and the statement's opening balance checked against it.
    shown = f"{closing // 100:,}.{closing % 100:02d}"
    expect_text(page, "#rec-last", rf"^Last reconciled to 2026-09-30, closing balance {shown}\.$")
    page.fill("#rec-opening", shown)
    expect_text(
        page,
        "#rec-opening-check",
        r"^The opening balance matches the last reconciliation \(2026-09-30\)\.$",
    )
    page.fill("#rec-opening", "1.00")
    expect_text(
        page, "#rec-opening-check", r"differs from the last reconciliation's closing .* by "
    )
    page.fill("#rec-date", "2026-10-31")
    page.fill("#rec-balance", "0")

    # A bank charge on the statement, not in the books: added here, and ticked.
    page.click("#missing-section > summary")
    page.fill("#missing-date", "2026-10-30")
    page.fill("#missing-description", "Bank charge")
    page.fill("#missing-amount", "-4.50")
    page.select_option("#missing-other", label="Bank charges")
    page.click("#missing-submit")
    expect_text(page, "#missing-message", r"^Added and ticked: Bank charge, -4\.50\.$")
    added = page.locator("#register tbody tr[data-entry]", has_text="Bank charge")
    expect(added).to_have_count(1)
    expect(added.locator("input[type=checkbox]")).to_be_checked()
    stored = [t for t in live.transactions() if t["description"] == "Bank charge"]
    assert [
        sorted((e["account_name"], e["amount_cents"]) for e in t["entries"]) for t in stored
    ] == [[("Bank", -450), ("Bank charges", 450)]]
    fits(page)
    shot(page, "register", size)
