// A schedule's rule in words (static/js/schedule-words.js) and the forecast's steps
// (static/js/forecast-chart.js): the four shapes of the Expected page's form, their
// RFC 5545 rules as docs/schedules.md's examples write them, and back.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  addDays, choiceOf, daysBetween, memberLines, ordinal, ruleOf, ruleWords, wordsOf,
} from "../../app/web/static/js/schedule-words.js";
import { forecastRows, forecastSteps } from "../../app/web/static/js/forecast-chart.js";

const SHAPES = [
  [{ repeat: "month", every: 1, day: 1 }, "FREQ=MONTHLY;BYMONTHDAY=1", "every month on the 1st"],
  [{ repeat: "year", day: 31, month: 1 }, "FREQ=YEARLY;BYMONTH=1;BYMONTHDAY=31", "every year on 31 January"],
  [{ repeat: "weekday", nth: -1, weekday: "FR" }, "FREQ=MONTHLY;BYDAY=-1FR", "the last Friday of each month"],
  [{ repeat: "week", every: 2, weekday: "MO" }, "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO", "every two weeks on Monday"],
  [{ repeat: "month", every: 1, day: -1 }, "FREQ=MONTHLY;BYMONTHDAY=-1", "every month on the last day"],
  [{ repeat: "month", every: 3, day: 15 }, "FREQ=MONTHLY;INTERVAL=3;BYMONTHDAY=15", "every three months on the 15th"],
  [{ repeat: "weekday", nth: 2, weekday: "TU" }, "FREQ=MONTHLY;BYDAY=2TU", "the second Tuesday of each month"],
  [{ repeat: "week", every: 1, weekday: "SU" }, "FREQ=WEEKLY;BYDAY=SU", "every week on Sunday"],
];

test("each shape of the form makes its rule and its words, and the rule reads back", () => {
  for (const [choice, rule, words] of SHAPES) {
    assert.equal(ruleOf(choice), rule);
    assert.equal(wordsOf(choice), words);
    assert.deepEqual(choiceOf(rule), choice.repeat === "year" || choice.repeat === "weekday" ? choice : { ...choice });
    assert.equal(ruleWords(rule), words);
  }
  assert.deepEqual(choiceOf("freq=monthly;bymonthday=1"), { repeat: "month", every: 1, day: 1 });
});

test("a choice the form cannot make gives no rule", () => {
  assert.equal(ruleOf({ repeat: "month", every: 1, day: 0 }), null);
  assert.equal(ruleOf({ repeat: "month", every: 13, day: 1 }), null);
  assert.equal(ruleOf({ repeat: "year", day: -1, month: 2 }), null);
  assert.equal(ruleOf({ repeat: "weekday", nth: 5, weekday: "FR" }), null);
  assert.equal(ruleOf({ repeat: "week", every: 1, weekday: "XX" }), null);
  assert.equal(ruleOf({ repeat: "daily" }), null);
  assert.equal(wordsOf({ repeat: "daily" }), "");
});

test("rules the form cannot make are named, never shown as rule text", () => {
  for (const rule of [
    "FREQ=MONTHLY;BYMONTHDAY=1;COUNT=3", "FREQ=DAILY", "FREQ=MONTHLY;BYMONTHDAY=1,15",
    "FREQ=WEEKLY;BYDAY=MO,TH", "FREQ=MONTHLY;BYDAY=-1FR;BYMONTH=3", "FREQ=MONTHLY;FREQ=MONTHLY", "",
  ]) {
    assert.equal(choiceOf(rule), null, rule);
    assert.equal(ruleWords(rule), "a rule set over the API");
  }
});

test("ordinals", () => {
  assert.deepEqual([1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 31].map(ordinal),
    ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "31st"]);
});

test("days around a date, across a month's and a year's end", () => {
  assert.equal(addDays("2026-03-01", -10), "2026-02-19");
  assert.equal(addDays("2028-02-25", 5), "2028-03-01");
  assert.equal(addDays("2026-12-28", 10), "2027-01-07");
  assert.equal(daysBetween("2026-11-29", "2027-02-27"), 90);
  assert.equal(daysBetween("2026-11-29", "2026-11-20"), -9);
});

test("the members' lines: trimmed, blank lines dropped, a name twice kept twice", () => {
  assert.deepEqual(memberLines("  Ann  Smith \n\n Bob\r\nAnn Smith\n   \n"), ["Ann Smith", "Bob", "Ann Smith"]);
  assert.deepEqual(memberLines(""), []);
});

test("the forecast's steps: overdue items counted today, every running balance reached", () => {
  const forecast = {
    account_id: 1, from: "2026-11-29", to: "2027-02-27", balance_cents: 100000,
    items: [
      { due_on: "2026-11-20", schedule_id: 1, name: "Late dues", occurs_on: "2026-11-20", amount_cents: 5000, balance_cents: 105000 },
      { due_on: "2026-12-01", schedule_id: 2, name: "Rent", occurs_on: "2026-12-01", amount_cents: -45000, balance_cents: 60000 },
      { due_on: "2026-12-01", schedule_id: 3, name: "Dues", occurs_on: "2026-12-01", amount_cents: 5000, balance_cents: 65000 },
    ],
    end_balance_cents: 65000, lowest: { on: "2026-12-01", balance_cents: 60000 },
  };
  assert.deepEqual(forecastSteps(forecast), [
    { day: 0, on: "2026-11-29", balance_cents: 100000 },
    { day: 0, on: "2026-11-29", balance_cents: 105000 },
    { day: 2, on: "2026-12-01", balance_cents: 60000 },
    { day: 2, on: "2026-12-01", balance_cents: 65000 },
  ]);
  const rows = forecastRows(forecast);
  assert.equal(rows.length, 4);
  assert.deepEqual(rows[0], { on: "2026-11-29", what: "Balance today", amount_cents: null, balance_cents: 100000 });
  assert.deepEqual(rows[2], { on: "2026-12-01", what: "Rent", amount_cents: -45000, balance_cents: 60000 });
});
