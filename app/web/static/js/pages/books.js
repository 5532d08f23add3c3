// The books: recording money, and the transactions, page by page, with search
// (text, account, amount range, dates). Accounts, registers and reports have
// views of their own.
import { api, orSignIn, requireSession } from "../api.js";
import { busy, byId, h, say, today } from "../dom.js";
import { accountOptions, loadAccounts } from "../ledger.js";
import { formatCents, parseDollars } from "../money.js";
import { renderNav } from "../nav.js";
import { addPage, FilterError, nextRequest, searchQuery, startList } from "../paging.js";
import { buildTransaction, MODES, toForm } from "../recording.js";
import { applyVocab, words } from "../vocab.js";
import { mountLock } from "../lock.js";
import { mountReceiptFilter, moveDocuments, receiptCell, withoutReceipt } from "../documents.js";

const state = { style: "personal", accounts: { list: [], byId: new Map(), open: [] }, list: startList({}), editing: null };
const form = byId("record-form");
const recordMessage = byId("record-message");
const txMessage = byId("tx-message");

const mode = () => form.querySelector("input[name=mode]:checked").value;

// ---- account choices --------------------------------------------------------

function fillAccountChoices() {
  const rules = MODES[mode()];
  const w = words(state.style);
  const keep = (id) => Number(byId(id).value) || null;
  // Archived accounts take no new entries: never offered (an edit of one is refused).
  const open = state.accounts.open;
  byId("debit").replaceChildren(...accountOptions(open, { kinds: rules.debit, chosen: keep("debit"), style: state.style }));
  byId("credit").replaceChildren(...accountOptions(open, { kinds: rules.credit, chosen: keep("credit"), style: state.style }));
  byId("debit-label").textContent = w.to[mode()];
  byId("credit-label").textContent = w.from[mode()];
  const chosen = Number(byId("tx-account").value) || null;
  byId("tx-account").replaceChildren(...accountOptions(state.accounts.list, { chosen, style: state.style, empty: "All accounts" }));
}

async function reloadAccounts() {
  state.accounts = await loadAccounts();
  fillAccountChoices();
  if (state.accounts.open.length === 0) {
    say(recordMessage, "No accounts yet: create them under Accounts first (for example a bank account of kind asset).", "info");
  }
}

// ---- recording and editing ------------------------------------------------

function resetForm() {
  state.editing = null;
  byId("description").value = "";
  byId("amount").value = "";
  byId("record-submit").textContent = "Record";
  byId("cancel-edit").hidden = true;
  byId("record-heading").textContent = "Record money";
}

function editable(tx) {
  const values = toForm(tx, state.accounts.byId);
  if (!values) return null;
  const archived = [values.debitId, values.creditId].some((id) => state.accounts.byId.get(id)?.archived);
  return archived ? null : values;
}

function startEdit(tx) {
  const values = editable(tx);
  if (!values) return;
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
  byId("description").focus({ preventScroll: true });
}

form.addEventListener("change", (event) => {
  if (event.target.name === "mode") fillAccountChoices();
});
byId("cancel-edit").addEventListener("click", () => {
  resetForm();
  say(recordMessage, "");
});

// Which field a refusal in the page is about, so it can be marked and focused.
function fieldOf(message) {
  if (/date/i.test(message)) return byId("occurred-on");
  if (/Describe/.test(message)) return byId("description");
  if (/account/i.test(message)) return byId("debit");
  return byId("amount");
}

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
      }, state.accounts.byId);
    } catch (err) {
      say(recordMessage, err.message, "error", fieldOf(err.message)); // refused here: nothing was sent
      return;
    }
    const original = state.editing;
    let made;
    try {
      made = await orSignIn(api("/transactions", { method: "POST", json: body }));
    } catch (err) {
      say(recordMessage, `Not recorded: ${err.message}`);
      return;
    }
    // No update operation exists: an edit records the replacement first, then
    // deletes the original (SPEC), so a failure can never lose the transaction.
    if (original) {
      try {
        await moveDocuments(original.id, made.id); // its receipts go with the correction
        await orSignIn(api(`/transactions/${original.id}`, { method: "DELETE" }));
      } catch (err) {
        resetForm();
        await reloadList();
        say(recordMessage, `The corrected transaction was recorded, but the original could not be deleted (${err.message}) Delete “${original.description}” of ${original.occurred_on} by hand.`);
        return;
      }
    }
    const amount = formatCents(body.entries[0].amount_cents);
    resetForm();
    await reloadList();
    say(recordMessage, original
      ? `Saved: ${body.description}, ${amount}.`
      : `Recorded: ${body.description}, ${amount}.`, "info");
  });
});

// ---- transactions -----------------------------------------------------------

function describe(tx) {
  const values = toForm(tx, state.accounts.byId);
  if (!values) {
    return [
      h("td", { "data-label": "Accounts" }, h("span", {}, tx.entries.map((e) => h("div", {}, `${e.account_name} ${formatCents(e.amount_cents)}`)))),
      h("td", { class: "num", "data-label": "Amount" }, ""),
    ];
  }
  const from = state.accounts.byId.get(values.creditId).name;
  const to = state.accounts.byId.get(values.debitId).name;
  return [
    h("td", { "data-label": "Accounts" }, h("span", {}, h("span", { class: "badge" }, words(state.style).modes[values.mode]), ` ${from} → ${to}`)),
    h("td", { class: "num", "data-label": "Amount" }, formatCents(values.cents)),
  ];
}

