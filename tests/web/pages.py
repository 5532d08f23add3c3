"""The page checks the browser tests of the sized views share (tests/web/conftest.py's
`size` and `treasurer`): sign in and open a page (`sign_in`, `go`), a club's sample
books (`seed`), nothing wider than the screen (`fits`, `OVERFLOW_JS`), no date broken
across lines (`dates_unbroken`, `BROKEN_DATES_JS`), every control
big enough to tap (`all_big_enough`, issue 37's sizes) and the screenshots (`shot`:
docs/screenshot-*.png with LEDGER_SCREENSHOTS=docs, otherwise build/screenshots/)."""

from __future__ import annotations

import os
from pathlib import Path

from app import store

ROOT = Path(__file__).resolve().parents[2]

# Every visible element's box must lie within the viewport, and the document
# must not scroll sideways. Returns descriptions of the offenders.
OVERFLOW_JS = """() => {
  const width = window.innerWidth;
  const bad = [];
  const doc = document.documentElement.scrollWidth;
  if (doc > width) bad.push(`document scrollWidth ${doc} > ${width}`);
  for (const el of document.body.querySelectorAll("*")) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || style.clip === "rect(0px, 0px, 0px, 0px)") continue;
    if (box.right > width + 0.5 || box.left < -0.5) {
      const cls = typeof el.className === "string" && el.className ? "." + el.className : "";
      const name = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + cls;
      bad.push(`${name} [${Math.round(box.left)}, ${Math.round(box.right)}]`);
    }
  }
  return bad.slice(0, 10);
}"""


def fits(page):
    offenders = page.evaluate(OVERFLOW_JS)
    assert offenders == [], f"{page.url}: wider than the viewport: {offenders}"


# Every date (2026-03-01) in the page's visible text that is laid out on more than one
# line: a phone broke "2026-11-29" at its hyphen (issue 44). Returns descriptions.
BROKEN_DATES_JS = """() => {
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || !el.getClientRects().length) continue;
    for (const m of node.textContent.matchAll(/\\d{4}-\\d\\d-\\d\\d/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const rects = [...range.getClientRects()].filter((r) => r.width > 0);
      if (new Set(rects.map((r) => Math.round(r.top))).size > 1) {
        found.push(`${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}: ${m[0]}`);
      }
    }
  }
  return found.slice(0, 10);
}"""


def dates_unbroken(page):
    broken = page.evaluate(BROKEN_DATES_JS)
    assert broken == [], f"{page.url}: dates broken across lines: {broken}"


def shot(page, name, size):
    """The viewport as docs/screenshot-NAME[-phone].png (or under build/screenshots/)."""
    page.screenshot(path=str(shot_path(name, size)))


def shot_path(name, size) -> Path:
    target = os.environ.get("LEDGER_SCREENSHOTS")
    folder = ROOT / "docs" if target == "docs" else ROOT / "build" / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    suffix = "" if size == "desktop" else "-phone"
    return folder / f"screenshot-{name}{suffix}.png"


def seed(live):
    """Four accounts and 64 transactions (coffees, dues, one rent) through the services."""
    from app.services.ledger import accounts, transactions

    with live.app.app_context():
        ids = {
            name: accounts.create_account(name, kind)["id"]
            for name, kind in [
                ("Bank", "asset"),
                ("Cash", "asset"),
                ("Dues", "income"),
                ("Coffee", "expense"),
                ("Rent", "expense"),
            ]
        }
        for day in range(1, 31):
            on = f"2026-01-{day:02d}"
            transactions.record_transaction(
                on,
                f"Coffee {day}",
                [
                    {"account_id": ids["Coffee"], "amount_cents": 350},
                    {"account_id": ids["Cash"], "amount_cents": -350},
                ],
                created_by=None,
            )
            transactions.record_transaction(
                on,
                f"Dues from member {day}",
                [
                    {"account_id": ids["Bank"], "amount_cents": 2000 + day},
                    {"account_id": ids["Dues"], "amount_cents": -(2000 + day)},
                ],
                created_by=None,
            )
        transactions.record_transaction(
            "2026-02-01",
            "Hall rent",
            [
                {"account_id": ids["Rent"], "amount_cents": 45000},
                {"account_id": ids["Bank"], "amount_cents": -45000},
            ],
            created_by=None,
        )
        store.commit()
    return ids


def sign_in(treasurer, live, path="/"):
    live.add_user()
    page = treasurer.page
    page.goto(live.web + path)
    treasurer.first_sign_in()
    page.wait_for_url(live.web + path)
    page.wait_for_selector("body[data-ready=true]")
    return page


def go(page, live, path):
    page.goto(live.web + path)
    page.wait_for_selector("body[data-ready=true]")


# Every visible control of the page: those smaller than 24x24 CSS px, and the primary
# ones (buttons, fields, pickers, folds, the menu) smaller than 44x44.
CONTROL_SIZES_JS = """() => {
  const small = [];
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
    + (typeof el.className === "string" && el.className ? "." + el.className.split(" ")[0] : "")
    + ` “${(el.textContent || el.value || "").trim().slice(0, 20)}”`;
  const controls = document.querySelectorAll(
    "a[href], button, input:not([type=hidden]), select, textarea, summary, label.button");
  for (const el of controls) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || el.closest(".sr-only")) continue;
    const check = el.matches("input[type=checkbox], input[type=radio], a[href]");
    const need = check ? 24 : 44;
    if (box.width < need - 0.5 || box.height < need - 0.5) {
      small.push(`${name(el)} ${Math.round(box.width)}x${Math.round(box.height)} (needs ${need})`);
    }
  }
  return small;
}"""


def all_big_enough(page):
    small = page.evaluate(CONTROL_SIZES_JS)
    assert small == [], f"{page.url}: controls too small to tap: {small}"


class Clicks:
    """Every tap the treasurer makes goes through here, so a walk counts them (and
    docs/statements.md can say how many a month takes): a click, a file chosen, an
    option picked, a view opened from the header (on a phone: Menu, then the view).
    Typing into a field is counted apart (`typed`)."""

    def __init__(self, page):
        self.page, self.count, self.typed = page, 0, 0

    def click(self, target):
        self.count += 1
        if isinstance(target, str):
            self.page.click(target)
        else:
            target.click()

    def choose_file(self, selector, name, data):
        self.count += 1
        with self.page.expect_file_chooser() as chooser:
            self.page.click(selector)
        chooser.value.set_files(
            {"name": name, "mimeType": "application/octet-stream", "buffer": data}
        )

    def pick(self, select, value):
        self.count += 1
        select.select_option(value)

    def type(self, field, text):
        self.typed += 1
        field.fill(text)

    def view(self, label):
        """Open a view from the header's links (behind Menu on a phone)."""
        toggle = self.page.locator("#menu-toggle")
        if toggle.is_visible():
            self.click(toggle)
        with self.page.expect_navigation():
            self.click(self.page.locator("#nav-views a", has_text=label))
        self.page.wait_for_selector("body[data-ready=true]")


def reconciliations(live, account_id) -> list[tuple[str, int]]:
    """The account's reconciliations as stored: (statement date, closing balance)."""
    from sqlalchemy import select

    from app.extensions import db
    from app.models import Reconciliation

    with live.app.app_context():
        rows = db.session.execute(
            select(Reconciliation.statement_date, Reconciliation.closing_balance_cents)
            .where(Reconciliation.account_id == account_id)
            .order_by(Reconciliation.id)
        ).all()
        db.session.rollback()
    return [(str(day), cents) for day, cents in rows]
