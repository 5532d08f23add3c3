"""The Books, Accounts, History and Year end views as a treasurer meets them (issue 29),
in headless Chromium at 1280x800 and on a 390x844 phone: a correction is one request
(a reconciled or locked original is refused whole), the new-entry form keeps its
date and its typing, accounts read cleanly, History takes its filter from the address
and shows a correction as one line, locked and reconciled rows are marked, the phone
list is compact. Fixtures come from tests/web/conftest.py, helpers from tests/web/pages.py.
"""

from __future__ import annotations

import urllib.parse

import pytest
from sqlalchemy import select

from app import store
from app.extensions import db
from tests.web.pages import fits, go, seed, shot, sign_in
from tests.web.web_support import expect, expect_text

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


def writes_of(page, live) -> list:
    """Every write the page sends to the API from now on: (method, path, JSON body)."""
    seen: list = []

    def record(request):
        if request.url.startswith(live.api) and request.method in ("POST", "PUT", "DELETE"):
            body = request.post_data_json if request.post_data else None
            seen.append((request.method, urllib.parse.urlsplit(request.url).path, body))

    page.on("request", record)
    return seen


def tx_id(live, description) -> int:
    return next(tx["id"] for tx in live.transactions() if tx["description"] == description)


def reconcile_behind_the_page(live, account_id, description, closing_cents):
    """Clear and reconcile one entry of `account_id` as another device would."""
    from app.models import Entry
    from app.services.ledger import reconciliation

    target = tx_id(live, description)
    with live.app.app_context():
        entry = db.session.execute(
            select(Entry.id).where(Entry.transaction_id == target, Entry.account_id == account_id)
        ).scalar_one()
        reconciliation.set_cleared(account_id, [entry], True)
        reconciliation.reconcile(account_id, "2026-02-28", closing_cents, created_by=None)
        store.commit()


def lock_behind_the_page(live, day):
    from app.services.ledger import lock

    with live.app.app_context():
        lock.set_lock({"locked_through": day})
        store.commit()


def open_record_form(page):
    """The entry form folds away on a phone; open it."""
    if page.locator("#record-section").get_attribute("open") is None:
        page.click("#record-section > summary")


def row_of(page, description):
    return page.locator("#transactions tbody tr[data-id]", has_text=description)


def browser_today(page) -> str:
    return page.evaluate(
        "() => { const d = new Date(); const p = (n) => String(n).padStart(2, '0');"
        " return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`; }"
    )


# --- item 1, 3, 9: a correction is one request, in a form of its own ------------------------


def test_an_edit_is_one_request_and_keeps_the_entry_form(treasurer, live, size):
    seed(live)
    page = sign_in(treasurer, live)
    writes = writes_of(page, live)
    original = tx_id(live, "Hall rent")

    # Something half typed in the entry form survives a correction made meanwhile.
    open_record_form(page)
    page.fill("#description", "Half typed")
    page.fill("#amount", "12.34")
    row_of(page, "Hall rent").get_by_role("button", name="Edit").click()
    edit = page.locator(f"tr.editing[data-edit='{original}']")
    expect(edit).to_be_visible()
    assert edit.locator(".e-amount").input_value() == "450.00"
    assert edit.locator(".e-date").input_value() == "2026-02-01"
    edit.locator(".e-amount").fill("450.01")
    shot(page, "books-correction", size)
    edit.locator(".e-save").click()
    expect_text(page, "#tx-message", r"^Saved: Hall rent, 450\.01\.$")

    # One request: the corrected transaction naming the one it replaces; no DELETE.
    assert [(m, p) for m, p, _ in writes] == [("POST", "/transactions")]
    assert writes[0][2]["replaces"] == original
    stored = {tx["description"]: tx for tx in live.transactions()}
    assert len(live.transactions()) == 61
    assert [e["amount_cents"] for e in stored["Hall rent"]["entries"]] == [45001, -45001]
    assert stored["Hall rent"]["id"] != original
    # The entry form: still what was typed, and still today's date (not the edit's).
    assert page.locator("#description").input_value() == "Half typed"
    assert page.locator("#amount").input_value() == "12.34"
    assert page.locator("#occurred-on").input_value() == browser_today(page)
    fits(page)


