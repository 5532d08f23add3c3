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

from tests.web import test_web_browser as browser_tests
from tests.web.test_web_browser import _expect_text, expect
from tests.web.test_web_views import fits, go, seed, shot, sign_in

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)

browser = browser_tests.browser
live = browser_tests.live

RECEIPT = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8
INVOICE = b"%PDF-1.4\n% an invoice\n%%EOF\n"


def test_attach_a_receipt_download_it_and_the_audit_pack(treasurer, live, size):
    ids = seed(live)
    page = sign_in(treasurer, live)
    rent = page.locator("#transactions tbody tr[data-id]", has_text="Hall rent")
    tx_id = rent.get_attribute("data-id")
    clip = rent.locator("td.receipts button.clip")
    expect(clip).to_have_text("—")
    clip.click()
    panel = page.locator(f"tr.receipts-row[data-receipts-of='{tx_id}']")
    expect(panel.locator(".receipts-list")).to_contain_text("No receipt yet.")
    # The phone's camera is offered straight away; a file can be chosen as well.
    camera = panel.locator(f"#receipt-camera-{tx_id}")
    assert camera.get_attribute("capture") == ""
    assert camera.get_attribute("accept") == "image/*,application/pdf"
    camera.set_input_files({"name": "till receipt.png", "mimeType": "image/png", "buffer": RECEIPT})
    _expect_text(
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
    _expect_text(page, f"tr.receipts-row[data-receipts-of='{tx_id}'] .message", r"^Not attached: ")
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
