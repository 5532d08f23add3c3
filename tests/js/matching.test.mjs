// Statement import per line: the other side from how similar descriptions were
// booked before, the bounded searches, the closing balance (static/js/matching.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  closingBalance, likeness, looksLikeLine, otherSide, possibleDuplicates, references, repeatedLines, sameReference, searchesFor, searchWord, suggestions, words,
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

test("a possible duplicate: the bank account's amount within 3 days, whatever the wording", () => {
  assert.deepEqual(references("SUBS ANN REF 4411-A"), ["4411"]);
  assert.deepEqual(references("ab12cd x9 2025"), ["ab12cd"]); // a year is no reference
  assert.deepEqual(references("Hall rent 2026-03-02"), []);
  // Wording aside, only two different references tell two movements apart.
  assert.equal(sameReference("ST MARYS HALL HIRE", "Hall rent"), true);
  assert.equal(sameReference("Subscription Ann Smith", "Subscription Bob Jones"), true);
  assert.equal(sameReference("Subs Ann REF 4411", "subs Ann ref 4412"), false);
  assert.equal(sameReference("TRANSFER 99812 JONES", "Jones transfer ref 99812"), true);
  assert.equal(sameReference("FEE REF 5521", "Bank charges"), true); // the stored one holds none

  const booked = (id, occurred_on, description, ...entries) => ({ id, occurred_on, ...tx(description, ...entries) });
  const hall = booked(11, "2026-03-04", "Hall rent", [BANK, -35000], [PRINTING, 35000]);
  const fee = booked(10, "2026-03-01", "Bank charges", [BANK, -450], [SUBS, 450]);
  const line = (occurred_on, description, cents) => ({ occurred_on, description, cents });
  // The treasurer's 354.50 twice: other words, another other side, a day or three off.
  assert.equal(looksLikeLine(line("2026-03-02", "ST MARYS PCC 0326", -35000), BANK, hall), true);
  assert.equal(looksLikeLine(line("2026-03-04", "SERVICE CHARGE FEB", -450), String(BANK), fee), true);
  assert.equal(looksLikeLine(line("2026-03-07", "ST MARYS PCC", -35000), BANK, hall), true); // 3 days
  assert.equal(looksLikeLine(line("2026-03-08", "ST MARYS PCC", -35000), BANK, hall), false); // 4 days
  assert.equal(looksLikeLine(line("2026-03-02", "ST MARYS PCC", 35000), BANK, hall), false); // money in, not out
  assert.equal(looksLikeLine(line("2026-03-02", "ST MARYS PCC", -35000), 2, hall), false); // another bank account
  assert.equal(looksLikeLine(line("2026-03-02", "HALL REF 7781", -35000), BANK,
    booked(12, "2026-03-02", "Hall REF 7780", [BANK, -35000], [PRINTING, 35000])), false);
  // The net amount on the bank account counts (a transfer between two entries of it nets).
  assert.equal(looksLikeLine(line("2026-03-02", "x", -35000), BANK,
    booked(13, "2026-03-02", "split", [BANK, -30000], [BANK, -5000], [PRINTING, 35000])), true);
  assert.equal(looksLikeLine(line(null, "x", -35000), BANK, hall), false);

  const books = new Map([hall, fee].map((t) => [t.id, t]));
  assert.deepEqual(possibleDuplicates(line("2026-03-02", "PCC", -35000), BANK, books), [11]);
  // The server's look-alikes not read are kept; those read and refused are not.
  assert.deepEqual(possibleDuplicates(line("2026-03-02", "PCC", -35000), BANK, books, [11, 40, 10]), [11, 40]);
  assert.deepEqual(possibleDuplicates(line("2026-03-02", "PCC", -1), BANK, new Map(), undefined), []);

  // Many transactions around the lines: each line finds those of its own net amount on
  // the bank account, in the books' order (newest first), whichever bank it is asked for.
  const split = booked(13, "2026-03-03", "split", [BANK, -30000], [BANK, -5000], [2, 35000]);
  const busy = new Map([split, hall, fee, booked(14, "2026-03-01", "other", [2, -35000], [BANK, 35000])]
    .map((t) => [t.id, t]));
  assert.deepEqual(possibleDuplicates(line("2026-03-02", "PCC", -35000), BANK, busy), [13, 11]);
  assert.deepEqual(possibleDuplicates(line("2026-03-02", "PCC", 35000), BANK, busy), [14]);
  assert.deepEqual(possibleDuplicates(line("2026-03-02", "PCC", 35000), 2, busy), [13]);
  assert.deepEqual(possibleDuplicates(line("2026-03-02", "PCC", -35000), 2, busy), [14]);
  assert.deepEqual(possibleDuplicates(line("2026-03-02", "PCC", -450), BANK, busy), [10]);
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