def test_a_reconciled_or_locked_original_shows_the_refusal_and_records_nothing(
    treasurer, live, size
):
    ids = seed(live)
    page = sign_in(treasurer, live)
    writes = writes_of(page, live)
    before = live.transactions()

    # Reconciled on another device after this page was loaded: the edit is refused whole.
    reconcile_behind_the_page(live, ids["Bank"], "Hall rent", -45000)
    original = tx_id(live, "Hall rent")
    row_of(page, "Hall rent").get_by_role("button", name="Edit").click()
    edit = page.locator(f"tr.editing[data-edit='{original}']")
    edit.locator(".e-amount").fill("61.00")
    edit.locator(".e-save").click()
    expect_text(page, f"#edit-message-{original}", r"^Not saved: .*reconciled")
    assert "by hand" not in edit.inner_text()
    assert live.transactions() == before  # nothing recorded, nothing deleted
    assert edit.locator(".e-amount").input_value() == "61.00"  # the typing stays
    edit.get_by_role("button", name="Cancel").click()

    # Locked meanwhile: the same, naming the lock date.
    lock_behind_the_page(live, "2026-01-31")
    coffee = tx_id(live, "Coffee 30")
    row_of(page, "Coffee 30").get_by_role("button", name="Edit").click()
    edit = page.locator(f"tr.editing[data-edit='{coffee}']")
    edit.locator(".e-amount").fill("3.60")
    edit.locator(".e-save").click()
    expect_text(page, f"#edit-message-{coffee}", r"locked through 2026-01-31")
    assert live.transactions() == before
    assert [m for m, _, _ in writes] == ["POST", "POST"]
    fits(page)


# --- item 2: accounts ----------------------------------------------------------------------


def test_accounts_read_cleanly(treasurer, live, size):
    seed(live)
    from app.services.ledger import accounts

    with live.app.app_context():
        accounts.create_account("Accounts receivable from members", "asset")
        archived = accounts.create_account("Old float", "asset")["id"]
        accounts.update_account(archived, {"archived": True})
        store.commit()
    page = sign_in(treasurer, live, "/accounts")
    page.check("#show-archived")
    expect(page.locator("tr.archived[data-account='Old float']")).to_have_count(1)
    text = page.locator("#account-groups").inner_text()
    assert "null" not in text
    assert page.locator("tr[data-account=Bank] td:first-child").inner_text().strip() == "Bank"
    # Each kind has a readable heading: one line, as wide as its words.
    headings = page.locator("#account-groups h3")
    expect(headings).to_have_count(3)
    for box in headings.evaluate_all(
        "hs => hs.map(h => { const r = h.getBoundingClientRect();"
        " return {w: r.width, h: r.height, text: h.innerText}; })"
    ):
        assert box["w"] > 150 and box["h"] < 40, box
    # No name is cut inside a word: each link is at least as wide as its longest word
    # (on a desktop, the whole name is on one line).
    for name in page.locator("a.account-link").evaluate_all(
        """as => as.map(a => {
          const longest = a.innerText.split(/\\s+/).sort((x, y) => y.length - x.length)[0];
          const probe = document.createElement("span");
          probe.style.whiteSpace = "nowrap";
          probe.textContent = longest;
          a.parentElement.append(probe);
          const word = probe.getBoundingClientRect().width;
          probe.remove();
          return {text: a.innerText, word, width: a.getBoundingClientRect().width,
                  lines: a.getClientRects().length};
        })"""
    ):
        assert name["width"] + 1 >= name["word"], name
        if size == "desktop":
            assert name["lines"] == 1, name
    shot(page, "accounts-kinds", size)
    fits(page)


# --- item 5: History filter, register picker, messages, favicon ------------------------------


