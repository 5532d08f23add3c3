// Statement import per line: the other side from how similar descriptions were
// booked before, the bounded searches, the closing balance (static/js/matching.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  closingBalance, confirmDuplicates, likeness, otherSide, references, repeatedLines, sameDescription, searchesFor, searchWord, suggestions, words,
} from "../../app/web/static/js/matching.js";

const BANK = 1;
const GRANTS = 5;
const SUBS = 6;
const PRINTING = 7;
const tx = (description, ...entries) => ({ description, entries: entries.map(([account_id, amount_cents]) => ({ account_id, amount_cents })) });

test("words and the search word leave out numbers and punctuation", () => {
  assert.deepEqual(words("COUNCIL GRANT REF 88231"), ["council", "grant", "ref"]);
  assert.equal(searchWord("COUNCIL GRANT REF 88231"), "council");
  assert.equal(searchWord("Raffle, tickets"), "tickets");
  assert.equal(searchWord("DD 12/03 ab"), null);
  assert.equal(likeness("Council grant 2025", "COUNCIL GRANT REF 88231"), 2 / 3);
  assert.equal(likeness("", "x"), 0);
});

test("the other side: the entry that is not the bank, or the one of the line's sign", () => {
  assert.equal(otherSide(tx("Grant", [BANK, 50000], [GRANTS, -50000]), BANK, 60000), GRANTS);
  // Booked through another bank account: the side with the other side's sign.
  assert.equal(otherSide(tx("Subs", [2, -1200], [SUBS, 1200]), BANK, -1300), SUBS);
  // Split three ways with no bank: no single answer.
  assert.equal(otherSide(tx("Mixed", [2, -300], [SUBS, 100], [PRINTING, 200]), BANK, -300), null);
});

test("a grant and a subscription each get their own other side", () => {
  const lines = [
    { description: "COUNCIL GRANT REF 88231", cents: 118877, error: null },
    { description: "Magazine subscription March", cents: -4500, error: null },
    { description: "Printer ink", cents: -3210, error: null },
    { description: "??", cents: null, error: "The amount is empty." },
  ];
  const booked = [
    tx("Magazine subscription February", [BANK, -4500], [SUBS, 4500]),
    tx("Council grant 2025", [BANK, 100000], [GRANTS, -100000]),
    tx("Magazine subscription January", [BANK, -4500], [PRINTING, 4500]), // older, same likeness
    tx("Printer paper", [BANK, -999], [9, 999]), // account 9 is archived: not usable
  ];
  const found = suggestions(lines, booked, BANK, new Set([GRANTS, SUBS, PRINTING]));
  assert.equal(found.get(0).account_id, GRANTS);
  assert.equal(found.get(1).account_id, SUBS); // the newest of the equally alike
  assert.equal(found.has(2), false);
  assert.equal(found.has(3), false);
  // Only the lines still without one are searched, each word once, at most `max`.
  const more = [...lines, { description: "Printer toner", cents: -100, error: null }, { description: "Hall hire", cents: -100, error: null }];
  assert.deepEqual(searchesFor(more, found, 5), ["printer", "hall"]);
  assert.deepEqual(searchesFor(more, found, 1), ["printer"]);
});

test("the closing balance is the newest line's, whichever way the statement runs", () => {
  const oldestFirst = [
    { occurred_on: "2026-01-05", balance: 100 },
    { occurred_on: "2026-01-31", balance: 250 },
    { occurred_on: "2026-01-31", balance: 300 },
  ];
  assert.deepEqual(closingBalance(oldestFirst), { statement_date: "2026-01-31", closing_balance_cents: 300 });
  assert.deepEqual(closingBalance([...oldestFirst].reverse()), { statement_date: "2026-01-31", closing_balance_cents: 300 });
  assert.deepEqual(closingBalance([{ occurred_on: "2026-02-01", balance: null }]), { statement_date: "2026-02-01", closing_balance_cents: null });
  assert.equal(closingBalance([{ occurred_on: null, balance: 5 }]), null);
});

test("a look-alike is a duplicate only when its description says the same", () => {
  assert.deepEqual(references("SUBS ANN REF 4411-A"), ["4411"]);
  assert.deepEqual(references("ab12cd x9 2025"), ["ab12cd", "2025"]);
  // Another member's subscription: same date and amount, not the same line.
  assert.equal(sameDescription("Subscription Ann Smith", "Subscription Bob Jones"), false);
  assert.equal(sameDescription("Subscription Ann Smith", "Subscription Ann Jones"), false); // half the words alike is not enough
  assert.equal(sameDescription("SUBSCRIPTION ANN SMITH", "Subscription ann  smith"), true);
  // References decide when both carry one.
  assert.equal(sameDescription("Subs Ann REF 4411", "subs Ann ref 4412"), false);
  assert.equal(sameDescription("TRANSFER 99812 JONES", "Jones transfer ref 99812"), true);
  const booked = new Map([[3, { description: "Subscription Bob Jones" }], [4, { description: "Subscription Ann Smith" }]]);
  assert.deepEqual(confirmDuplicates("Subscription Ann Smith", [3, 4, 9], booked), [4, 9]);
  assert.deepEqual(confirmDuplicates("x", undefined, booked), []);
});

test("a line the file holds twice is flagged; two real purchases are not", () => {
  const line = (n, description, balance = null, cents = -350) => ({ line: n, occurred_on: "2026-03-02", description, cents, balance });
  const repeats = repeatedLines([
    line(2, "Coffee shop", 10000),
    line(3, "COFFEE  SHOP", 10000), // the same line again: same balance
    line(4, "Coffee shop", 9650), // a second coffee: the balance moved
    line(5, "Bakery"),
    line(6, "Bakery"), // no balance column: the same date, amount and text
    line(7, "Bakery", null, -351),
    { line: 8, error: "bad date" },
    { line: 9, error: "bad date" },
  ]);
  assert.deepEqual([...repeats], [[1, 2], [4, 5]]);
});
