// The figures the charts draw (static/js/trends.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  balanceByDay, budgetOfYear, financialYearOf, labelStep, niceTicks, periodNames,
  reconciledThrough, seriesRows, shortAmount, spendingByAccount,
} from "../../app/web/static/js/trends.js";

test("periods are named by month, quarter or year; a cut one also by its dates", () => {
  assert.deepEqual(periodNames({ from: "2026-03-01", to: "2026-03-31" }, "month"), { short: "Mar ’26", long: "March 2026" });
  assert.deepEqual(periodNames({ from: "2028-02-01", to: "2028-02-29" }, "month").long, "February 2028");
  assert.equal(periodNames({ from: "2026-03-10", to: "2026-03-31" }, "month").long, "March 2026 (2026-03-10 to 2026-03-31)");
  assert.deepEqual(periodNames({ from: "2026-04-01", to: "2026-06-30" }, "quarter"), { short: "Q2 ’26", long: "Q2 2026" });
  assert.equal(periodNames({ from: "2025-12-01", to: "2025-12-31" }, "quarter").long, "Q4 2025 (2025-12-01 to 2025-12-31)");
  assert.deepEqual(periodNames({ from: "2026-01-01", to: "2026-12-31" }, "year"), { short: "2026", long: "2026" });
  assert.equal(periodNames({ from: "2026-01-01", to: "2026-11-30" }, "year").long, "2026 (2026-01-01 to 2026-11-30)");
});

const SERIES = {
  interval: "month",
  periods: [{ from: "2026-01-01", to: "2026-01-31" }, { from: "2026-02-01", to: "2026-02-28" }],
  accounts: [
    { account_id: 1, name: "Bank", kind: "asset", cents: [500, 700] },
    { account_id: 2, name: "Dues", kind: "income", cents: [900, 800] },
    ...["Rent", "Tea", "Print", "Post", "Travel", "Fees", "Kit", "Misc"].map((name, i) => ({
      account_id: 10 + i, name, kind: "expense", cents: [1000 - i * 100, 5],
    })),
    { account_id: 30, name: "Idle", kind: "expense", cents: [0, 0] },
  ],
  total_income_cents: [900, 800],
  total_expenses_cents: [5000, 40],
  net_cents: [-4100, 760],
  net_worth_cents: [500, 1200],
};

test("a series' rows carry the API's figures unchanged", () => {
  const rows = seriesRows(SERIES);
  assert.deepEqual(rows.map((r) => [r.long, r.income, r.spending, r.net, r.netWorth]), [
    ["January 2026", 900, 5000, -4100, 500],
    ["February 2026", 800, 40, 760, 1200],
  ]);
});

test("spending by account: largest first, the rest as Other, nothing-spent left out", () => {
  const shares = spendingByAccount(SERIES);
  assert.deepEqual(shares.map((s) => [s.label, s.cents]), [
    ["Rent", 1005], ["Tea", 905], ["Print", 805], ["Post", 705], ["Travel", 605], ["Fees", 505],
    ["Other (2 accounts)", 405 + 305],
  ]);
  assert.deepEqual(shares.at(-1).other, ["Kit", "Misc"]);
  // One account over `keep` is shown as itself, not as "Other (1 accounts)".
  assert.equal(spendingByAccount(SERIES, 7).at(-1).label, "Misc");
  const total = spendingByAccount(SERIES).reduce((sum, s) => sum + s.cents, 0);
  assert.equal(total, SERIES.accounts.filter((a) => a.kind === "expense").reduce((sum, a) => sum + a.cents[0] + a.cents[1], 0));
});

test("the register's balance at each day's end, oldest day first", () => {
  const items = [
    { occurred_on: "2026-03-02", balance_cents: 700 },
    { occurred_on: "2026-03-02", balance_cents: 650 },
    { occurred_on: "2026-03-01", balance_cents: 600 },
  ];
  assert.deepEqual(balanceByDay(items), [
    { short: "03-01", long: "2026-03-01", cents: 600 },
    { short: "03-02", long: "2026-03-02", cents: 700 },
  ]);
});

test("labels thin out until they cannot touch; ticks are round", () => {
  assert.equal(labelStep(12, 80, 50), 1);
  assert.equal(labelStep(12, 25, 50), 3);
  assert.equal(labelStep(1, 5, 50), 1);
  assert.deepEqual(niceTicks([120000, -30000]), { lo: -50000, hi: 150000, ticks: [-50000, 0, 50000, 100000, 150000] });
  assert.deepEqual(niceTicks([0]).ticks[0], 0);
  assert.equal(shortAmount(150000), "1.5k");
  assert.equal(shortAmount(-300000000), "-3M");
  assert.equal(shortAmount(5000), "50");
});

test("the financial year, its budget and its last reconciliations", () => {
  assert.deepEqual(financialYearOf(2025), { from: "2025-01-01", to: "2025-12-31", name: "2025" });
  assert.deepEqual(financialYearOf(2027, 3), { from: "2027-03-01", to: "2028-02-29", name: "2027/28" });
  const budgets = [
    { id: 1, starts_on: "2025-01-01", ends_on: "2025-12-31", approved_at: "2025-01-05T10:00:00Z" },
    { id: 2, starts_on: "2025-01-01", ends_on: "2025-12-31", approved_at: "2025-06-01T10:00:00Z" },
    { id: 3, starts_on: "2025-01-01", ends_on: "2025-12-31", approved_at: null },
    { id: 4, starts_on: "2025-02-01", ends_on: "2026-01-31", approved_at: "2025-09-01T10:00:00Z" },
  ];
  assert.equal(budgetOfYear(budgets, "2025-01-01", "2025-12-31").id, 2);
  assert.equal(budgetOfYear(budgets, "2024-01-01", "2024-12-31"), null);
  const event = (account_id, statement_date, closing_balance_cents) => ({
    action: "entries.reconciled", object: { account_id, statement_date, closing_balance_cents },
  });
  const events = [event(1, "2026-01-31", 900), event(1, "2025-12-31", 800), event(2, "2025-06-30", 50), event(1, "2025-11-30", 700)];
  assert.deepEqual(reconciledThrough(events, "2025-12-31"), {
    1: { statement_date: "2025-12-31", closing_balance_cents: 800 },
    2: { statement_date: "2025-06-30", closing_balance_cents: 50 },
  });
});
