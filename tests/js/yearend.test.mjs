// The last financial year-end before today, for the "Close the year" button.
import assert from "node:assert/strict";
import { test } from "node:test";

import { lastYearEnd, storedStart, storeStart } from "../../app/web/static/js/yearend.js";

test("a calendar financial year ended last 31 December", () => {
  assert.equal(lastYearEnd("2026-03-15"), "2025-12-31");
  assert.equal(lastYearEnd("2026-01-01", 1), "2025-12-31");
  assert.equal(lastYearEnd("2026-12-31", 1), "2025-12-31");
});

test("a year starting in July ends on 30 June; in March, on the last day of February", () => {
  assert.equal(lastYearEnd("2026-03-15", 7), "2025-06-30");
  assert.equal(lastYearEnd("2026-07-01", 7), "2026-06-30");
  assert.equal(lastYearEnd("2026-06-30", 7), "2025-06-30");
  assert.equal(lastYearEnd("2024-04-10", 3), "2024-02-29");
  assert.equal(lastYearEnd("2025-02-10", 3), "2024-02-29");
});

test("the start month is kept per browser, a bad value reads as January", () => {
  const store = new Map();
  const storage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) };
  assert.equal(storedStart(storage), 1);
  storeStart(7, storage);
  assert.equal(storedStart(storage), 7);
  store.set("ledger.financialYearStart", "13");
  assert.equal(storedStart(storage), 1);
  const refusing = { getItem: () => { throw new Error("denied"); }, setItem: () => { throw new Error("denied"); } };
  assert.equal(storedStart(refusing), 1);
  storeStart(4, refusing);
});
