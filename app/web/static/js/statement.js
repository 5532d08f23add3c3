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

// "2026-01-31" → "2026-02-01" (calendar days, in UTC: no time zone moves a day).
export function nextDay(day) {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

// Is the entry fixed: reconciled, or on or before the lock date (null: no lock)?
export function fixed(item, lockedThrough) {
  return item.reconciled || (lockedThrough !== null && lockedThrough !== undefined && item.occurred_on <= lockedThrough);
}

// The sign-adjusted sum of the cleared ones among `items` (register items).
export function clearedSum(items, kind) {
  return signFor(kind) * items.reduce((sum, item) => sum + (item.cleared ? item.amount_cents : 0), 0);
}

// The cleared balance up to the statement date: the account's whole cleared balance
// (sign-adjusted, from the register) less the cleared entries dated after it.
export function clearedThrough(clearedBalance, itemsAfter, kind) {
  return clearedBalance - clearedSum(itemsAfter, kind);
}

// The ids to tick for "everything up to this date": not yet cleared and not fixed.
export function toTick(items, lockedThrough) {
  return items.filter((item) => !item.cleared && !fixed(item, lockedThrough)).map((item) => item.entry_id);
}
