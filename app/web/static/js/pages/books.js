// The books: accounts by kind with balances, recording money, transactions,
// reports, and the club/personal wording switch.
import { api, orSignIn, requireSession } from "../api.js";
import { busy, byId, h, say, today } from "../dom.js";
import { formatCents, parseDollars } from "../money.js";
import { renderNav } from "../nav.js";
import { buildTransaction, MODES, toForm } from "../recording.js";
import { renderBalanceSheet, renderIncomeStatement } from "../reports.js";
import { applyVocab, KINDS, words } from "../vocab.js";
import { mountLock } from "../lock.js";

const state = { style: "personal", accounts: [], byId: new Map(), transactions: [], editing: null };
const form = byId("record-form");
const recordMessage = byId("record-message");

const mode = () => form.querySelector("input[name=mode]:checked").value;

// ---- accounts -------------------------------------------------------------

async function loadAccounts() {
  const [accounts, balances] = await Promise.all([
    orSignIn(api("/accounts")),
    orSignIn(api("/reports/balances")),
  ]);
  state.accounts = accounts;
  state.byId = new Map(accounts.map((a) => [a.id, a]));
  const cents = new Map(balances.map((line) => [line.account, line.cents]));
  const w = words(state.style);
  byId("account-groups").replaceChildren(
    ...KINDS.filter((kind) => accounts.some((a) => a.kind === kind)).map((kind) =>
      h("table", { class: "report accounts", "data-kind": kind },
        h("caption", {}, w.kinds[kind]),
        h("tbody", {}, accounts.filter((a) => a.kind === kind).map((a) =>
          h("tr", { "data-account": a.name },
            h("td", {}, a.name),
            h("td", { class: "num" }, formatCents(cents.get(a.name) ?? 0))))))),
  );
  if (accounts.length === 0) {
    byId("account-groups").append(h("p", { class: "hint" }, "No accounts yet: create the first one below (for example a bank account of kind asset)."));
  }
  fillAccountChoices();
}

function fillKindChoice() {
  const w = words(state.style);
  const select = byId("account-kind");
  const chosen = select.value || "asset";
  select.replaceChildren(...KINDS.map((kind) => h("option", { value: kind }, `${kind} (${w.kinds[kind]})`)));
  select.value = chosen;
}

function accountOptions(kinds, chosen) {
  const w = words(state.style);
  const groups = KINDS.filter((kind) => !kinds || kinds.includes(kind))
    .map((kind) => [kind, state.accounts.filter((a) => a.kind === kind)])
    .filter(([, list]) => list.length > 0)
    .map(([kind, list]) => h("optgroup", { label: w.kinds[kind] },
      list.map((a) => h("option", { value: a.id, selected: a.id === chosen }, a.name))));
  return [h("option", { value: "" }, "Choose…"), ...groups];
}

function fillAccountChoices() {
  const rules = MODES[mode()];
  const w = words(state.style);
  const keep = (id) => Number(byId(id).value) || null;
  byId("debit").replaceChildren(...accountOptions(rules.debit, keep("debit")));
  byId("credit").replaceChildren(...accountOptions(rules.credit, keep("credit")));
  byId("debit-label").textContent = w.to[mode()];
  byId("credit-label").textContent = w.from[mode()];
}

byId("new-account").addEventListener("submit", (event) => {
  event.preventDefault();
  const message = byId("account-message");
  say(message, "");
  busy(byId("account-submit"), async () => {
    try {
      const name = byId("account-name").value.trim();
      if (!name) throw new Error("Give the account a name.");
      const created = await orSignIn(api("/accounts", { method: "POST", json: { name, kind: byId("account-kind").value } }));
      byId("account-name").value = "";
      await loadAccounts();
      say(message, `Created ${created.name}.`, "info");
    } catch (err) {
      say(message, err.message);
    }
  });
});

// ---- recording and editing ------------------------------------------------

function resetForm() {
  state.editing = null;
  byId("description").value = "";
  byId("amount").value = "";
  byId("record-submit").textContent = "Record";
  byId("cancel-edit").hidden = true;
  byId("record-heading").textContent = "Record money";
}

