// Budget arithmetic in the web app: the same exact split as the server (run: node --test tests/js/).
import assert from "node:assert/strict";
import { test } from "node:test";

import { budgetMonths, parseBudgetCents, splitAnnual, sum } from "../../app/web/static/js/budget-math.js";

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
