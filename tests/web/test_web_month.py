"""The month's work in headless Chromium, at 1280x800 and on a 390x844 phone
(docs/web.md, "The month's work: import and reconcile"): a bank statement imported
with a choice per line (the other side filled in from how similar lines were booked,
flagged duplicates left out unless ticked, the closing balance offered for
reconciling), reconciling statement-first (only the entries up to the statement's
date, a live difference, everything up to the date ticked in one request), and the
reports' periods, CSVs and lists. Fixtures come from
tests/web/conftest.py, helpers from tests/web/pages.py.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import date, timedelta
from pathlib import Path

import pytest

from app import store
from tests.web.pages import fits, go, sign_in
from tests.web.web_support import expect, expect_text

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


def record(ids, on, description, *entries):
    from app.services.ledger import transactions

    return transactions.record_transaction(
        on,
        description,
        [{"account_id": ids[name], "amount_cents": cents} for name, cents in entries],
        created_by=None,
    )


def club_books(live):
    """A club's bank with last year's grant and February's subscription booked."""
    from app.services.ledger import accounts

    with live.app.app_context():
        ids = {
            name: accounts.create_account(name, kind)["id"]
            for name, kind in [
                ("Bank", "asset"),
                ("Grants", "income"),
                ("Dues", "income"),
                ("Subscriptions", "expense"),
                ("Printing", "expense"),
                ("Uncategorised", "expense"),
            ]
        }
        record(ids, "2025-03-03", "Council grant 2025", ("Bank", 100000), ("Grants", -100000))
        record(ids, "2026-02-20", "Magazine subscription", ("Bank", -4500), ("Subscriptions", 4500))
        store.commit()
    return ids


STATEMENT = [
    ["Date", "Details", "Amount", "Balance"],
    ["2026-02-20", "Magazine subscription", "-45.00", "955.00"],  # already in the books
    ["2026-03-02", "COUNCIL GRANT REF 88231", "1,188.77", "2,143.77"],
    ["2026-03-05", "Magazine subscription", "-45.00", "2,098.77"],
    ["2026-03-06", "Printer ink", "-32.10", "2,066.67"],
]


def choose_file(page, rows, name="statement.csv"):
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    page.set_input_files(
        "#csv-file",
        files=[{"name": name, "mimeType": "text/csv", "buffer": buffer.getvalue().encode()}],
    )


def stored(live):
    """Every stored transaction as (date, description, sorted (account, cents))."""
    return sorted(
        (
            tx["occurred_on"],
            tx["description"],
            sorted((e["account_id"], e["amount_cents"]) for e in tx["entries"]),
        )
        for tx in live.transactions()
    )


def preview(page, live, bank="Bank", fallback="Uncategorised"):
    page.select_option("#import-bank", label=bank)
    if fallback:
        page.select_option("#import-counter", label=fallback)
    page.click("#preview")
    page.wait_for_selector("#preview-section:not([hidden])")
    expect_text(page, "#preview-summary", r"^\d+ lines: ")


def test_a_statement_with_one_duplicate_imports_every_line_but_the_duplicate(treasurer, live, size):
    club_books(live)
    page = sign_in(treasurer, live, "/import")
    choose_file(page, STATEMENT)
    before = stored(live)
    preview(page, live)
    page.click("#import-submit")
    expect_text(page, "#import-message", r"^Imported \d+ transactions?")
    # (Before: the one other side for every line hid the duplicate, and all 4 went in.)
    added = [tx[:2] for tx in stored(live) if tx not in before]
    assert len(stored(live)) == len(before) + 3
    assert added == [
        ("2026-03-02", "COUNCIL GRANT REF 88231"),
        ("2026-03-05", "Magazine subscription"),
        ("2026-03-06", "Printer ink"),
    ]
    fits(page)