function startEdit(tx) {
  const values = toForm(tx, state.byId);
  state.editing = tx;
  form.querySelector(`input[name=mode][value=${values.mode}]`).checked = true;
  fillAccountChoices();
  byId("occurred-on").value = values.occurredOn;
  byId("description").value = values.description;
  byId("amount").value = formatCents(values.cents);
  byId("debit").value = String(values.debitId);
  byId("credit").value = String(values.creditId);
  byId("record-submit").textContent = "Save changes";
  byId("cancel-edit").hidden = false;
  byId("record-heading").textContent = `Edit “${tx.description}”`;
  say(recordMessage, "Saving records the corrected transaction and then deletes the original.", "info");
  form.scrollIntoView({ block: "start" });
}

form.addEventListener("change", (event) => {
  if (event.target.name === "mode") fillAccountChoices();
});
byId("cancel-edit").addEventListener("click", () => {
  resetForm();
  say(recordMessage, "");
});

form.addEventListener("submit", (event) => {
  event.preventDefault();
  say(recordMessage, "");
  busy(byId("record-submit"), async () => {
    let body;
    try {
      body = buildTransaction({
        mode: mode(),
        occurredOn: byId("occurred-on").value,
        description: byId("description").value,
        cents: parseDollars(byId("amount").value),
        debitId: byId("debit").value,
        creditId: byId("credit").value,
      }, state.byId);
    } catch (err) {
      say(recordMessage, err.message); // refused here: nothing was sent
      byId("amount").focus();
      return;
    }
    const original = state.editing;
    try {
      await orSignIn(api("/transactions", { method: "POST", json: body }));
    } catch (err) {
      say(recordMessage, `Not recorded: ${err.message}`);
      return;
    }
    // No update operation exists: an edit records the replacement first, then
    // deletes the original (SPEC), so a failure can never lose the transaction.
    if (original) {
      try {
        await orSignIn(api(`/transactions/${original.id}`, { method: "DELETE" }));
      } catch (err) {
        say(recordMessage, `The corrected transaction was recorded, but the original could not be deleted (${err.message}). Delete “${original.description}” of ${original.occurred_on} by hand.`);
        resetForm();
        await refresh();
        return;
      }
    }
    const amount = formatCents(body.entries[0].amount_cents);
    resetForm();
    await refresh();
    say(recordMessage, original
      ? `Saved: ${body.description}, ${amount}.`
      : `Recorded: ${body.description}, ${amount}.`, "info");
  });
});

// ---- transactions -----------------------------------------------------------

function describe(tx) {
  const values = toForm(tx, state.byId);
  if (!values) {
    return [
      h("td", {}, tx.entries.map((e) => h("div", {}, `${e.account_name} ${formatCents(e.amount_cents)}`))),
      h("td", { class: "num" }, ""),
    ];
  }
  const from = state.byId.get(values.creditId).name;
  const to = state.byId.get(values.debitId).name;
  return [
    h("td", {}, h("span", { class: "badge" }, words(state.style).modes[values.mode]), ` ${from} → ${to}`),
    h("td", { class: "num" }, formatCents(values.cents)),
  ];
}

function txRow(tx) {
  const actions = h("td", { class: "row-actions" });
  const showButtons = () => {
    const edit = h("button", { type: "button", class: "secondary" }, "Edit");
    edit.addEventListener("click", () => startEdit(tx));
    edit.disabled = !toForm(tx, state.byId);
    const del = h("button", { type: "button", class: "secondary" }, "Delete");
    del.addEventListener("click", () => {
      const yes = h("button", { type: "button", class: "danger" }, "Yes, delete");
      const keep = h("button", { type: "button", class: "secondary" }, "Keep");
      yes.addEventListener("click", () => busy(yes, () => deleteTx(tx)));
      keep.addEventListener("click", showButtons);
      actions.replaceChildren(h("span", { class: "confirm" }, "Delete this transaction?"), yes, keep);
    });
    actions.replaceChildren(edit, del);
  };
  showButtons();
  return h("tr", { "data-id": tx.id },
    h("td", {}, tx.occurred_on), h("td", {}, tx.description), ...describe(tx),
    h("td", { class: "hint" }, tx.created_by_email ?? ""), actions);
}

