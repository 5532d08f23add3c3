"""Issue 46's web part in headless Chromium, at 1280x800 and on a 390x844 phone, on both
stores (docs/web.md, "Charts", "Year against year", "The annual report"): the Reports
page's three charts and the register's balance line read on every screen (nothing
wider than its box or the screen, no label over another), show a period's figures on
hover, tap and focus, and carry a table of the API's own figures; year against year;
the annual report printed to A4 PDF, read back with pdftotext: at most two pages, its
figures the API's. Screenshots: docs/screenshot-reports-*.png, -register-balance,
-annual-report (with LEDGER_SCREENSHOTS=docs; tests/web/pages.py `shot`)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.support import missing_tool
from tests.web.club_years import seed_club_years
from tests.web.pages import fits, shot_path, sign_in
from tests.web.web_support import expect, expect_text

pytestmark = pytest.mark.slow  # not in the quick loop (README, Test it)

TODAY = "2026-11-29T10:00:00"

# A chart's faults: its box or any of its drawn parts wider than the box (or the
# screen), and any two of its texts (labels, figures, the read-out) overlapping.
CHART_JS = """(box) => {
  const bad = [];
  const outer = box.getBoundingClientRect();
  const inner = box.clientWidth;
  if (box.scrollWidth > inner + 0.5) bad.push(`scrollWidth ${box.scrollWidth} > ${inner}`);
  if (outer.right > window.innerWidth + 0.5) bad.push(`box right ${outer.right} > screen`);
  for (const el of box.querySelectorAll("svg, svg *")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.left < outer.left - 0.5 || r.right > outer.right + 0.5) {
      const what = `${el.tagName} ${el.textContent.slice(0, 20)}`;
      bad.push(`${what} [${r.left}, ${r.right}] outside [${outer.left}, ${outer.right}]`);
    }
  }
  const texts = [...box.querySelectorAll("text, .chart-readout, .chart-legend .key")]
    .map((el) => ({ t: el.textContent, r: el.getBoundingClientRect() }))
    .filter((x) => x.r.width > 0 && x.t.trim());
  for (let i = 0; i < texts.length; i += 1) {
    for (let j = i + 1; j < texts.length; j += 1) {
      const a = texts[i].r, b = texts[j].r;
      const across = a.left < b.right - 0.5 && b.left < a.right - 0.5;
      if (across && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) {
        bad.push(`"${texts[i].t}" overlaps "${texts[j].t}"`);
      }
    }
  }
  return { bad: bad.slice(0, 10), texts: texts.length };
}"""


def money(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole:,}.{part:02d}"


def chart_reads(page, selector):
    """The chart in `selector` fits its box and the screen, and no text overlaps another."""
    result = page.locator(selector).evaluate(CHART_JS)
    assert result["texts"] >= 3, result
    assert result["bad"] == [], f"{selector}: {result['bad']}"


def element_shot(locator, name, size):
    """One chart (with its table) as docs/screenshot-NAME[-phone].png."""
    locator.screenshot(path=str(shot_path(name, size)))


def api_get(live, page, path):
    """The API's answer, asked with the page's own session (cookie)."""
    return page.evaluate(
        """async (url) => (await fetch(url, {credentials: "include"})).json()""", live.api + path
    )


@pytest.fixture
def club(treasurer, live):
    treasurer.page.clock.set_fixed_time(TODAY)
    ids = seed_club_years(live)
    return treasurer, ids


def test_the_reports_charts_read_on_every_screen(club, live, size):
    treasurer, ids = club
    page = sign_in(treasurer, live, "/reports")
    expect(page.locator("#flow-chart svg .period")).to_have_count(12)
    series = api_get(live, page, "/reports/series?from=2025-12-01&to=2026-11-30")
    assert [p["from"] for p in series["periods"]][:2] == ["2025-12-01", "2026-01-01"]
    # The tables hold the API's figures, period by period.
    rows = page.locator("#flow-figures tbody tr")
    expect(rows).to_have_count(12)
    assert rows.nth(0).locator("th").inner_text() == "December 2025"
    for i in (0, 5, 11):
        cells = rows.nth(i).locator("td").all_inner_texts()
        assert cells == [
            money(series["total_income_cents"][i]),
            money(series["total_expenses_cents"][i]),
            money(series["net_cents"][i]),
        ]
    worth = page.locator("#worth-figures tbody tr td").all_inner_texts()
    assert worth == [money(c) for c in series["net_worth_cents"]]
    # Spending by account: largest first, the smallest gathered as "Other".
    spent = {a["name"]: sum(a["cents"]) for a in series["accounts"] if a["kind"] == "expense"}
    ranked = sorted((c, n) for n, c in spent.items() if c)[::-1]
    shares = page.locator("#spend-figures tbody tr")
    expect(shares).to_have_count(8)  # six accounts, Other, Total
    assert shares.nth(0).locator("th").inner_text() == ranked[0][1]
    assert shares.nth(0).locator("td").inner_text() == money(ranked[0][0])
    other = sum(c for c, _ in ranked[6:])
    assert shares.nth(6).locator("th").inner_text() == f"Other ({len(ranked) - 6} accounts)"
    assert shares.nth(6).locator("td").inner_text() == money(other)
    assert shares.nth(7).locator("td").inner_text() == money(sum(spent.values()))

    # A period's figures on hover, on tap (a click) and on focus.
    readout = page.locator("#flow-chart .chart-readout")
    page.locator("#flow-chart .period").nth(3).hover()
    expect(readout).to_have_text(
        f"March 2026: Income {money(series['total_income_cents'][3])}, "
        f"Expenditure {money(series['total_expenses_cents'][3])}, "
        f"Surplus (deficit) {money(series['net_cents'][3])}"
    )
    page.locator("#worth-chart .period").nth(1).click()
    expect(page.locator("#worth-chart .chart-readout")).to_have_text(
        f"January 2026: Net worth {money(series['net_worth_cents'][1])}"
    )
    page.mouse.move(0, 0)  # (else scrolling to it may put the pointer over another period)
    page.locator("#flow-chart .period").nth(7).focus()
    expect(readout).to_contain_text("July 2026: Income")
    page.locator("#spend-chart .share").nth(1).click()
    expect(page.locator("#spend-chart .chart-readout")).to_have_text(
        f"{ranked[1][1]}: {money(ranked[1][0])}"
    )
    for chart in ("#flow-chart", "#spend-chart", "#worth-chart"):
        chart_reads(page, chart)
    fits(page)
    element_shot(page.locator("#flow"), "reports-flow", size)
    element_shot(page.locator("#spend"), "reports-spending", size)
    element_shot(page.locator("#worth"), "reports-net-worth", size)

    # Per quarter: five periods, the first cut to December.
    page.select_option("#tr-interval", "quarter")
    expect(page.locator("#flow-chart svg .period")).to_have_count(5)
    expect_text(
        page, "#flow-figures tbody tr:first-child th", r"^Q4 2025 \(2025-12-01 to 2025-12-31\)$"
    )
    for chart in ("#flow-chart", "#spend-chart", "#worth-chart"):
        chart_reads(page, chart)
    # Ten years of months: the labels thin out rather than overlap.
    page.fill("#tr-from", "2017-01-01")
    page.select_option("#tr-interval", "month")
    expect(page.locator("#flow-chart svg .period")).to_have_count(119)
    for chart in ("#flow-chart", "#worth-chart"):
        chart_reads(page, chart)
    fits(page)


def test_year_against_year(club, live, size):
    treasurer, ids = club
    page = sign_in(treasurer, live, "/reports")
    page.click("[data-preset=last-year]")
    expect_text(page, "#income-statement-table caption", r"2025-01-01 to 2025-12-31$")
    page.check("#compare-year")
    expect_text(page, "#income-statement-table caption", r"against 2024-01-01 to 2024-12-31$")
    report = api_get(
        live, page, "/reports/income-statement?from=2025-01-01&to=2025-12-31&compare=previous_year"
    )
    total = page.locator("#income-statement-table tr", has_text="Total income").locator("td")
    now, before = report["total_income_cents"], report["previous"]["total_income_cents"]
    assert total.all_inner_texts() == [money(now), money(before), money(now - before)]
    line = page.locator("#income-statement-table tr", has_text="Hall rent").locator("td")
    hall = next(x for x in report["expenses"] if x["account"] == "Hall rent")
    assert line.all_inner_texts()[1:] == [
        money(hall["cents"]),
        money(hall["previous_cents"]),
        money(hall["cents"] - hall["previous_cents"]),
    ]
    expect_text(page, "#balance-sheet-table caption", r"against 2024-12-31$")
    sheet = api_get(live, page, "/reports/balance-sheet?as_of=2025-12-31&compare=previous_year")
    funds = page.locator("#balance-sheet-table tr", has_text="Total funds").locator("td")
    assert funds.all_inner_texts() == [
        money(sheet["total_equity_cents"]),
        money(sheet["previous"]["total_equity_cents"]),
        money(sheet["total_equity_cents"] - sheet["previous"]["total_equity_cents"]),
    ]
    fits(page)
    for table in ("#income-statement-table", "#balance-sheet-table"):
        inside = page.locator(table).evaluate(
            "(t) => t.getBoundingClientRect().right"
            " <= t.closest('.report-row').getBoundingClientRect().right + 0.5"
        )
        assert inside, f"{table} is wider than its box"
    element_shot(page.locator(".report-row").first, "reports-year-against-year", size)
    page.uncheck("#compare-year")
    expect(page.locator("#income-statement-table thead")).to_have_count(0)


def test_the_registers_balance_line(club, live, size):
    treasurer, ids = club
    page = sign_in(treasurer, live, f"/register?account={ids['Bank']}&statement_date=2026-11-29")
    expect(page.locator("#register tbody tr")).to_have_count(50)
    items = api_get(live, page, f"/accounts/{ids['Bank']}/register?to=2026-11-29&limit=50")["items"]
    ends = {}
    for item in items:  # newest first: the first seen of a day is its end
        ends.setdefault(item["occurred_on"], item["balance_cents"])
    days = sorted(ends)
    rows = page.locator("#balance-figures tbody tr")
    expect(rows).to_have_count(len(days))
    assert rows.locator("th").all_inner_texts() == days
    assert rows.locator("td").all_inner_texts() == [money(ends[d]) for d in days]
    page.locator("#balance-chart .period").nth(0).click()
    expect(page.locator("#balance-chart .chart-readout")).to_have_text(
        f"{days[0]}: Balance {money(ends[days[0]])}"
    )
    chart_reads(page, "#balance-chart")
    fits(page)
    element_shot(page.locator("#balance-section"), "register-balance", size)


def figures(line: str) -> list[str]:
    return re.findall(r"-?\d[\d,]*\.\d\d", line)


def line_of(text: str, pattern: str) -> str:
    found = [line for line in text.splitlines() if re.match(pattern, line.strip())]
    assert found, f"no line {pattern!r} in:\n{text}"
    return found[0]


def test_the_annual_report_prints_on_two_a4_pages(club, live, size, tmp_path):
    pdftotext = shutil.which("pdftotext")
    if pdftotext is None:
        missing_tool("pdftotext is not installed (apt-get install poppler-utils)")
    treasurer, ids = club
    page = sign_in(treasurer, live, "/reports")
    assert page.locator("#annual-year").input_value() == "2025"
    page.click("#annual-form button[type=submit]")
    page.wait_for_url(live.web + "/annual-report?year=2025")
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator("#ar-title")).to_have_text("Annual report 2025")
    fits(page)
    element_shot(page.locator("#annual-report"), "annual-report", size)
    if size == "phone":
        return  # the print is the same from any screen: once is enough
    pdf = tmp_path / "annual-report.pdf"
    page.pdf(path=str(pdf), format="A4", print_background=True)
    text = subprocess.run(
        [pdftotext, "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    pages = text.count("\f") or 1
    assert pages <= 2, f"{pages} pages"

    income = api_get(
        live,
        page,
        f"/reports/income-statement?from=2025-01-01&to=2025-12-31&compare=previous_year&budget={ids['budget']}",
    )
    sheet = api_get(live, page, "/reports/balance-sheet?as_of=2025-12-31&compare=previous_year")
    prev = income["previous"]
    assert figures(line_of(text, r"Total income\b")) == [
        money(income["total_income_cents"]),
        money(prev["total_income_cents"]),
        money(income["total_income_budget_cents"]),
        money(income["total_income_cents"] - income["total_income_budget_cents"]),
    ]
    assert figures(line_of(text, r"Total expenditure\b")) == [
        money(income["total_expenses_cents"]),
        money(prev["total_expenses_cents"]),
        money(income["total_expenses_budget_cents"]),
        money(income["total_expenses_budget_cents"] - income["total_expenses_cents"]),
    ]
    assert figures(line_of(text, r"Surplus \(deficit\)"))[:3] == [
        money(income["net_cents"]),
        money(prev["net_cents"]),
        money(income["net_budget_cents"]),
    ]
    assert figures(line_of(text, r"Total assets\b")) == [
        money(sheet["total_assets_cents"]),
        money(sheet["previous"]["total_assets_cents"]),
    ]
    assert figures(line_of(text, r"Total funds\b")) == [
        money(sheet["total_equity_cents"]),
        money(sheet["previous"]["total_equity_cents"]),
    ]
    bank = next(x for x in sheet["assets"] if x["account"] == "Bank")
    bank_line = line_of(text, r"Bank\s+-?[\d,]+\.\d\d\s+\d{4}-\d\d-\d\d")
    assert "2025-12-31" in bank_line  # not the reconciliation of 2026-10-31
    assert figures(bank_line) == [money(bank["cents"]), money(bank["cents"])]
    assert re.search(r"Petty cash\s+[\d,.-]+\s+never", text), "a cash box never reconciled"
    assert "Budget: Budget 2025" in text
    assert text.count("Signature and date") == 2
