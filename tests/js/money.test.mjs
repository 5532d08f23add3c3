// Dollar text → cents: every accepted and refused form (run: node --test tests/js/).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  AmountError,
  centsToInput,
  formatCents,
  parseDollars,
} from "../../app/web/static/js/money.js";

const accepted = [
  ["12", 1200],
  ["0.07", 7],
  ["$1,234.5", 123450],
  ["1,234.56", 123456],
  ["1234.56", 123456],
  ["12.5", 1250],
  ["12.50", 1250],
  ["0.5", 50],
  ["0.10", 10],
  ["007", 700],
  ["  42.01  ", 4201],
  ["$12", 1200],
  ["$ 12.34", 1234],
  ["£5", 500],
  ["€1,000", 100000],
  ["1,000,000.00", 100000000],
  ["999,999,999,999.99", 99999999999999],
  ["9999999999999.99", 999999999999999],
  ["0.01", 1],
  ["19.99", 1999],
  ["0.29", 29],
  ["1.10", 110],
  ["4.35", 435],
];

for (const [text, cents] of accepted) {
  test(`accepts ${JSON.stringify(text)} as ${cents} cents`, () => {
    const got = parseDollars(text);
    assert.equal(got, cents);
    assert.ok(Number.isSafeInteger(got));
  });
}

const refused = [
  ["1.234", /at most two decimal places/],
  ["1.230", /at most two decimal places/],
  ["0.001", /at most two decimal places/],
  ["$1,234.567", /at most two decimal places/],
  ["1,23", /Commas may only separate thousands/],
  ["12,5", /Commas may only separate thousands/],
  ["1234,567", /Commas may only separate thousands/],
  ["1,2345", /Commas may only separate thousands/],
  ["1,234,", /Commas may only separate thousands/],
  ["1,,234", /Commas may only separate thousands/],
  ["-5", /without a sign/],
  ["+5", /without a sign/],
  ["$-5", /without a sign/],
  ["\u22125", /without a sign/],
  ["0", /more than zero/],
  ["0.00", /more than zero/],
  ["$0.0", /more than zero/],
  ["", /Enter an amount/],
  ["   ", /Enter an amount/],
  [".5", /digits with up to two decimals/],
  ["5.", /digits with up to two decimals/],
  ["1.2.3", /digits with up to two decimals/],
  ["12 34", /digits with up to two decimals/],
  ["1e3", /digits with up to two decimals/],
  ["0x10", /digits with up to two decimals/],
  ["twelve", /digits with up to two decimals/],
  ["12$", /digits with up to two decimals/],
  ["$$12", /digits with up to two decimals/],
  ["USD 12", /digits with up to two decimals/],
  [",123", /digits with up to two decimals/],
  ["١٢", /digits with up to two decimals/],
  ["12.5\u00a0", null], // a trailing no-break space is trimmed: accepted, checked below
  ["10000000000000.00", /too large/],
  ["99999999999999999", /too large/],
];

for (const [text, message] of refused) {
  if (message === null) continue;
  test(`refuses ${JSON.stringify(text)}`, () => {
    assert.throws(() => parseDollars(text), (err) => {
      assert.ok(err instanceof AmountError, `not an AmountError: ${err}`);
      assert.match(err.message, message);
      return true;
    });
  });
}

test("a trailing no-break space is whitespace, not part of the amount", () => {
  assert.equal(parseDollars("12.5\u00a0"), 1250);
});

test("non-strings are refused as an empty amount", () => {
  for (const value of [undefined, null, 12, 12.5]) {
    assert.throws(() => parseDollars(value), /Enter an amount/);
  }
});

test("decimal amounts that floating point gets wrong come out exact", () => {
  // 1.005 * 100 === 100.49999999999999 and 4.35 * 100 === 434.99999999999994 in floats.
  assert.equal(parseDollars("4.35"), 435);
  assert.equal(parseDollars("1.15"), 115);
  assert.equal(parseDollars("1,005.10"), 100510);
});

test("formatCents shows figures as given, with thousands and two decimals", () => {
  assert.equal(formatCents(0), "0.00");
  assert.equal(formatCents(7), "0.07");
  assert.equal(formatCents(50), "0.50");
  assert.equal(formatCents(1200), "12.00");
  assert.equal(formatCents(123450), "1,234.50");
  assert.equal(formatCents(100000000), "1,000,000.00");
  assert.equal(formatCents(-7), "-0.07");
  assert.equal(formatCents(-123450), "-1,234.50");
  assert.throws(() => formatCents(1.5), TypeError);
  assert.throws(() => formatCents("12"), TypeError);
});

test("centsToInput round-trips through parseDollars", () => {
  for (const cents of [1, 7, 50, 1200, 123450, 99999999999999]) {
    assert.equal(parseDollars(centsToInput(cents)), cents);
  }
});