async function deleteTx(tx) {
  let outcome = [`Deleted “${tx.description}”.`, "info"];
  try {
    await orSignIn(api(`/transactions/${tx.id}`, { method: "DELETE" }));
  } catch (err) {
    outcome = [err.message];
  }
  if (state.editing && state.editing.id === tx.id) resetForm();
  await refresh();
  say(byId("tx-message"), ...outcome);
}

async function loadTransactions() {
  const query = { from: byId("tx-from").value, to: byId("tx-to").value };
  try {
    state.transactions = await orSignIn(api("/transactions", { query }));
  } catch (err) {
    say(byId("tx-message"), err.message);
    return;
  }
  const body = byId("transactions").querySelector("tbody");
  body.replaceChildren(...state.transactions.map(txRow));
  if (state.transactions.length === 0) {
    body.append(h("tr", {}, h("td", { colspan: 6, class: "hint" }, "No transactions in this period.")));
  }
}

byId("tx-filter").addEventListener("submit", (event) => {
  event.preventDefault();
  say(byId("tx-message"), "");
  loadTransactions();
});
byId("tx-clear").addEventListener("click", () => {
  byId("tx-from").value = "";
  byId("tx-to").value = "";
  say(byId("tx-message"), "");
  loadTransactions();
});

// ---- reports --------------------------------------------------------------

async function loadIncomeStatement() {
  say(byId("is-message"), "");
  try {
    const report = await orSignIn(api("/reports/income-statement", {
      query: { from: byId("is-from").value, to: byId("is-to").value },
    }));
    renderIncomeStatement(byId("income-statement"), byId("is-chart"), report, state.style);
  } catch (err) {
    say(byId("is-message"), err.message);
  }
}

async function loadBalanceSheet() {
  say(byId("bs-message"), "");
  try {
    const report = await orSignIn(api("/reports/balance-sheet", { query: { as_of: byId("bs-as-of").value } }));
    renderBalanceSheet(byId("balance-sheet"), byId("bs-chart"), report, state.style);
  } catch (err) {
    say(byId("bs-message"), err.message);
  }
}

byId("is-form").addEventListener("submit", (e) => { e.preventDefault(); loadIncomeStatement(); });
byId("bs-form").addEventListener("submit", (e) => { e.preventDefault(); loadBalanceSheet(); });

// ---- wording --------------------------------------------------------------

function applyStyle(style) {
  state.style = style;
  byId("book-style").value = style;
  document.body.dataset.bookStyle = style;
  applyVocab(document, style);
  fillKindChoice();
}

byId("book-style").addEventListener("change", async (event) => {
  const select = event.currentTarget;
  const previous = state.style;
  select.disabled = true;
  try {
    const settings = await orSignIn(api("/settings", { method: "PUT", json: { book_style: select.value } }));
    applyStyle(settings.book_style);
    await refresh();
  } catch (err) {
    applyStyle(previous);
    say(byId("message"), err.message);
  } finally {
    select.disabled = false;
  }
});

async function refresh() {
  try {
    await loadAccounts();
  } catch (err) {
    say(byId("message"), `Could not load the accounts: ${err.message}`);
  }
  await Promise.all([loadTransactions(), loadIncomeStatement(), loadBalanceSheet()]);
}

async function main() {
  const me = await requireSession();
  renderNav("books", me.email);
  const settings = await orSignIn(api("/settings"));
  const now = today();
  byId("occurred-on").value = now;
  byId("is-from").value = `${now.slice(0, 4)}-01-01`;
  byId("is-to").value = now;
  byId("bs-as-of").value = now;
  applyStyle(settings.book_style);
  await Promise.all([refresh(), mountLock(document.querySelector("main"))]);
  document.body.dataset.ready = "true";
}

main().catch((err) => say(byId("message"), err.message));
