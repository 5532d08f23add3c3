// Reconciling statement-first: signs and what "tick everything up to this date"
// ticks (static/js/statement.js; the cleared balance up to a date is the register's
// cleared_through_cents, tests/services/ledger/test_register_cleared_through.py).
import assert from "node:assert/strict";
import { test } from "node:test";

import { fixed, signFor, toTick } from "../../app/web/static/js/statement.js";

const item = (entry_id, occurred_on, amount_cents, cleared = false, reconciled = false) => ({ entry_id, occurred_on, amount_cents, cleared, reconciled });

test("signs as reports give them", () => {
  assert.deepEqual(["asset", "expense", "liability", "income", "equity"].map(signFor), [1, 1, -1, -1, -1]);
});

test("everything up to the date: only entries not cleared, not reconciled, not locked", () => {
  const items = [
    item(1, "2026-01-02", 100, true, true),
    item(2, "2026-01-03", 200),
    item(3, "2026-01-20", 300, true),
    item(4, "2026-01-25", 400),
  ];
  assert.deepEqual(toTick(items, null), [2, 4]);
  assert.deepEqual(toTick(items, "2026-01-10"), [4]);
  assert.equal(fixed(items[1], "2026-01-03"), true);
  assert.equal(fixed(items[3], undefined), false);
});

test("a missing statement line becomes two entries; the last reconciliation is found", async () => {
  const { missingLine, lastReconciliation } = await import("../../app/web/static/js/statement.js");
  const base = { occurredOn: "2026-11-03", description: " Bank charge ", accountId: 1, otherId: 7 };
  assert.deepEqual(missingLine({ ...base, cents: -450, kind: "asset" }), {
    occurred_on: "2026-11-03",
    description: "Bank charge",
    entries: [{ account_id: 1, amount_cents: -450 }, { account_id: 7, amount_cents: 450 }],
  });
  // A card's statement: a purchase raises what is owed (shown positive, stored as a credit).
  assert.deepEqual(missingLine({ ...base, cents: 450, kind: "liability" }).entries,
    [{ account_id: 1, amount_cents: -450 }, { account_id: 7, amount_cents: 450 }]);
  const events = [
    { action: "entries.reconciled", object: { account_id: 2, statement_date: "2026-10-31", closing_balance_cents: 5 } },
    { action: "transaction.posted", object: {} },
    { action: "entries.reconciled", object: { account_id: 1, statement_date: "2026-09-30", closing_balance_cents: 120050 } },
    { action: "entries.reconciled", object: { account_id: 1, statement_date: "2026-08-31", closing_balance_cents: 1 } },
  ];
  assert.deepEqual(lastReconciliation(events, 1), { statement_date: "2026-09-30", closing_balance_cents: 120050 });
  assert.equal(lastReconciliation(events, 3), null);
});