def test_an_import_leaves_out_its_duplicate_and_books_each_line_as_before(treasurer, live, size):
    ids = club_books(live)
    page = sign_in(treasurer, live, "/import")
    choose_file(page, STATEMENT)
    expect_text(page, "#file-message", r"^Read 5 lines from statement\.csv\.$")
    assert page.locator("#map-balance").input_value() == "3"  # the Balance column, guessed
    before = stored(live)
    preview(page, live)

    # The other side of each line, as similar lines were booked before.
    sides = page.locator("#preview-table tbody tr select.line-counter")
    expect(sides).to_have_count(4)
    chosen = [s.evaluate("s => s.selectedOptions[0].textContent") for s in sides.all()]
    assert chosen == ["Subscriptions", "Grants", "Subscriptions", "Uncategorised"]
    # Each choice offers every open account but the bank: drawn with its chosen option,
    # the rest copied in once the preview is shown (docs/web.md, Import).
    # "None: choose per line" and every open account, less the bank
    offered = page.locator("#import-counter option").count() - 1
    for side in sides.all():
        expect(side.locator("option")).to_have_count(offered)
    assert [s.evaluate("s => s.selectedOptions[0].textContent") for s in sides.all()] == chosen
    # The duplicate (the whole line, as it will be posted) starts unticked.
    expect(page.locator("#preview-table tr.duplicate")).to_have_count(1)
    duplicate = page.locator("tr[data-line='2']")
    assert "Possible duplicate" in duplicate.inner_text()
    assert not duplicate.locator("input.line-include").is_checked()
    expect_text(page, "#preview-summary", r"^4 lines: 3 ticked to import, 1 possible duplicate")
    expect_text(page, "#import-submit", r"^Import 3 transactions$")
    fits(page)

    page.click("#import-submit")
    expect_text(page, "#import-message", r"^Imported 3 transactions; 1 line left out\.")
    added = [tx for tx in stored(live) if tx not in before]
    assert added == sorted(
        [
            (
                "2026-03-02",
                "COUNCIL GRANT REF 88231",
                sorted([(ids["Bank"], 118877), (ids["Grants"], -118877)]),
            ),
            (
                "2026-03-05",
                "Magazine subscription",
                sorted([(ids["Bank"], -4500), (ids["Subscriptions"], 4500)]),
            ),
            (
                "2026-03-06",
                "Printer ink",
                sorted([(ids["Bank"], -3210), (ids["Uncategorised"], 3210)]),
            ),
        ]
    )
    assert len(stored(live)) == len(before) + 3

    # The statement's end is offered for reconciling, its closing balance with it.
    offer = page.locator("#reconcile-link")
    expect(offer).to_be_visible()
    assert "2,066.67" in page.locator("#reconcile-offer-text").inner_text()
    href = offer.get_attribute("href")
    assert f"account={ids['Bank']}" in href
    assert "statement_date=2026-03-06" in href and "closing=206667" in href
    fits(page)

    # The same file again: every line is a duplicate now, so nothing is ticked.
    go(page, live, "/import")
    choose_file(page, STATEMENT)
    preview(page, live, fallback=None)
    expect(page.locator("#preview-table tr.duplicate")).to_have_count(4)
    expect_text(page, "#preview-summary", r"^4 lines: 0 ticked to import")
    assert page.locator("#import-submit").is_disabled()
    assert len(stored(live)) == len(before) + 3

    # Ticking one of them on purpose imports exactly that one.
    page.locator("tr[data-line='4'] input.line-include").check()
    expect_text(page, "#import-submit", r"^Import 1 transaction$")
    page.click("#import-submit")
    expect_text(page, "#import-message", r"^Imported 1 transaction; 3 lines left out\.")
    assert len(stored(live)) == len(before) + 4


def test_changing_a_lines_other_side_checks_it_again(treasurer, live, size):
    ids = club_books(live)
    page = sign_in(treasurer, live, "/import")
    choose_file(page, STATEMENT[:2] + [["2026-03-09", "Hall hire", "-60.98", ""]])
    preview(page, live, fallback=None)
    # Nothing like "Hall hire" was booked and no default given: chosen per line.
    hall = page.locator("tr[data-line='3']")
    expect_text(page, "tr[data-line='3']", r"Choose the other side")
    assert hall.locator("input.line-include").is_disabled()
    hall.locator("select.line-counter").select_option(label="Printing")
    expect(hall.locator("input.line-include")).to_be_checked()
    # The duplicate is the bank's movement whatever its other side: still flagged
    # (and still left out) when booked to another account, checked afresh each time.
    dup = page.locator("tr[data-line='2']")
    dup.locator("select.line-counter").select_option(label="Printing")
    expect(page.locator("#preview-table tr.duplicate")).to_have_count(1)
    expect(dup.locator("input.line-include")).not_to_be_checked()
    dup.locator("input.line-include").check()
    dup.locator("select.line-counter").select_option(label="Subscriptions")
    expect(page.locator("#preview-table tr.duplicate")).to_have_count(1)
    expect(dup.locator("input.line-include")).not_to_be_checked()
    fits(page)
    page.click("#import-submit")
    expect_text(page, "#import-message", r"^Imported 1 transaction; 1 line left out\.")
    hall_tx = [tx for tx in live.transactions() if tx["description"] == "Hall hire"]
    assert sorted((e["account_id"], e["amount_cents"]) for e in hall_tx[0]["entries"]) == sorted(
        [(ids["Bank"], -6098), (ids["Printing"], 6098)]
    )
    # No balance column: the offer names the date and asks for the balance there.
    assert (
        "type the statement's closing balance" in page.locator("#reconcile-offer-text").inner_text()
    )
    assert "closing=" not in page.locator("#reconcile-link").get_attribute("href")