function txRow(tx) {
  const actions = h("td", { class: "row-actions" });
  const showButtons = () => {
    const edit = h("button", { type: "button", class: "secondary" }, "Edit");
    edit.addEventListener("click", () => startEdit(tx));
    edit.disabled = !editable(tx);
    const del = h("button", { type: "button", class: "secondary" }, "Delete");
    del.addEventListener("click", () => {
      const yes = h("button", { type: "button", class: "danger" }, "Yes, delete");
      const keep = h("button", { type: "button", class: "secondary" }, "Keep");
      yes.addEventListener("click", () => busy(yes, () => deleteTx(tx)));
      keep.addEventListener("click", showButtons);
      actions.replaceChildren(h("span", { class: "confirm" }, "Delete this transaction?"), yes, keep);
      yes.focus();
    });
    actions.replaceChildren(edit, del);
  };
  showButtons();
  return h("tr", { "data-id": tx.id },
    h("td", { "data-label": "Date" }, tx.occurred_on),
    h("td", { "data-label": "Description" }, h("span", {}, tx.description)),
    ...describe(tx),
    receiptCell(tx),
    h("td", { class: "hint", "data-label": "By" }, tx.created_by_email ?? ""), actions);
}

async function deleteTx(tx) {
  let outcome = [`Deleted “${tx.description}”.`, "info"];
  try {
    await orSignIn(api(`/transactions/${tx.id}`, { method: "DELETE" }));
  } catch (err) {
    outcome = [err.message];
  }
  if (state.editing && state.editing.id === tx.id) resetForm();
  await reloadList();
  say(txMessage, ...outcome);
}

function renderList() {
  const body = byId("transactions").querySelector("tbody");
  const shown = withoutReceipt(state.list.items);
  body.replaceChildren(...shown.map(txRow));
  if (shown.length === 0) {
    body.append(h("tr", {}, h("td", { colspan: 7, class: "hint" }, "No transactions match.")));
  }
  byId("tx-more").hidden = state.list.done;
  const n = state.list.items.length;
  byId("tx-count").textContent = state.list.done
    ? `${n} transaction${n === 1 ? "" : "s"}.`
    : `Showing the newest ${n}.`;
}

// Next page of the current search (nothing when all are shown).
async function loadMore() {
  const query = nextRequest(state.list);
  if (!query) return;
  const asked = state.list;
  const page = await orSignIn(api("/transactions", { query }));
  if (state.list !== asked) return; // a newer search replaced this one meanwhile
  state.list = addPage(state.list, page);
  renderList();
}

function formQuery() {
  return searchQuery({
    q: byId("tx-q").value,
    accountId: byId("tx-account").value,
    min: byId("tx-min").value,
    max: byId("tx-max").value,
    from: byId("tx-from").value,
    to: byId("tx-to").value,
  });
}

// Start the current search again from its first page (after a change or a search).
async function reloadList() {
  let query;
  try {
    query = formQuery();
  } catch (err) {
    if (!(err instanceof FilterError)) throw err;
    say(txMessage, err.message, "error", byId(`tx-${err.field}`));
    return;
  }
  state.list = startList(query);
  try {
    await loadMore();
  } catch (err) {
    say(txMessage, err.message);
  }
}

byId("tx-filter").addEventListener("submit", (event) => {
  event.preventDefault();
  say(txMessage, "");
  reloadList();
});
mountReceiptFilter(byId("tx-filter"), () => renderList());
byId("tx-clear").addEventListener("click", () => {
  for (const id of ["tx-q", "tx-min", "tx-max", "tx-from", "tx-to"]) byId(id).value = "";
  byId("tx-account").value = "";
  say(txMessage, "");
  reloadList();
});
byId("tx-more").addEventListener("click", (event) => {
  say(txMessage, "");
  busy(event.currentTarget, () => loadMore().catch((err) => say(txMessage, err.message)));
});

// ---- wording --------------------------------------------------------------

function applyStyle(style) {
  state.style = style;
  byId("book-style").value = style;
  document.body.dataset.bookStyle = style;
  applyVocab(document, style);
}

byId("book-style").addEventListener("change", async (event) => {
  const select = event.currentTarget;
  const previous = state.style;
  select.disabled = true;
  try {
    const settings = await orSignIn(api("/settings", { method: "PUT", json: { book_style: select.value } }));
    applyStyle(settings.book_style);
    fillAccountChoices();
    renderList();
  } catch (err) {
    applyStyle(previous);
    say(byId("message"), err.message);
  } finally {
    select.disabled = false;
  }
});

async function main() {
  const me = await requireSession();
  renderNav("books", me.email);
  const settings = await orSignIn(api("/settings"));
  byId("occurred-on").value = today();
  applyStyle(settings.book_style);
  const wanted = new URLSearchParams(window.location.search).get("account");
  try {
    await reloadAccounts();
  } catch (err) {
    say(byId("message"), `Could not load the accounts. ${err.message}`);
  }
  if (wanted && state.accounts.byId.has(Number(wanted))) byId("tx-account").value = wanted;
  await Promise.all([reloadList(), mountLock(document.querySelector("main"))]);
  document.body.dataset.ready = "true";
}

main().catch((err) => say(byId("message"), err.message));
