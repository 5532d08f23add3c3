"""Receipts in the web app, in headless Chromium at 1280x800 and on a 390x844 phone:
attach a receipt from the books view (the camera input is offered), see the paperclip
count, download it in place, list the postings without a receipt, attach from the
register, and download the audit pack from the reports view (docs/ledger.md,
"Receipts"). Writes docs/screenshot-receipts.png with LEDGER_SCREENSHOTS=docs."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from tests.web.pages import fits, go, seed, shot, sign_in
from tests.web.web_support import expect, expect_text

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


RECEIPT = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8
INVOICE = b"%PDF-1.4\n% an invoice\n%%EOF\n"


def open_receipts(page, description: str, count: str):
    """The Books row of `description`, its paperclip showing `count` ("—": none), opened:
    (the transaction's id, its paperclip, its receipts panel)."""
    row = page.locator("#transactions tbody tr[data-id]", has_text=description)
    tx_id = row.get_attribute("data-id")
    clip = row.locator("td.receipts button.clip")
    expect(clip).to_have_text(count)
    clip.click()
    return tx_id, clip, page.locator(f"tr.receipts-row[data-receipts-of='{tx_id}']")


def test_attach_a_receipt_download_it_and_the_audit_pack(treasurer, live, size):
    ids = seed(live)
    page = sign_in(treasurer, live)
    tx_id, clip, panel = open_receipts(page, "Hall rent", "—")
    expect(panel.locator(".receipts-list")).to_contain_text("No receipt yet.")
    # The phone's camera is offered straight away; a file can be chosen as well.
    camera = panel.locator(f"#receipt-camera-{tx_id}")
    assert camera.get_attribute("capture") == ""
    assert camera.get_attribute("accept") == "image/*,application/pdf"
    camera.set_input_files({"name": "till receipt.png", "mimeType": "image/png", "buffer": RECEIPT})
    expect_text(
        page,
        f"tr.receipts-row[data-receipts-of='{tx_id}'] .message",
        r"^Attached till receipt\.png\.$",
    )
    expect(clip).to_have_text("1")
    fits(page)
    shot(page, "receipts", size)

    # Opened in the page (issue 37); Download saves the same bytes.
    panel.get_by_role("button", name="till receipt.png").click()
    with page.expect_download() as info:
        panel.locator(".receipt-viewer").get_by_role("button", name="Download").click()
    download = info.value
    assert download.suggested_filename == "till receipt.png"
    with Path(download.path()).open("rb") as saved:
        assert saved.read() == RECEIPT

    # A file that is not a receipt is refused in the page; nothing is attached.
    panel.locator(f"#receipt-file-{tx_id}").set_input_files(
        {"name": "page.pdf", "mimeType": "application/pdf", "buffer": b"<html>no</html>"}
    )
    expect_text(page, f"tr.receipts-row[data-receipts-of='{tx_id}'] .message", r"^Not attached: ")
    expect(clip).to_have_text("1")

    # Postings without a receipt: the rent is no longer among them. The filter is part
    # of the search, which a phone folds away until it is opened.
    if page.locator("#tx-search").get_attribute("open") is None:
        page.click("#tx-search > summary")
    page.check("#tx-no-receipt")
    expect(page.locator("#transactions tbody tr[data-id]", has_text="Hall rent")).to_have_count(0)
    page.uncheck("#tx-no-receipt")
    expect(page.locator("#transactions tbody tr[data-id]", has_text="Hall rent")).to_have_count(1)
    fits(page)

    # The register shows the same count, and attaches too.
    go(page, live, f"/register?account={ids['Bank']}")
    row = page.locator("#register tbody tr", has_text="Hall rent")
    register_clip = row.locator("td.receipts button.clip")
    expect(register_clip).to_have_text("1")
    register_clip.click()
    page.locator(f"#receipt-file-{tx_id}").set_input_files(
        {"name": "invoice.pdf", "mimeType": "application/pdf", "buffer": INVOICE}
    )
    expect(register_clip).to_have_text("2")
    fits(page)
    if size == "desktop":
        shot(page, "receipts-register", size)

    # The audit pack from the reports view holds both documents and a manifest.
    go(page, live, "/reports")
    page.fill("#pack-from", "2026-02-01")
    page.fill("#pack-to", "2026-02-28")
    with page.expect_download() as info:
        page.click("#pack-submit")
    with Path(info.value.path()).open("rb") as saved:
        data = saved.read()
    with zipfile.ZipFile(io.BytesIO(data)) as pack:
        names = pack.namelist()
        documents = {n.split("/")[-1].split("-", 1)[1] for n in names if n.startswith("documents/")}
        assert documents == {"till receipt.png", "invoice.pdf"}
        manifest = json.loads(pack.read("manifest.json"))
        assert manifest["from"] == "2026-02-01"
        assert {f["path"] for f in manifest["files"]} == set(names) - {"manifest.json"}
    fits(page)


# An iPhone photo: an ISO BMFF file whose `ftyp` box names the HEIC brand (what the
# server reads from the bytes, docs/ledger.md "Receipts").
PHOTO = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(range(256)) * 4


def test_a_heic_photo_and_a_pdf_from_the_record_form(treasurer, live, size):
    """The record form's receipt field takes a phone's HEIC photo (it says which kinds it
    takes); in the receipts panel the photo is marked HEIC and its name downloads it (no
    browser shows HEIC in the page), a PDF is marked PDF and opens in the page."""
    ids = seed(live)
    page = sign_in(treasurer, live)
    if page.locator("#record-section").get_attribute("open") is None:
        page.click("#record-section > summary")
    field = page.locator("#record-receipt")
    assert field.get_attribute("accept") == "image/*,application/pdf"  # image/heic among them
    expect(page.locator("label", has=field)).to_contain_text("Receipt (photo or file, optional)")
    page.check("input[name=mode][value=out]")
    page.fill("#occurred-on", "2026-02-03")
    page.fill("#description", "Hall keys cut")
    page.fill("#amount", "12.50")
    page.select_option("#credit", label="Bank")
    page.select_option("#debit", label="Rent")
    field.set_input_files({"name": "IMG_0001.HEIC", "mimeType": "image/heic", "buffer": PHOTO})
    page.click("#record-submit")
    expect_text(
        page,
        "#record-message",
        r"^Recorded: Hall keys cut, 12\.50\. Receipt attached: IMG_0001\.HEIC\.$",
    )
    tx_id, clip, panel = open_receipts(page, "Hall keys cut", "1")
    expect(panel.locator("p.hint")).to_have_text("PDF, JPEG, PNG, WebP or HEIC, up to 10 MB.")
    photo = panel.locator("li", has_text="IMG_0001.HEIC")
    expect(photo.locator(".thumb.pdf")).to_have_text("HEIC")
    with page.expect_download() as info:
        photo.get_by_role("button", name="IMG_0001.HEIC").click()
    assert info.value.suggested_filename == "IMG_0001.HEIC"
    assert Path(info.value.path()).read_bytes() == PHOTO
    assert panel.locator(".receipt-viewer").is_hidden()  # downloaded, not shown

    panel.locator(f"#receipt-file-{tx_id}").set_input_files(
        {"name": "keys invoice.pdf", "mimeType": "application/pdf", "buffer": INVOICE}
    )
    expect(clip).to_have_text("2")
    invoice = panel.locator("li", has_text="keys invoice.pdf")
    expect(invoice.locator(".thumb.pdf")).to_have_text("PDF")
    invoice.get_by_role("button", name="keys invoice.pdf").click()
    expect(panel.locator(".receipt-viewer iframe.receipt-pdf")).to_be_visible()
    fits(page)
    assert treasurer.errors == []
    del ids