def test_a_line_already_booked_in_other_words_is_flagged_and_left_out(treasurer, live, size):
    """Issue 44: a hall rent and a bank fee already in the books, typed by hand in other
    words and booked to other accounts, came back ticked (354.50 twice)."""
    ids = club_books(live)
    with live.app.app_context():
        record(ids, "2026-03-03", "Hall rent", ("Bank", -35000), ("Printing", 35000))
        record(ids, "2026-03-01", "Bank charges", ("Bank", -450), ("Subscriptions", 450))
        # The same amount with its own bank reference: another movement.
        record(ids, "2026-03-05", "Transfer REF 7780", ("Bank", -1000), ("Printing", 1000))
        store.commit()
    page = sign_in(treasurer, live, "/import")
    choose_file(
        page,
        [
            ["Date", "Details", "Amount"],
            ["2026-03-02", "ST MARYS PCC 0326", "-350.00"],  # the hall rent, a day off
            ["2026-03-04", "SERVICE CHARGE FEB", "-4.50"],  # the fee, three days off
            ["2026-03-05", "TRANSFER REF 7781", "-10.00"],  # another reference: new
            ["2026-03-10", "SERVICE CHARGE MAR", "-4.50"],  # a week later: new
        ],
    )
    preview(page, live)
    expect(page.locator("#preview-table tr.duplicate")).to_have_count(2)
    for line in ("2", "3"):
        row = page.locator(f"tr[data-line='{line}']")
        expect(row).to_have_class("duplicate")
        expect(row).to_contain_text("Possible duplicate of a transaction already in the books")
        expect(row.locator("input.line-include")).not_to_be_checked()
    for line in ("4", "5"):
        expect(page.locator(f"tr[data-line='{line}'] input.line-include")).to_be_checked()
    expect_text(page, "#preview-summary", r"^4 lines: 2 ticked to import, 2 possible duplicates")
    fits(page)
    before = stored(live)
    page.click("#import-submit")
    expect_text(page, "#import-message", r"^Imported 2 transactions; 2 lines left out\.")
    added = [tx[:2] for tx in stored(live) if tx not in before]
    assert added == [("2026-03-05", "TRANSFER REF 7781"), ("2026-03-10", "SERVICE CHARGE MAR")]


def bank_month(live):
    """A bank: an opening deposit inside the lock (2025), 25 January dues, 3 in February."""
    from app.services.ledger import accounts, lock

    with live.app.app_context():
        ids = {
            name: accounts.create_account(name, kind)["id"]
            for name, kind in [("Bank", "asset"), ("Dues", "income"), ("Opening", "equity")]
        }
        record(ids, "2025-12-20", "Opening deposit", ("Bank", 50000), ("Opening", -50000))
        for day in range(1, 26):
            record(
                ids,
                f"2026-01-{day:02d}",
                f"Dues {day}",
                ("Bank", 1000 + day),
                ("Dues", -1000 - day),
            )
        for day in range(1, 4):
            record(ids, f"2026-02-{day:02d}", f"Dues Feb {day}", ("Bank", 700), ("Dues", -700))
        lock.set_lock({"locked_through": "2025-12-31"})
        store.commit()
    return ids


def cleared_events(live):
    from app.services.ledger import audit

    with live.app.app_context():
        items = audit.page(limit="500", action="entries.cleared")["items"]
        store.commit()
        return items


def eventually(check, timeout=10.0):
    """Wait until check() is true (a request the page sent may still be on its way)."""
    import time

    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "never became true"
        time.sleep(0.05)


JANUARY = sum(1000 + day for day in range(1, 26))  # 25,325 cents