def test_history_takes_its_filter_from_the_address_and_shows_a_correction_as_one_line(
    treasurer, live, size
):
    ids = seed(live)
    page = sign_in(treasurer, live)
    original = tx_id(live, "Hall rent")
    status, body = page.evaluate(
        """async ([api, id, bank, rent]) => {
          const r = await fetch(api + "/transactions", {method: "POST", credentials: "include",
            headers: {"Content-Type": "application/json"},
            body: JSON.stringify({occurred_on: "2026-02-01", description: "Hall rent",
              replaces: id, entries: [{account_id: rent, amount_cents: 45001},
                                      {account_id: bank, amount_cents: -45001}]})});
          return [r.status, await r.json()]; }""",
        [live.api, original, ids["Bank"], ids["Rent"]],
    )
    assert status == 201, body

    go(page, live, "/history?action=transaction.deleted")
    events = page.locator("#events > li")
    expect(events).to_have_count(1)
    assert page.locator("#history-action").input_value() == "transaction.deleted"

    go(page, live, "/history")
    newest = events.first
    expect(newest.locator(".event-action")).to_have_text("Transaction corrected")
    expect(newest.locator(".event-what")).to_have_text("2026-02-01 · Hall rent · 450.00 → 450.01")
    assert page.locator("#events > li[data-action='transaction.deleted']").count() == 0
    shot(page, "history-correction", size)
    fits(page)

    # The history of the corrected transaction: the correction, then the first posting.
    newest.locator("a.tx-history").click()
    page.wait_for_selector("body[data-ready=true]")
    expect(events).to_have_count(2)
    expect(events.locator(".event-action")).to_have_text(
        ["Transaction corrected", "Transaction recorded"]
    )
    expect_text(page, "#history-one-title", rf"transaction {body['id']}$")
    fits(page)


def test_messages_clear_after_an_unrelated_action(treasurer, live, size):
    seed(live)
    page = sign_in(treasurer, live)
    open_record_form(page)
    page.check("input[name=mode][value=out]")
    page.fill("#description", "Milk")
    page.fill("#amount", "1.20")
    page.select_option("#credit", label="Cash")
    page.select_option("#debit", label="Coffee")
    page.click("#record-submit")
    expect_text(page, "#record-message", r"^Recorded: Milk, 1\.20\.$")
    page.click("#tx-more")  # something else entirely
    expect(page.locator("#record-message")).to_be_hidden()
    expect(page.locator("#transactions tbody tr[data-id]")).to_have_count(62)
    row_of(page, "Milk").get_by_role("button", name="Delete").click()
    row_of(page, "Milk").get_by_role("button", name="Yes, delete").click()
    expect_text(page, "#tx-message", r"^Deleted “Milk”\.$")
    page.click("#record-submit")  # an empty form: refused in the page
    expect(page.locator("#tx-message")).to_be_hidden()


def test_the_favicon_is_served_on_every_page(treasurer, live, size):
    misses = []
    treasurer.page.on(
        "response",
        lambda r: misses.append(r.url) if r.status >= 400 and "favicon" in r.url else None,
    )
    page = sign_in(treasurer, live)
    answer = page.evaluate(
        "async () => { const r = await fetch('/favicon.ico');"
        " return [r.status, r.headers.get('content-type'), (await r.arrayBuffer()).byteLength]; }"
    )
    assert answer[0] == 200 and answer[1] == "image/x-icon" and answer[2] > 0, answer
    for path in ("/accounts", "/history", "/year-end"):
        go(page, live, path)
    assert misses == []


def test_register_from_the_menu_offers_the_accounts(treasurer, live, size):
    seed(live)
    page = sign_in(treasurer, live)
    if size == "phone":
        page.click("#menu-toggle")
    page.locator("#nav-views").get_by_role("link", name="Register").click()
    page.wait_for_selector("body[data-ready=true]")
    options = page.locator("#register-account option").all_inner_texts()
    assert {"Bank", "Cash", "Dues", "Coffee", "Rent"} <= set(options), options


# --- items 7, 8, 10: the lock at the year end, liabilities, the phone -----------------------


