// How a recording of money becomes a transaction (docs/web.md "Money entry rules"):
// always exactly two entries, +cents on
// the debited account and -cents on the credited one.
//   money in:  debit the asset account,       credit the income account
//   money out: debit the expense account,     credit the asset account
//   transfer:  debit the destination account, credit the source account (must differ)

// Which kinds each form field offers (docs/web.md, "Recording"). Money goes out of
// and comes into a liability (a credit card, a loan) like any bank account: a
// card purchase is money out, paid from the card. A transfer moves money between
// what you have, what you owe and the opening balances. A stored transaction that
// fits none of these (an expense moved to another expense, say) is still opened for
// editing, as a transfer whose pickers offer every account (`anyKinds`).
export const MODES = {
  in: { debit: ["asset", "liability"], credit: ["income"] },
  out: { debit: ["expense"], credit: ["asset", "liability"] },
  transfer: { debit: ["asset", "liability", "equity"], credit: ["asset", "liability", "equity"] },
};

export class RecordingError extends Error {}

// form: {mode, occurredOn, description, cents, debitId, creditId, anyKinds?} →
// POST /transactions body.
export function buildTransaction(form, accountsById) {
  const mode = MODES[form.mode];
  if (!mode) throw new RecordingError("Choose money in, money out or transfer.");
  if (!/^\d{4}-\d{2}-\d{2}$/.test(form.occurredOn ?? "")) {
    throw new RecordingError("Choose the date.");
  }
  const description = (form.description ?? "").trim();
  if (!description) throw new RecordingError("Describe the transaction.");
  if (!Number.isSafeInteger(form.cents) || form.cents <= 0) {
    throw new RecordingError("Enter an amount.");
  }
  const debit = accountsById.get(Number(form.debitId));
  const credit = accountsById.get(Number(form.creditId));
  if (!debit || !credit) throw new RecordingError("Choose both accounts.");
  if (debit.id === credit.id) {
    throw new RecordingError("A transfer needs two different accounts.");
  }
  for (const [account, kinds] of [[debit, mode.debit], [credit, mode.credit]]) {
    if (!form.anyKinds && !kinds.includes(account.kind)) {
      throw new RecordingError(`${account.name} is not an account of kind ${kinds.join(" or ")}.`);
    }
  }
  return {
    occurred_on: form.occurredOn,
    description,
    entries: [
      { account_id: debit.id, amount_cents: form.cents },
      { account_id: credit.id, amount_cents: -form.cents },
    ],
  };
}

// A stored transaction → the form that would record it again, or null when it
// is not a two-entry recording (the page then offers delete only).
export function toForm(transaction, accountsById) {
  const entries = transaction.entries ?? [];
  if (entries.length !== 2) return null;
  const [a, b] = entries;
  if (a.amount_cents !== -b.amount_cents || a.amount_cents === 0) return null;
  const [debitEntry, creditEntry] = a.amount_cents > 0 ? [a, b] : [b, a];
  const debit = accountsById.get(debitEntry.account_id);
  const credit = accountsById.get(creditEntry.account_id);
  if (!debit || !credit) return null;
  const fits = (mode) => MODES[mode].debit.includes(debit.kind) && MODES[mode].credit.includes(credit.kind);
  const mode = ["in", "out", "transfer"].find(fits) ?? "transfer";
  const values = {
    mode,
    occurredOn: transaction.occurred_on,
    description: transaction.description,
    cents: debitEntry.amount_cents,
    debitId: debit.id,
    creditId: credit.id,
  };
  if (!fits(mode)) values.anyKinds = true;
  return values;
}
