// Reconciling statement-first: the figures the register page shows while the
// person ticks (docs/web.md, "Register"). Pure, so node tests it
// (tests/js/statement.test.mjs).
//
// The register's figures come sign-adjusted (an asset's or an expense's balance as
// it is, a liability's, income's or equity's negated: docs/ledger.md, the register);
// its items' amount_cents are the entries as stored. The difference a statement
// leaves is what POST /accounts/{id}/reconciliations will compute: the closing
// balance minus the sign-adjusted sum of the cleared entries up to the date.

const NEGATED = new Set(["liability", "equity", "income"]);

// +1 or -1: how an account's stored amounts turn into its shown balance.
export function signFor(kind) {
  return NEGATED.has(kind) ? -1 : 1;
}

// Is the entry fixed: reconciled, or on or before the lock date (null: no lock)?
export function fixed(item, lockedThrough) {
  return item.reconciled || (lockedThrough !== null && lockedThrough !== undefined && item.occurred_on <= lockedThrough);
}

// The ids to tick for "everything up to this date": not yet cleared and not fixed.
export function toTick(items, lockedThrough) {
  return items.filter((item) => !item.cleared && !fixed(item, lockedThrough)).map((item) => item.entry_id);
}

// A line on the statement missing from the books, as the register records it (issue
// 37): `cents` as the statement moves this account's shown balance (+ in, - out),
// turned into the stored entries (a liability's shown balance is its negation), the
// other side taking the opposite. → the POST /transactions body.
export function missingLine({ occurredOn, description, cents, kind, accountId, otherId }) {
  const stored = signFor(kind) * cents;
  return {
    occurred_on: occurredOn,
    description: description.trim(),
    entries: [
      { account_id: Number(accountId), amount_cents: stored },
      { account_id: Number(otherId), amount_cents: -stored },
    ],
  };
}

// The newest reconciliation of one account among audit events (newest first):
// {statement_date, closing_balance_cents} or null.
export function lastReconciliation(events, accountId) {
  const found = events.find((e) => e.action === "entries.reconciled" && e.object?.account_id === accountId);
  return found ? { statement_date: found.object.statement_date, closing_balance_cents: found.object.closing_balance_cents } : null;
}