def test_reconciling_starts_from_the_statement_and_ticks_the_month_in_one_request(
    treasurer, live, size
):
    ids = bank_month(live)
    # As the import offers it: the statement's date and closing balance filled in.
    path = f"/register?account={ids['Bank']}&statement_date=2026-01-31&closing={JANUARY}"
    page = sign_in(treasurer, live, path)
    assert page.locator("#rec-date").input_value() == "2026-01-31"
    assert page.locator("#rec-balance").input_value() == "253.25"
    # The statement comes first: its form is above the list.
    form_top = page.locator("#reconcile-section").bounding_box()["y"]
    assert form_top < page.locator("#register").bounding_box()["y"]

    # Only the entries up to the statement's date: no February dues.
    entries = page.locator("#register tbody tr[data-entry]")
    expect(entries).to_have_count(26)
    assert "Feb" not in page.locator("#register").inner_text()
    expect_text(page, "#register-count", r"^26 entries up to 2026-01-31\.$")
    # The opening deposit is inside the lock: shown as locked, with no box to tick.
    opening = page.locator("#register tbody tr", has_text="Opening deposit")
    assert "locked" in opening.inner_text()
    expect(opening.locator("input[type=checkbox]")).to_have_count(0)
    expect_text(page, "#rec-diff", r"^253\.25$")
    fits(page)

    # A tick moves the difference at once.
    page.locator("#register tbody tr", has_text="Dues 25").locator("input").check()
    expect_text(page, "#rec-cleared", r"^10\.25$")
    expect_text(page, "#rec-diff", r"^243\.00$")
    expect(page.locator("#rec-difference")).to_have_class(re.compile(r"\boff\b"))
    eventually(lambda: len(cleared_events(live)) == 1)

    # Everything up to the date: one request, one audit event, the other 24 entries.
    posts = []
    page.on(
        "request",
        lambda r: (
            posts.append(r.url) if r.method == "POST" and r.url.endswith("/cleared") else None
        ),
    )
    page.click("#rec-tick-all")
    expect_text(page, "#rec-message", r"^Ticked 24 entries up to 2026-01-31 as cleared\.$")
    assert len(posts) == 1
    events = cleared_events(live)
    assert len(events) == 2 and len(events[0]["object"]["entry_ids"]) == 24
    expect_text(page, "#rec-diff", r"^0\.00$")
    expect(page.locator("#rec-difference")).to_have_class(re.compile(r"\bzero\b"))
    fits(page)

    page.click("#rec-submit")
    expect_text(page, "#rec-message", r"^Reconciled to 2026-01-31: 25 entries now locked")
    expect(page.locator("#register tbody tr.reconciled")).to_have_count(25)
    expect(page.locator("#register tbody tr.reconciled input")).to_have_count(0)

    # The next statement: a later date shows February, still to tick.
    page.fill("#rec-date", "2026-02-28")
    expect(entries).to_have_count(29)
    page.fill("#rec-balance", str((JANUARY + 2100) / 100))
    expect_text(page, "#rec-diff", r"^21\.00$")
    fits(page)


def test_register_from_the_menu_offers_a_picker_then_the_statement(treasurer, live, size):
    ids = bank_month(live)
    page = sign_in(treasurer, live, "/register")
    page.select_option("#register-account", str(ids["Bank"]))
    expect(page.locator("#register tbody tr[data-entry]")).to_have_count(29)  # up to today
    page.fill("#rec-date", "2026-01-10")
    expect(page.locator("#register tbody tr[data-entry]")).to_have_count(11)
    assert f"account={ids['Bank']}" in page.url
    fits(page)


def report_books(live):
    """Coffee this month, dues last month and last year, relative to today."""
    from app.services.ledger import accounts

    first = date.today().replace(day=1)
    last_month = (first - timedelta(days=1)).replace(day=1)
    with live.app.app_context():
        ids = {
            name: accounts.create_account(name, kind)["id"]
            for name, kind in [("Bank", "asset"), ("Dues", "income"), ("Coffee", "expense")]
        }
        for n in range(3):
            on = first.replace(day=n + 1).isoformat()
            record(ids, on, f"Coffee {n + 1}", ("Coffee", 350), ("Bank", -350))
        record(ids, last_month.isoformat(), "Dues, Ann", ("Bank", 2000), ("Dues", -2000))
        last_year = date(first.year - 1, 1, 15).isoformat()
        record(ids, last_year, "Dues, old", ("Bank", 10000), ("Dues", -10000))
        store.commit()
    return first, last_month


def month_end(first):
    return (first.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)


def download(page, selector):
    with page.expect_download() as info:
        page.click(selector)
    return info.value.suggested_filename, Path(info.value.path()).read_text().splitlines()


