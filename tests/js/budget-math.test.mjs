// Budget arithmetic in the web app: the same exact split as the server (run: node --test tests/js/).
import assert from "node:assert/strict";
import { test } from "node:test";

import { budgetMonths, openingBudget, parseBudgetCents, splitAnnual, sum } from "../../app/web/static/js/budget-math.js";

test("an annual figure splits with floor division, the first r months one more", () => {
  assert.deepEqual(splitAnnual(1205), [101, 101, 101, 101, 101, 100, 100, 100, 100, 100, 100, 100]);
  assert.deepEqual(splitAnnual(-1), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1]);
  assert.deepEqual(splitAnnual(-1205), [-100, -100, -100, -100, -100, -100, -100, -101, -101, -101, -101, -101]);
  assert.deepEqual(splitAnnual(11), [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0]);
  for (const annual of [0, 1, -13, 999_999_999_999_999, -999_999_999_999_999, 120_000]) {
    assert.equal(sum(splitAnnual(annual)), annual);
  }
});

test("budget figures as typed: signed, empty is zero, never rounded", () => {
  assert.equal(parseBudgetCents(""), 0);
  assert.equal(parseBudgetCents("0"), 0);
  assert.equal(parseBudgetCents("0.00"), 0);
  assert.equal(parseBudgetCents("12.05"), 1205);
  assert.equal(parseBudgetCents("-12.05"), -1205);
  assert.equal(parseBudgetCents("1,200"), 120000);
  assert.throws(() => parseBudgetCents("1.234"), /at most two decimal places/);
  assert.throws(() => parseBudgetCents("--5"), /minus sign/);
  assert.throws(() => parseBudgetCents("abc"), /digits/);
});

test("the twelve months of a budget, across a year end and a leap February", () => {
  const months = budgetMonths("2027-07-01");
  assert.equal(months.length, 12);
  assert.deepEqual(months[0], { label: "Jul 2027", from: "2027-07-01", to: "2027-07-31" });
  assert.deepEqual(months[7], { label: "Feb 2028", from: "2028-02-01", to: "2028-02-29" });
  assert.deepEqual(months[11], { label: "Jun 2028", from: "2028-06-01", to: "2028-06-30" });
});

test("the report's spans: this month, its quarter, the year to date, the whole year", async () => {
  const { budgetSpans, spanOf } = await import("../../app/web/static/js/budget-math.js");
  const spans = budgetSpans("2026-01-01", "2026-11-15");
  assert.deepEqual(spans.ytd, { from: "2026-01-01", to: "2026-11-30", label: "Jan 2026 to Nov 2026" });
  assert.deepEqual(spans.month, { from: "2026-11-01", to: "2026-11-30", label: "Nov 2026" });
  assert.deepEqual(spans.quarter, { from: "2026-10-01", to: "2026-12-31", label: "Oct 2026 to Dec 2026" });
  assert.deepEqual(spans.year, { from: "2026-01-01", to: "2026-12-31", label: "Jan 2026 to Dec 2026" });
  assert.equal(spanOf("2026-01-01", "2026-11-30", spans), "ytd");
  assert.equal(spanOf("2026-02-01", "2026-11-30", spans), null);
  // A budget year starting in July: its quarters and year to date follow it.
  const july = budgetSpans("2026-07-01", "2027-02-03");
  assert.deepEqual([july.ytd.from, july.ytd.to], ["2026-07-01", "2027-02-28"]);
  assert.deepEqual([july.quarter.from, july.quarter.to], ["2027-01-01", "2027-03-31"]);
  // Before the budget starts: its first month; after it ends: the whole year.
  const early = budgetSpans("2027-01-01", "2026-11-15");
  assert.deepEqual([early.ytd.from, early.ytd.to], ["2027-01-01", "2027-01-31"]);
  assert.equal(spanOf(early.month.from, early.month.to, early), "ytd");
  const late = budgetSpans("2025-01-01", "2026-11-15");
  assert.deepEqual([late.ytd.from, late.ytd.to], ["2025-01-01", "2025-12-31"]);
});

test("the grid's totals per month and for the year, and the planned surplus", async () => {
  const { gridTotals } = await import("../../app/web/static/js/budget-math.js");
  const months = (first, rest) => [first, ...Array(11).fill(rest)];
  const totals = gridTotals([
    { kind: "income", months: months(600000, 50000) },
    { kind: "income", months: months(0, 1) },
    { kind: "expense", months: months(700000, 40000) },
  ]);
  assert.equal(totals.income.length, 13);
  assert.deepEqual(totals.income.slice(0, 2), [600000, 50001]);
  assert.equal(totals.income[12], 600000 + 11 * 50001);
  assert.equal(totals.expense[12], 700000 + 11 * 40000);
  assert.deepEqual(totals.surplus.slice(0, 2), [-100000, 10001]);
  assert.equal(totals.surplus[12], totals.income[12] - totals.expense[12]);
  assert.deepEqual(gridTotals([]).surplus, Array(13).fill(0));
});

test("the report opens on the budget whose year holds today, not next year's", () => {
  const budget = (id, starts_on, approved = true) => ({ id, starts_on, approved_at: approved ? `${starts_on}T09:00:00Z` : null });
  // As GET /budgets lists them: the newest start first.
  const next = budget(3, "2027-01-01");
  const draftThis = budget(2, "2026-01-01", false);
  const thisYear = budget(1, "2026-01-01");
  const last = budget(0, "2025-01-01");
  const listed = [next, draftThis, thisYear, last];
  // Issue 44: once next year's budget was approved the report opened on it, every actual 0.00.
  assert.equal(openingBudget(listed, "2026-11-29"), thisYear); // approved before the draft of the same year
  assert.equal(openingBudget([next, draftThis, last], "2026-11-29"), draftThis);
  assert.equal(openingBudget(listed, "2026-12-31"), thisYear);
  assert.equal(openingBudget(listed, "2027-01-01"), next);
  // A year starting in July holds the next spring.
  const july = budget(5, "2025-07-01");
  assert.equal(openingBudget([next, july], "2026-06-30"), july);
  // None holds today: the one that ended last, else the one that starts first.
  assert.equal(openingBudget([next, last], "2026-05-01"), last);
  assert.equal(openingBudget([budget(4, "2028-01-01"), next], "2026-05-01"), next);
  assert.equal(openingBudget([], "2026-05-01"), null);
});
