"""A reconciled transaction in the web app, in headless Chromium at 1280x800 and on a
390x844 phone (tests/web/conftest.py's `size`): Edit
changes only what may change (the date, the amount and the reconciled bank account
locked), the correction stays reconciled, Adjust records the difference the bank really
paid with `adjusts`, and History links the two both ways; the Reports page's audit
pack, left blank, packs the page's period (docs/ledger.md, "Corrections of reconciled
transactions"; docs/export-import-backup.md, "The audit pack")."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import select

from app import store
from app.extensions import db
from app.models import Entry
from tests.web.pages import all_big_enough, fits, go, seed, sign_in
from tests.web.web_support import expect, expect_text

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


def reconcile_bank(live, bank: int) -> None:
    """Every Bank entry up to the hall rent (2026-02-01) cleared and reconciled."""
    from app.services.ledger import reconciliation

    with live.app.app_context():
        rows = db.session.execute(
            select(Entry.id, Entry.amount_cents).where(Entry.account_id == bank)
        ).all()
        reconciliation.set_cleared(bank, [r.id for r in rows], True)
        reconciliation.reconcile(bank, "2026-02-01", sum(r.amount_cents for r in rows), None)
        store.commit()


def bank_entry_of(live, bank: int, description: str) -> tuple[bool, bool]:
    from app.models import Transaction

    with live.app.app_context():
        row = db.session.execute(
            select(Entry.cleared, Entry.reconciled)
            .join(Transaction, Transaction.id == Entry.transaction_id)
            .where(Entry.account_id == bank, Transaction.description == description)
        ).one()
        db.session.rollback()
        return bool(row.cleared), bool(row.reconciled)


def test_edit_and_adjust_a_reconciled_payment_then_pack_the_period(treasurer, live, size):
    ids = seed(live)
    reconcile_bank(live, ids["Bank"])
    page = sign_in(treasurer, live)
    rent = page.locator("#transactions tbody tr[data-id]", has_text="Hall rent")
    original = rent.get_attribute("data-id")
    actions = rent.locator("td.row-actions")
    expect(actions.locator(".badge.reconciled")).to_have_text("reconciled")
    expect(actions.locator(".badge.reconciled")).to_be_visible()  # on a phone's card row too
    expect(actions.get_by_role("button", name="Delete")).to_have_count(0)

    # Edit: only the description and the expense account may change.
    actions.get_by_role("button", name="Edit").click()
    form = page.locator(f"tr[data-edit='{original}'] form.edit-form")
    expect(form.locator(".e-date")).to_be_disabled()
    expect(form.locator(".e-amount")).to_be_disabled()
    expect(form.locator(".e-credit")).to_be_disabled()  # money out: from the bank
    expect(form.locator(".e-debit")).to_be_enabled()
    expect(form).to_contain_text("its date, amount and reconciled account stay")
    fits(page)
    if size == "phone":  # the form's fields and buttons can be tapped (issue 37's sizes)
        all_big_enough(page)
    form.locator(".e-description").fill("Hall rent, February")
    form.locator(".e-debit").select_option(str(ids["Coffee"]))
    form.locator(".e-save").click()
    expect_text(page, "#tx-message", r"^Saved: Hall rent, February, 450\.00\.$")
    rent = page.locator("#transactions tbody tr[data-id]", has_text="Hall rent, February")
    expect(rent.locator(".badge.reconciled")).to_have_count(1)
    expect(rent.locator(".badge.reconciled")).to_be_visible()
    corrected = rent.get_attribute("data-id")
    assert corrected != original
    assert bank_entry_of(live, ids["Bank"], "Hall rent, February") == (True, True)
    fits(page)

    # Adjust: the bank really paid 0.30 more, recorded in February with `adjusts`.
    rent.get_by_role("button", name="Adjust").click()
    adjust = page.locator(f"tr[data-adjust='{corrected}'] form.adjust-form")
    expect(adjust.locator(".a-date")).to_have_value("2026-02-01")
    assert adjust.locator(".a-date").get_attribute("max") == "2026-02-28"
    adjust.locator(".a-amount").fill("0.30")
    fits(page)
    if size == "phone":
        all_big_enough(page)
    adjust.locator(".a-save").click()
    expect_text(page, "#tx-message", r"^Adjusted “Hall rent, February” by 0\.30\.$")
    made = page.locator("#transactions tbody tr[data-id]", has_text="Adjustment: Hall rent")
    expect(made).to_have_count(1)
    adjustment = made.get_attribute("data-id")
    assert bank_entry_of(live, ids["Bank"], "Adjustment: Hall rent, February") == (False, False)

    # History, both ways: the adjustment links to the transaction it adjusts, whose
    # history lists the adjustment.
    go(page, live, f"/history?transaction={adjustment}")
    link = page.locator("#events .event-adjusts a")
    expect(link).to_have_text(f"transaction {corrected}")
    link.click()
    page.wait_for_selector("body[data-ready=true]")
    assert page.url.endswith(f"/history?transaction={corrected}")
    events = page.locator("#events > li")
    expect(events.filter(has_text="Adjustment recorded")).to_have_count(1)
    expect(events.filter(has_text=f"Transaction {adjustment}")).to_have_count(1)
    expect(events.filter(has_text="Transaction corrected")).to_have_count(1)
    fits(page)

    # The audit pack, its dates left blank: the period chosen on the page.
    go(page, live, "/reports")
    page.fill("#is-from", "2026-02-01")
    page.fill("#is-to", "2026-02-28")
    with page.expect_download() as info:
        page.click("#pack-submit")
    with zipfile.ZipFile(io.BytesIO(Path(info.value.path()).read_bytes())) as pack:
        manifest = json.loads(pack.read("manifest.json"))
        journal = pack.read("books.journal").decode()
    assert (manifest["from"], manifest["to"]) == ("2026-02-01", "2026-02-28")
    assert "2026-02-01 Opening balances" in journal
    expect_text(page, "#export-section .message", r"\(2026-02-01 to 2026-02-28\)\.$")
    fits(page)
    assert treasurer.errors == []
