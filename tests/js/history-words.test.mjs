// History's words (static/js/history-words.js): a phrase for every action the service
// records, and entries signed as the reports sign them.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { ACTION_WORDS, actionWords, reportCents } from "../../app/web/static/js/history-words.js";

// The service's ACTIONS (app/services/ledger/audit/objects.py), kept equal to it by
// tests/web/test_web_js.py.
const SERVICE_ACTIONS = JSON.parse(readFileSync(new URL("./audit-actions.json", import.meta.url), "utf8"));

test("every action the service records has its phrase, and no other", () => {
  assert.ok(SERVICE_ACTIONS.length >= 26, SERVICE_ACTIONS);
  for (const action of SERVICE_ACTIONS) {
    assert.ok(Object.hasOwn(ACTION_WORDS, action), `no words for ${action}`);
    const words = actionWords(action);
    assert.match(words, /^[A-Z][a-z]+( [a-z]+)+$/, `${action}: ${words}`); // words, not an event name
  }
  assert.deepEqual(Object.keys(ACTION_WORDS).sort(), [...SERVICE_ACTIONS].sort());
  // Issue 44: statement uploads, deletions and rules read as words.
  assert.equal(actionWords("statement.uploaded"), "Bank statement uploaded");
  assert.equal(actionWords("statement.deleted"), "Bank statement deleted");
  assert.equal(actionWords("rule.changed"), "Filing rule changed");
  // One the page does not know yet still reads as words.
  assert.equal(actionWords("statement_line.split"), "Statement line split");
  assert.equal(actionWords(undefined), "Change");
  assert.equal(actionWords("constructor"), "Constructor");
});

test("an entry's amount is signed as the reports sign it", () => {
  // Dues of 20.00 paid into the bank: income grows (positive), the bank grows.
  assert.equal(reportCents(-2000, "income"), 2000);
  assert.equal(reportCents(2000, "asset"), 2000);
  // A hall rent paid: the expense positive, the bank's money out negative.
  assert.equal(reportCents(35000, "expense"), 35000);
  assert.equal(reportCents(-35000, "asset"), -35000);
  // A refund of dues: income shrinks (negative); a card bill's charge: liability grows.
  assert.equal(reportCents(500, "income"), -500);
  assert.equal(reportCents(-1200, "liability"), 1200);
  assert.equal(reportCents(-100000, "equity"), 100000);
  assert.equal(reportCents(-7, undefined), -7); // an account the page does not know: as stored
});
