"""The Budgets page and the budget report in headless Chromium, at 1280x800 and on a
390x844 phone: create a budget from last year's actuals, fill the grid (an annual
figure split exactly as the server splits it), save, approve, then compare on the
Reports page (table, chart, CSV); no page wider than the screen.

Screenshots: docs/screenshot-budgets*.png with LEDGER_SCREENSHOTS=docs, otherwise
build/screenshots/ (as tests/web/test_web_views.py).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from app import store
from tests.web.pages import OVERFLOW_JS, go, shot, sign_in
from tests.web.web_support import expect_text

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)


def seed(live) -> dict:
    """A club's books: dues last year (the actuals), then January 2027."""
    from app.services.ledger import accounts, transactions

    with live.app.app_context():
        ids = {
            name: accounts.create_account(name, kind)["id"]
            for name, kind in [
                ("Bank", "asset"),
                ("Dues", "income"),
                ("Coffee", "expense"),
                ("Hall rent", "expense"),
            ]
        }

        def post(day, account, cents):
            transactions.record_transaction(
                day,
                "t",
                [
                    {"account_id": ids[account], "amount_cents": cents},
                    {"account_id": ids["Bank"], "amount_cents": -cents},
                ],
                created_by=None,
            )

        post("2026-03-15", "Dues", -2000)
        post("2027-01-10", "Dues", -2500)
        post("2027-01-11", "Hall rent", 900)
        post("2027-01-12", "Coffee", 3000)
        store.commit()
    return ids


# tests/web/pages.py's check (fits), but an element inside a box that scrolls on its own
# (the twelve-month grid) may lie beyond the screen: the box itself must not.
SCROLL_BOX_JS = OVERFLOW_JS.replace(
    "if (box.width === 0 && box.height === 0) continue;",
    "if (box.width === 0 && box.height === 0) continue;\n"
    "    if (el.parentElement && el.parentElement.closest('.grid-box')) continue;",
)


def fits(page):
    offenders = page.evaluate(SCROLL_BOX_JS)
    assert offenders == [], f"{page.url}: wider than the viewport: {offenders}"


def cell(page, account_id, month=None):
    row = f"#budget-grid tr[data-account='{account_id}']"
    if month is None:
        return page.locator(f"{row} input.annual")
    return page.locator(f"{row} td:nth-of-type({month + 1}) input")  # after the Year column


def test_create_fill_approve_and_compare_a_budget(treasurer, live, size):
    ids = seed(live)
    page = sign_in(treasurer, live, "/budgets")
    fits(page)
    page.fill("#budget-name", "Club budget 2027")
    page.fill("#budget-start", "2027-01")
    page.select_option("#budget-based-on", "actuals")
    page.click("#budget-create")
    expect_text(page, "#editor-title", r"^Club budget 2027: 2027-01-01 to 2027-12-31$")
    expect_text(page, "#editor-status", r"^Draft$")
    # Last year's actuals: March 2026's dues in the third month, the year beside it.
    assert cell(page, ids["Dues"], 3).input_value() == "20.00"
    assert cell(page, ids["Dues"]).input_value() == "20.00"

    # An annual figure fills the months, split exactly (100.01 = 5 x 8.34 + 7 x 8.33).
    cell(page, ids["Hall rent"]).fill("100.01")
    cell(page, ids["Hall rent"]).press("Tab")
    assert [cell(page, ids["Hall rent"], m).input_value() for m in (1, 5, 6, 12)] == [
        "8.34",
        "8.34",
        "8.33",
        "8.33",
    ]
    cell(page, ids["Coffee"], 1).fill("40")
    cell(page, ids["Coffee"], 1).press("Tab")
    assert cell(page, ids["Coffee"]).input_value() == "40.00"
    fits(page)  # the grid scrolls inside its box; the page does not
    page.click("#budget-save")
    expect_text(page, "#editor-message", r"^Saved “Club budget 2027”")

    page.click("#budget-approve")  # asks once more: approving is for good
    page.click("#budget-approve")
    expect_text(page, "#editor-status", r"^Approved \d{4}-\d\d-\d\d by alice@example\.com$")
    assert page.locator("#budget-grid input").count() == 0  # plain figures now
    assert page.locator("#budget-save").is_hidden()
    assert page.locator("#editor-name").is_hidden()
    expect_text(page, "#budget-table", r"approved")
    fits(page)
    page.evaluate("document.getElementById('budget-grid-box').scrollLeft = 0")
    page.locator("#budget-editor").scroll_into_view_if_needed()
    page.evaluate("document.getElementById('budget-editor').scrollIntoView()")
    shot(page, "budgets", size)

    with live.app.app_context():
        from app.services.ledger import budgets

        (stored,) = budgets.list_budgets()
        lines = {
            line["account_id"]: line["months"] for line in budgets.get_budget(stored["id"])["lines"]
        }
        store.rollback()
    assert stored["approved_by_email"] == "alice@example.com"
    assert lines[ids["Hall rent"]] == [834] * 5 + [833] * 7
    assert lines[ids["Coffee"]] == [4000] + [0] * 11
    assert lines[ids["Dues"]] == [0, 0, 2000] + [0] * 9

    go(page, live, "/reports")
    table = "#budget-report-table"
    # It opens on the year to date (docs/web.md); the whole year is one press away.
    expect_text(page, "#bva-span", r"^Showing year to date: ")
    page.locator("#bva-spans").get_by_role("button", name="Whole year").click()
    expect_text(page, f"{table} caption", r"^Club budget 2027: 2027-01-01 to 2027-12-31$")
    rent = page.locator(f"{table} tbody tr", has_text="Hall rent").inner_text()
    assert rent.split() == ["Hall", "rent", "100.01", "9.00", "91.01"]
    dues = page.locator(f"{table} tbody tr", has_text="Dues").inner_text()
    assert dues.split() == ["Dues", "20.00", "25.00", "5.00"]
    page.select_option("#bva-account", "Hall rent")
    assert page.locator("#bva-chart svg rect").count() == 24  # budget and actual, 12 months
    fits(page)
    page.evaluate("document.getElementById('budget-section').scrollIntoView()")
    shot(page, "budget-report", size)
    with page.expect_download() as info:
        page.click("#bva-csv")
    rows = Path(info.value.path()).read_text().splitlines()
    assert rows[0] == "section,account,month,budget,actual,variance"
    assert "expenses,Hall rent,2027-01-01 to 2027-12-31,100.01,9.00,91.01" in rows
    assert "expenses,Hall rent,Jan 2027,8.34,9.00,-0.66" in rows
    assert "income,Dues,Mar 2027,20.00,0.00,-20.00" in rows
    assert treasurer.errors == []


def test_the_report_opens_on_this_years_budget_once_next_years_is_approved(treasurer, live, size):
    """Issue 44: with next year's budget approved, the report opened on it, every actual
    0.00; it opens on the budget whose year holds today (docs/web.md)."""
    from app.services.ledger import budgets

    seed(live)
    year = date.today().year
    with live.app.app_context():
        made = {}
        for when in (year, year + 1):
            made[when] = budgets.create_budget(
                {"name": f"Club budget {when}", "starts_on": f"{when}-01-01"}
            )["id"]
            budgets.approve_budget(made[when], "alice@example.com")
        store.commit()
    page = sign_in(treasurer, live, "/reports")
    expect_text(page, "#budget-report-table caption", rf"^Club budget {year}: ")
    assert page.locator("#bva-budget").input_value() == str(made[year])
    expect_text(page, "#bva-span", r"^Showing year to date: ")
    fits(page)
