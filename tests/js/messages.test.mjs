// Refusals as people read them, and report CSVs (static/js/messages.js, download.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { balanceSheetRows, csvField, incomeStatementRows, toCsv } from "../../app/web/static/js/download.js";
import { readableError } from "../../app/web/static/js/messages.js";

test("the API's sentence is shown, capitalised and ended", () => {
  assert.equal(readableError(400, { error: "an account named 'Bank' already exists" }), "An account named 'Bank' already exists.");
  assert.equal(readableError(400, { error: "Wrong email or password." }), "Wrong email or password.");
  assert.equal(readableError(400, { error: "invalid_grant", error_description: "the code expired" }), "The code expired.");
});

test("never raw server text, JSON or empty brackets", () => {
  for (const [status, body] of [
    [400, { error: [] }], [400, { error: "[]" }], [400, { error: "" }], [400, { error: "{}" }],
    [400, { error: "<html><body>Bad Gateway</body></html>" }], [400, null], [400, []],
    [400, { error: "invalid_request" }], [400, { error: "Traceback (most recent call last):" }],
    [400, { error: "x".repeat(400) }],
  ]) {
    const text = readableError(status, body);
    assert.ok(text.length > 10, text);
    assert.doesNotMatch(text, /\[\]|\{\}|<|Traceback|xxxx/, text);
  }
  assert.match(readableError(502, null), /server had a problem \(502\)/);
  assert.match(readableError(0, null), /could not be reached/);
  assert.match(readableError(404, { error: [] }), /no longer exists/);
});

test("CSV fields are quoted when needed and never run as formulas", () => {
  assert.equal(csvField("Raffle, tickets"), '"Raffle, tickets"');
  assert.equal(csvField('say "hi"'), '"say ""hi"""');
  assert.equal(csvField("=HYPERLINK(1)"), "'=HYPERLINK(1)");
  assert.equal(csvField("-12.50"), "-12.50");
  assert.equal(toCsv([["a", "b"], ["1", ""]]), "a,b\r\n1,\r\n");
});

test("report rows carry the figures exactly as given", () => {
  const income = incomeStatementRows({
    income: [{ account: "Dues", cents: 123450 }], expenses: [{ account: "Rent", cents: 70 }],
    total_income_cents: 123450, total_expenses_cents: 70, net_cents: -70,
  });
  assert.deepEqual(income, [
    ["section", "account", "amount"], ["income", "Dues", "1234.50"], ["total income", "", "1234.50"],
    ["expenses", "Rent", "0.70"], ["total expenses", "", "0.70"], ["net", "", "-0.70"],
  ]);
  const sheet = balanceSheetRows({
    assets: [{ account: "Bank", cents: 5 }], liabilities: [], equity: [],
    total_assets_cents: 5, total_liabilities_cents: 0, retained_cents: 5, total_equity_cents: 5,
  });
  assert.deepEqual(sheet.at(-1), ["total equity", "", "0.05"]);
});
