// The reports' period presets (static/js/periods.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { periods, presetOf, startMonthOf } from "../../app/web/static/js/periods.js";

test("months and years around a day, across a year's end and a leap February", () => {
  const p = periods("2028-03-15");
  assert.deepEqual(p["this-month"], { from: "2028-03-01", to: "2028-03-31" });
  assert.deepEqual(p["last-month"], { from: "2028-02-01", to: "2028-02-29" });
  assert.deepEqual(p["this-year"], { from: "2028-01-01", to: "2028-12-31" });
  assert.deepEqual(p["last-year"], { from: "2027-01-01", to: "2027-12-31" });
  assert.deepEqual(periods("2026-01-10")["last-month"], { from: "2025-12-01", to: "2025-12-31" });
});

test("the financial year from its first month; January is the calendar year", () => {
  assert.deepEqual(periods("2026-03-15", 4)["this-fy"], { from: "2025-04-01", to: "2026-03-31" });
  assert.deepEqual(periods("2026-04-01", 4)["this-fy"], { from: "2026-04-01", to: "2027-03-31" });
  assert.deepEqual(periods("2026-04-01", 4)["last-fy"], { from: "2025-04-01", to: "2026-03-31" });
  assert.deepEqual(periods("2026-07-01", 7)["this-fy"], { from: "2026-07-01", to: "2027-06-30" });
  assert.deepEqual(periods("2026-05-05", 1)["this-fy"], { from: "2026-01-01", to: "2026-12-31" });
  assert.deepEqual(periods("2026-05-05", 99)["this-fy"], periods("2026-05-05")["this-year"]);
});

test("a period is named by the first preset it matches", () => {
  const p = periods("2026-05-05", 1);
  assert.equal(presetOf("2026-05-01", "2026-05-31", p), "this-month");
  assert.equal(presetOf("2026-01-01", "2026-12-31", p), "this-year");
  assert.equal(presetOf("2026-01-02", "2026-12-31", p), null);
});

test("the settings' financial year start, when they carry one", () => {
  assert.equal(startMonthOf({ book_style: "club" }), null);
  assert.equal(startMonthOf({ financial_year_start: "04-01" }), 4);
  assert.equal(startMonthOf({ financial_year_start: 7 }), 7);
  assert.equal(startMonthOf({ financial_year_start: "13-01" }), null);
});
