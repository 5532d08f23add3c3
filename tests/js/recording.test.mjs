// Two entries per recording, the debit/credit sides (docs/web.md "Money entry rules"), and edit round-trips.
import assert from "node:assert/strict";
import { test } from "node:test";

import { normaliseUserCode, safeNext, signInPath } from "../../app/web/static/js/paths.js";
import { buildTransaction, RecordingError, toForm } from "../../app/web/static/js/recording.js";

const accounts = [
  { id: 1, name: "Bank", kind: "asset" },
  { id: 2, name: "Cash", kind: "asset" },
  { id: 3, name: "Dues", kind: "income" },
  { id: 4, name: "Rent", kind: "expense" },
  { id: 5, name: "Card", kind: "liability" },
];
const byId = new Map(accounts.map((a) => [a.id, a]));
const base = { occurredOn: "2026-11-21", description: " Dues from Ann ", cents: 123450 };

test("money in debits the asset and credits the income", () => {
  const body = buildTransaction({ ...base, mode: "in", debitId: 1, creditId: 3 }, byId);
  assert.deepEqual(body, {
    occurred_on: "2026-11-21",
    description: "Dues from Ann",
    entries: [
      { account_id: 1, amount_cents: 123450 },
      { account_id: 3, amount_cents: -123450 },
    ],
  });
});

test("money out debits the expense and credits the asset", () => {
  const body = buildTransaction({ ...base, cents: 7, mode: "out", debitId: 4, creditId: 2 }, byId);
  assert.deepEqual(body.entries, [
    { account_id: 4, amount_cents: 7 },
    { account_id: 2, amount_cents: -7 },
  ]);
});

test("a transfer debits the destination and credits the source", () => {
  const body = buildTransaction({ ...base, cents: 1200, mode: "transfer", debitId: 2, creditId: 1 }, byId);
  assert.deepEqual(body.entries, [
    { account_id: 2, amount_cents: 1200 },
    { account_id: 1, amount_cents: -1200 },
  ]);
});

test("refusals: same account, wrong kinds, missing fields, bad amounts", () => {
  const cases = [
    [{ ...base, mode: "transfer", debitId: 1, creditId: 1 }, /two different accounts/],
    [{ ...base, mode: "in", debitId: 4, creditId: 3 }, /Rent is not an account of kind asset/],
    [{ ...base, mode: "out", debitId: 4, creditId: 3 }, /Dues is not an account of kind asset/],
    [{ ...base, mode: "in", debitId: 1, creditId: 99 }, /Choose both accounts/],
    [{ ...base, mode: "sideways", debitId: 1, creditId: 3 }, /Choose money in/],
    [{ ...base, description: "  ", mode: "in", debitId: 1, creditId: 3 }, /Describe/],
    [{ ...base, occurredOn: "", mode: "in", debitId: 1, creditId: 3 }, /Choose the date/],
    [{ ...base, cents: 0, mode: "in", debitId: 1, creditId: 3 }, /Enter an amount/],
    [{ ...base, cents: 1.5, mode: "in", debitId: 1, creditId: 3 }, /Enter an amount/],
  ];
  for (const [form, message] of cases) {
    assert.throws(() => buildTransaction(form, byId), (err) => {
      assert.ok(err instanceof RecordingError);
      assert.match(err.message, message);
      return true;
    });
  }
});

test("money goes out of and comes into a liability like any bank account", () => {
  const purchase = buildTransaction({ ...base, cents: 999, mode: "out", debitId: 4, creditId: 5 }, byId);
  assert.deepEqual(purchase.entries, [
    { account_id: 4, amount_cents: 999 },
    { account_id: 5, amount_cents: -999 },
  ]);
  const refund = buildTransaction({ ...base, cents: 500, mode: "in", debitId: 5, creditId: 3 }, byId);
  assert.deepEqual(refund.entries, [
    { account_id: 5, amount_cents: 500 },
    { account_id: 3, amount_cents: -500 },
  ]);
  assert.equal(toForm({ ...purchase, occurred_on: base.occurredOn }, byId).mode, "out");
  // Paying the card off from the bank is a transfer; an expense is not a transfer's side.
  assert.ok(buildTransaction({ ...base, mode: "transfer", debitId: 5, creditId: 1 }, byId));
  assert.throws(() => buildTransaction({ ...base, mode: "transfer", debitId: 4, creditId: 1 }, byId),
    /Rent is not an account of kind asset or liability or equity/);
});

test("an unusual pair opens as a transfer over every account, and saves as it was", () => {
  const moved = { occurred_on: "2026-01-01", description: "reclassify", entries: [
    { account_id: 4, amount_cents: 100 }, { account_id: 3, amount_cents: -100 }] };
  const form = toForm(moved, byId);
  assert.equal(form.mode, "transfer");
  assert.equal(form.anyKinds, true);
  assert.deepEqual(buildTransaction(form, byId).entries, moved.entries);
});

test("toForm recognises each recording and round-trips it", () => {
  for (const [mode, debitId, creditId] of [["in", 1, 3], ["in", 5, 3], ["out", 4, 1], ["out", 4, 5], ["transfer", 2, 1], ["transfer", 5, 1]]) {
    const body = buildTransaction({ ...base, mode, debitId, creditId }, byId);
    const stored = { id: 9, ...body, entries: body.entries.slice().reverse() };
    const form = toForm(stored, byId);
    assert.deepEqual(form, { ...base, description: "Dues from Ann", mode, debitId, creditId });
  }
});

test("toForm declines what is not a two-entry recording", () => {
  const three = { occurred_on: "2026-01-01", description: "split", entries: [
    { account_id: 4, amount_cents: 100 }, { account_id: 4, amount_cents: 100 },
    { account_id: 1, amount_cents: -200 }] };
  assert.equal(toForm(three, byId), null);
  const unknown = { occurred_on: "2026-01-01", description: "x", entries: [
    { account_id: 77, amount_cents: 100 }, { account_id: 1, amount_cents: -100 }] };
  assert.equal(toForm(unknown, byId), null);
});

test("safeNext keeps same-origin paths only", () => {
  const origin = "http://localhost:38080";
  assert.equal(safeNext("/authorize?client_id=x&state=a%20b", origin), "/authorize?client_id=x&state=a%20b");
  assert.equal(safeNext("/device?user_code=ABCD-EFGH", origin), "/device?user_code=ABCD-EFGH");
  for (const bad of ["https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "", null, "device"]) {
    assert.equal(safeNext(bad, origin), "/", String(bad));
  }
  assert.equal(signInPath("/authorize?a=1&b=2"), "/signin?next=%2Fauthorize%3Fa%3D1%26b%3D2");
});

test("user codes normalise like the API does", () => {
  assert.equal(normaliseUserCode("abcd-efgh"), "ABCD-EFGH");
  assert.equal(normaliseUserCode("abcdefgh"), "ABCD-EFGH");
  assert.equal(normaliseUserCode(" ab cd ef gh "), "ABCD-EFGH");
  assert.equal(normaliseUserCode("abc"), "ABC");
});
