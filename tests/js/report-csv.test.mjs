// A report's CSV reads as the screen does: its caption with the period, the book
// style's words, the figures exactly as given (static/js/download.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { balanceSheetRows, incomeStatementRows, slug } from "../../app/web/static/js/download.js";
import { words } from "../../app/web/static/js/vocab.js";

const INCOME = {
  from: "2026-01-01", to: "2026-01-31",
  income: [{ account: "Dues", cents: 123450 }], expenses: [{ account: "Rent", cents: 70 }],
  total_income_cents: 123450, total_expenses_cents: 70, net_cents: 123380,
};

test("income statement rows in the screen's words, personal and club", () => {
  assert.deepEqual(incomeStatementRows(INCOME, words("personal")), [
    ["Income and spending, 2026-01-01 to 2026-01-31"],
    ["Section", "Account", "Amount"],
    ["Income", "Dues", "1234.50"], ["Total income", "", "1234.50"],
    ["Spending", "Rent", "0.70"], ["Total spending", "", "0.70"],
    ["Left over", "", "1233.80"],
  ]);
  const club = incomeStatementRows(INCOME, words("club"));
  assert.deepEqual(club[0], ["Income and expenditure, 2026-01-01 to 2026-01-31"]);
  assert.deepEqual(club.at(-1), ["Surplus (deficit)", "", "1233.80"]);
});

test("balance sheet rows name the day", () => {
  const rows = balanceSheetRows({
    as_of: "2026-01-31", assets: [{ account: "Bank", cents: 5 }], liabilities: [], equity: [],
    total_assets_cents: 5, total_liabilities_cents: 0, retained_cents: 5, total_equity_cents: 5,
  }, words("club"));
  assert.deepEqual(rows[0], ["Balance sheet as of 2026-01-31"]);
  assert.deepEqual(rows.at(-1), ["Total funds", "", "0.05"]);
});

test("file names from the screen's words", () => {
  assert.equal(slug("Income and spending"), "income-and-spending");
  assert.equal(slug("Surplus (deficit)"), "surplus-deficit");
});

test("year against year: last year's figure and the difference on every row", () => {
  const compared = {
    ...INCOME,
    income: [{ account: "Dues", cents: 123450, previous_cents: 100000 }],
    expenses: [{ account: "Rent", cents: 70, previous_cents: 100 }],
    previous: { from: "2025-01-01", to: "2025-01-31", total_income_cents: 100000, total_expenses_cents: 100, net_cents: 99900 },
  };
  assert.deepEqual(incomeStatementRows(compared, words("club")), [
    ["Income and expenditure, 2026-01-01 to 2026-01-31, against 2025-01-01 to 2025-01-31"],
    ["Section", "Account", "Amount", "Last year", "Difference"],
    ["Income", "Dues", "1234.50", "1000.00", "234.50"], ["Total income", "", "1234.50", "1000.00", "234.50"],
    ["Expenditure", "Rent", "0.70", "1.00", "-0.30"], ["Total expenditure", "", "0.70", "1.00", "-0.30"],
    ["Surplus (deficit)", "", "1233.80", "999.00", "234.80"],
  ]);
  const sheet = balanceSheetRows({
    as_of: "2026-01-31", assets: [{ account: "Bank", cents: 5, previous_cents: 2 }], liabilities: [], equity: [],
    total_assets_cents: 5, total_liabilities_cents: 0, retained_cents: 5, total_equity_cents: 5,
    previous: { as_of: "2025-01-31", total_assets_cents: 2, total_liabilities_cents: 0, retained_cents: 2, total_equity_cents: 2 },
  }, words("club"));
  assert.deepEqual(sheet[0], ["Balance sheet as of 2026-01-31, against 2025-01-31"]);
  assert.deepEqual(sheet.at(-1), ["Total funds", "", "0.05", "0.02", "0.03"]);
  // Without `previous`, exactly as before.
  assert.equal(incomeStatementRows(INCOME, words("club"))[1].length, 3);
});
