// A reconciled transaction on the Books page (docs/ledger.md, "Corrections of
// reconciled transactions"). Its Edit may change only what the bank statement did not
// see: the description and the account on the side that is not reconciled; the date,
// the amount and the reconciled account stay (lockReconciled). An amount the bank
// really paid differently is an adjustment: a new transaction between the same two
// accounts, dated in the original's month (after the lock date), sent with `adjusts`
// so History links the two both ways (adjustRow).
import { api, orSignIn } from "./api.js";
import { busy, h, say } from "./dom.js";
import { AmountError, formatCents, parseDollars } from "./money.js";

// The days an adjustment of a transaction dated `day` may take: its month, after the
// lock date. {min, max, value} ("YYYY-MM-DD"), or null when the whole month is locked.
export function adjustmentDays(day, locked) {
  const [y, m] = day.split("-").map(Number);
  const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
  const first = `${day.slice(0, 8)}01`;
  const max = `${day.slice(0, 8)}${String(last).padStart(2, "0")}`;
  let min = first;
  if (locked && locked >= max) return null;
  if (locked && locked >= first) {
    const next = new Date(`${locked}T00:00:00Z`);
    next.setUTCDate(next.getUTCDate() + 1);
    min = next.toISOString().slice(0, 10);
  }
  return { min, max, value: day >= min ? day : min };
}

// Lock an edit form's fields to what a reconciled transaction may change: the date,
// the amount, the kind of recording and each picker holding a reconciled account.
// f: books.js's edit fields; values: toForm's; reconciled: Set of account ids.
export function lockReconciled(f, values, reconciled) {
  const fixed = "Reconciled with a bank statement: kept as the statement saw it.";
  for (const el of [f.date, f.amount, ...f.root.querySelectorAll(`input[name="${f.modeName}"]`)]) {
    el.disabled = true;
    el.title = fixed;
  }
  for (const [picker, id] of [[f.debit, values.debitId], [f.credit, values.creditId]]) {
    if (reconciled.has(id)) {
      picker.disabled = true;
      picker.title = fixed;
      picker.classList.add("reconciled-account");
    }
  }
}

// The adjustment form, in a row of its own under the transaction's (as an edit is).
// tx: the listed transaction; values: toForm's; ctx: {locked, accountsById, done(text),
// cancel()}.
export function adjustRow(tx, values, ctx) {
  const days = adjustmentDays(tx.occurred_on, ctx.locked);
  const debit = ctx.accountsById.get(values.debitId);
  const credit = ctx.accountsById.get(values.creditId);
  const radio = (value, label, checked) => h("label", {},
    h("input", { type: "radio", name: `adjust-way-${tx.id}`, value, checked }), " ", label);
  const date = h("input", { type: "date", class: "a-date", required: true, ...days });
  const amount = h("input", { class: "a-amount", inputmode: "decimal", autocomplete: "off", required: true });
  const description = h("input", { class: "a-description", maxlength: 200, required: true,
    value: `Adjustment: ${tx.description}` });
  const message = h("p", { id: `adjust-message-${tx.id}`, role: "alert", hidden: true });
  const save = h("button", { type: "submit", class: "a-save" }, "Record the adjustment");
  const cancel = h("button", { type: "button", class: "secondary a-cancel" }, "Cancel");
  const form = h("form", { class: "adjust-form", novalidate: true, "aria-label": `Adjust “${tx.description}”` },
    h("p", { class: "edit-title" }, `Adjust “${tx.description}” of ${tx.occurred_on} (${formatCents(values.cents)}, reconciled)`),
    h("fieldset", { class: "modes" }, h("legend", {}, "The bank really moved"),
      radio("more", `more than ${formatCents(values.cents)}`, true), radio("less", `less than ${formatCents(values.cents)}`, false)),
    h("div", { class: "grid" },
      h("label", {}, "Difference ", amount), h("label", {}, "Date ", date), h("label", {}, "Description ", description)),
    h("p", { class: "hint" },
      `Recorded as a new transaction between ${credit?.name} and ${debit?.name}, in the original's month; the reconciled one stays as the statement saw it. `,
      h("a", { href: `/history?transaction=${tx.id}` }, "Its history")),
    h("div", { class: "actions" }, save, cancel),
    message);
  cancel.addEventListener("click", () => ctx.cancel());
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    say(message, "");
    busy(save, async () => {
      let cents;
      try {
        cents = parseDollars(amount.value);
        if (!Number.isSafeInteger(cents) || cents <= 0) throw new AmountError("Enter the difference.");
      } catch (err) {
        say(message, err.message || "Enter the difference.", "error", amount);
        return;
      }
      if (!date.value || date.value < days.min || date.value > days.max) {
        say(message, `Choose a date from ${days.min} to ${days.max}.`, "error", date);
        return;
      }
      const text = description.value.trim();
      if (!text) {
        say(message, "Describe the adjustment.", "error", description);
        return;
      }
      const more = form.querySelector(`input[name="adjust-way-${tx.id}"]:checked`).value === "more";
      const sign = more ? 1 : -1;
      const body = {
        occurred_on: date.value,
        description: text,
        adjusts: tx.id,
        entries: [
          { account_id: values.debitId, amount_cents: sign * cents },
          { account_id: values.creditId, amount_cents: -sign * cents },
        ],
      };
      try {
        await orSignIn(api("/transactions", { method: "POST", json: body }));
      } catch (err) {
        say(message, `Not recorded: ${err.message}`);
        return;
      }
      await ctx.done(`Adjusted “${tx.description}” by ${more ? "" : "-"}${formatCents(cents)}.`);
    });
  });
  return h("tr", { class: "editing adjusting", "data-adjust": tx.id }, h("td", { colspan: 7 }, form));
}