def test_reports_periods_csv_of_what_is_shown_and_what_a_line_is_made_of(treasurer, live, size):
    first, last_month = report_books(live)
    this_month = f"{first.isoformat()} to {month_end(first).isoformat()}"
    page = sign_in(treasurer, live, "/reports")
    presets = page.locator("#is-presets button")
    expect(presets).to_have_text(
        [
            "This month",
            "Last month",
            "This year",
            "Last year",
            "This financial year",
            "Last financial year",
        ]
    )

    page.click("[data-preset=this-month]")
    expect_text(page, "#income-statement-table caption", rf"^Income and spending, {this_month}$")
    expect_text(page, "#income-statement-table tr.grand", r"Left over\s+-10\.50$")
    expect(page.locator("[data-preset=this-month]")).to_have_attribute("aria-pressed", "true")
    assert page.locator("#bs-as-of").input_value() == month_end(first).isoformat()
    name, rows = download(page, "#is-csv")
    assert name == f"income-and-spending-{this_month.replace(' ', '-')}.csv"
    assert rows[0] == f'"Income and spending, {this_month}"'
    assert "Spending,Coffee,10.50" in rows and rows[-1] == "Left over,,-10.50"
    fits(page)

    # A changed date: the CSV waits for that period to be shown, then is of it.
    page.fill("#is-from", last_month.isoformat())
    expect(page.locator("[data-preset=this-month]")).to_have_attribute("aria-pressed", "false")
    expect_text(page, "#income-statement-table caption", rf"^Income and spending, {last_month}")
    expect_text(page, "#income-statement-table tr.grand", r"Left over\s+9\.50$")
    name, rows = download(page, "#is-csv")
    assert rows[0].startswith(f'"Income and spending, {last_month.isoformat()} to')
    assert rows[-1] == "Left over,,9.50"
    # A period that cannot be shown leaves nothing to download.
    page.fill("#is-to", "2199-12-31")
    page.fill("#is-from", "1800-01-01")
    page.click("#is-form button[type=submit]")
    expect_text(page, "#is-message", r"\w")
    assert page.locator("#is-csv").is_disabled()
    expect(page.locator("#income-statement-table")).to_have_count(0)

    page.click("[data-preset=last-month]")
    expect_text(page, "#income-statement-table tr.grand", r"Left over\s+20\.00$")

    # The financial year from the month it starts in (kept by this browser).
    page.select_option("#fy-start", label="April")
    page.click("[data-preset=this-fy]")
    today = date.today()
    start = date(today.year if today.month >= 4 else today.year - 1, 4, 1)
    fy = f"{start.isoformat()} to {date(start.year + 1, 3, 31).isoformat()}"
    expect_text(page, "#income-statement-table caption", rf"^Income and spending, {fy}$")
    go(page, live, "/reports")
    assert page.locator("#fy-start").input_value() == "4"

    # A line opens what it is made of: the count and the sum, equal to the figure.
    page.click("[data-preset=this-month]")
    expect_text(page, "#income-statement-table tr.grand", r"Left over\s+-10\.50$")
    page.locator("#income-statement-table button.account-line", has_text="Coffee").click()
    expect_text(page, "#lines-title", rf"^Coffee, {this_month}$")
    expect(page.locator("#lines-table tbody tr")).to_have_count(3)
    assert page.locator("#lines-count").inner_text() == "3 transactions"
    assert page.locator("#lines-sum").inner_text() == "10.50"
    expect_text(
        page, "#lines-status", r"^3 transactions, total 10\.50: the figure on the report\.$"
    )
    fits(page)

    # One date format throughout: no day written any other way than YYYY-MM-DD.
    text = page.locator("main").inner_text()
    assert not re.search(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b", text), text
    assert re.search(r"\d{4}-\d{2}-\d{2}", text)


def test_the_statement_stays_in_the_address(treasurer, live, size):
    ids = bank_month(live)
    page = sign_in(treasurer, live, f"/register?account={ids['Bank']}")
    page.fill("#rec-date", "2026-01-20")
    page.fill("#rec-balance", "1,234.56")
    expect(page.locator("#register tbody tr[data-entry]")).to_have_count(21)
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    assert page.locator("#rec-date").input_value() == "2026-01-20"
    assert page.locator("#rec-balance").input_value() == "1234.56"
    expect(page.locator("#register tbody tr[data-entry]")).to_have_count(21)
    fits(page)