def test_locked_and_reconciled_rows_are_marked_and_the_lock_lives_at_the_year_end(
    treasurer, live, size
):
    ids = seed(live)
    reconcile_behind_the_page(live, ids["Bank"], "Hall rent", -45000)
    page = sign_in(treasurer, live, "/year-end")
    fits(page)
    expect_text(page, "#lock-status", r"^The books are not locked")
    page.select_option("#fy-start", "7")  # a July-June financial year
    expect_text(page, "#close-year", r"^Close the year ending \d{4}-06-30$")
    page.fill("#lock-date", "2026-01-10")
    page.click("#lock-submit")
    expect_text(page, "#lock-status", r"^The books are locked through 2026-01-10\.$")
    shot(page, "year-end", size)
    fits(page)

    go(page, live, "/")
    assert page.locator("#lock-section").count() == 0  # not at the bottom of the books
    expect_text(page, "#lock-line", r"locked through 2026-01-10")
    page.click("#tx-more")
    locked = page.locator("#transactions tbody tr.locked")
    expect(locked).to_have_count(20)  # ten days of coffee and dues
    # No Edit or Delete (both could only fail); the receipts paperclip stays: new
    # evidence may still be attached to a closed period (docs/ledger.md, "Receipts").
    assert locked.locator("td.row-actions button").count() == 0
    assert locked.locator("td.receipts button").count() == 20
    assert locked.first.locator(".badge.locked").inner_text().lower() == "locked"
    rent = row_of(page, "Hall rent")
    expect(rent).to_have_class("reconciled")
    # Reconciled: an Edit limited to what may change and an Adjust, never a Delete
    # (docs/ledger.md, "Corrections of reconciled transactions"; test_web_reconciled.py).
    assert rent.locator("td.row-actions button").all_inner_texts() == ["Edit", "Adjust"]
    open_row = row_of(page, "Coffee 11")
    expect(open_row.get_by_role("button", name="Edit")).to_be_visible()
    shot(page, "books-locked", size)
    fits(page)


def test_money_goes_out_of_a_card_and_pickers_fit_the_kind_of_entry(treasurer, live, size):
    seed(live)
    from app.services.ledger import accounts

    with live.app.app_context():
        card = accounts.create_account("Visa card", "liability")["id"]
        store.commit()
    page = sign_in(treasurer, live)
    open_record_form(page)
    page.check("input[name=mode][value=out]")
    assert "Visa card" in page.locator("#credit option").all_inner_texts()
    assert page.locator("#debit option").all_inner_texts()[1:] == ["Coffee", "Rent"]
    page.check("input[name=mode][value=transfer]")
    offered = set(page.locator("#debit option").all_inner_texts())
    assert {"Bank", "Cash", "Visa card"} <= offered and not offered & {"Coffee", "Dues", "Rent"}
    page.check("input[name=mode][value=in]")
    assert set(page.locator("#credit option").all_inner_texts()[1:]) == {"Dues"}

    page.check("input[name=mode][value=out]")
    page.fill("#description", "Printer paper")
    page.fill("#amount", "23.99")
    page.select_option("#credit", label="Visa card")
    page.select_option("#debit", label="Rent")
    page.click("#record-submit")
    expect_text(page, "#record-message", r"^Recorded: Printer paper, 23\.99\.$")
    stored = next(tx for tx in live.transactions() if tx["description"] == "Printer paper")
    assert [(e["account_id"], e["amount_cents"]) for e in stored["entries"]][1] == (card, -2399)
    # It reads as money out, and opens as money out for a correction.
    row = row_of(page, "Printer paper")
    expect(row.locator(".badge")).to_have_text("Money out")
    row.get_by_role("button", name="Edit").click()
    edit = page.locator("tr.editing")
    assert edit.locator("input[value=out]").is_checked()
    assert edit.locator(".e-credit").input_value() == str(card)
    fits(page)


def test_the_phone_shows_a_compact_header_and_list(treasurer, live, size):
    seed(live)
    page = sign_in(treasurer, live)
    header = page.locator("#nav").bounding_box()
    first = page.locator("#transactions tbody tr[data-id]").first.bounding_box()
    rows = page.locator("#transactions tbody tr[data-id]").evaluate_all(
        "rs => rs.slice(0, 10).map(r => r.getBoundingClientRect().height)"
    )
    if size == "phone":
        assert header["height"] <= 48, header
        assert first["y"] < 420, first  # the first transaction on the first screen
        assert max(rows) <= 80, rows  # one or two short lines, not a 225 px card
        # The menu opens the views and the sign-out.
        expect(page.locator("#nav-views")).to_be_hidden()
        page.click("#menu-toggle")
        expect(page.locator("#nav-views").get_by_role("link", name="Accounts")).to_be_visible()
        expect(page.locator("#sign-out")).to_be_visible()
    else:
        assert header["height"] <= 48, header
        expect(page.locator("#nav-views").get_by_role("link", name="Accounts")).to_be_visible()
        expect(page.locator("#menu-toggle")).to_be_hidden()
    fits(page)
