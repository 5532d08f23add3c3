// History's words (pages/history.js), kept apart from the page so node can test them
// (tests/js/history-words.test.mjs):
// - a phrase for every action the service records (its list, ACTIONS in the audit
//   package, is copied to tests/js/audit-actions.json, which a Python test compares
//   with ACTIONS; the node test checks every one has a phrase here);
// - an entry's amount signed as the reports sign it (statement.js signFor, as the
//   Reports page's "what a line is made of"): income positive when it grows,
//   expenses positive, an asset's money in positive and its money out negative.
import { signFor } from "./statement.js";

export const ACTION_WORDS = {
  "transaction.posted": "Transaction recorded",
  "transaction.imported": "Transaction imported",
  "transaction.deleted": "Transaction deleted",
  "account.created": "Account created",
  "account.renamed": "Account renamed",
  "account.archived": "Account archived",
  "account.unarchived": "Account restored",
  "entries.cleared": "Entries cleared",
  "entries.reconciled": "Account reconciled",
  "books.locked": "Lock date set",
  "settings.changed": "Settings changed",
  "books.currency_set": "Currency set",
  "budget.created": "Budget created",
  "budget.changed": "Budget changed",
  "budget.approved": "Budget approved",
  "budget.deleted": "Budget deleted",
  "document.uploaded": "Receipt attached",
  "document.moved": "Receipt moved",
  "document.deleted": "Receipt removed",
  "statement.uploaded": "Bank statement uploaded",
  "statement.deleted": "Bank statement deleted",
  "statement_line.posted": "Bank line posted",
  "statement_line.matched": "Bank line matched",
  "statement_line.ignored": "Bank line ignored",
  "statement_line.undone": "Bank line undone",
  "rule.created": "Filing rule created",
  "rule.changed": "Filing rule changed",
  "rule.deleted": "Filing rule deleted",
  "schedule.created": "Schedule created",
  "schedule.changed": "Schedule changed",
  "schedule.deleted": "Schedule deleted",
  "occurrence.met": "Expected payment met",
  "occurrence.matched": "Expected payment matched",
  "occurrence.skipped": "Expected payment skipped",
  "occurrence.reopened": "Expected payment reopened",
};

// The phrase of an action; one this page does not know yet (a newer server) still
// reads as words: "statement_line.split" → "Statement line split".
export function actionWords(action) {
  if (Object.hasOwn(ACTION_WORDS, action)) return ACTION_WORDS[action];
  const text = String(action ?? "").replace(/[._]+/g, " ").trim();
  return text ? text[0].toUpperCase() + text.slice(1) : "Change";
}

// An entry's stored cents as the reports show them for an account of `kind` (an
// unknown kind: as stored).
export function reportCents(cents, kind) {
  return kind ? signFor(kind) * cents : cents;
}
