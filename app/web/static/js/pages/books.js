// The books: recording money, and the transactions, page by page, with search
// (text, account, amount range, dates). A transaction is corrected in place, in a
// form of its own under its row (never in the new-entry form, so nothing half typed
// there is lost), and saved as ONE request: the corrected transaction with
// `replaces` (docs/ledger.md, "Corrections in one step"). Locked transactions are
// marked as such and offer no Edit or Delete (both could only fail); reconciled ones
// offer an Edit limited to what may change and an adjustment (adjusting.js).
// Accounts, registers, reports and the year end have views of their own.
import { api, orSignIn, requireSession } from "../api.js";
import { busy, byId, clearMessagesOnAction, h, say, today } from "../dom.js";
import { accountOptions, loadAccounts } from "../ledger.js";
import { lockedThrough } from "../lock.js";
import { formatCents, parseDollars } from "../money.js";
import { renderNav } from "../nav.js";
import { addPage, FilterError, nextRequest, searchQuery, startList } from "../paging.js";
import { buildTransaction, MODES, toForm } from "../recording.js";
import { applyVocab, words } from "../vocab.js";
import { mountReceiptFilter, receiptCell, uploadDocument, withoutReceipt } from "../documents.js";
import { adjustmentDays, adjustRow, lockReconciled } from "../adjusting.js";

const PHONE = window.matchMedia("(max-width: 640px)");
const state = {
  style: "personal",
  accounts: { list: [], byId: new Map(), open: [] },
  list: startList({}),
  locked: null, // the lock date, "YYYY-MM-DD", or null
  reconciled: new Map(), // listed transaction id → ids of its reconciled entries' accounts
  editing: new Map(), // transaction id → its open edit row (kept across re-renders)
};
const form = byId("record-form");
const recordMessage = byId("record-message");
const txMessage = byId("tx-message");

// ---- entry fields: the new-entry form and every edit form -----------------------
// f = {root, modeName, date, description, amount, credit, debit, creditLabel,
//      debitLabel, anyKinds}

const modeOf = (f) => f.root.querySelector(`input[name="${f.modeName}"]:checked`).value;

function fillPickers(f) {
  const mode = modeOf(f);
  const rules = MODES[mode];
  const w = words(state.style);
  const keep = (el) => Number(el.value) || null;
  // Archived accounts take no new entries: never offered (an edit of one is refused).
  const open = state.accounts.open;
  const kinds = (side) => (f.anyKinds && mode === "transfer" ? null : rules[side]);
  f.debit.replaceChildren(...accountOptions(open, { kinds: kinds("debit"), chosen: keep(f.debit), style: state.style }));
  f.credit.replaceChildren(...accountOptions(open, { kinds: kinds("credit"), chosen: keep(f.credit), style: state.style }));
  f.debitLabel.textContent = w.to[mode];
  f.creditLabel.textContent = w.from[mode];
}

function readBody(f) {
  return buildTransaction({
    mode: modeOf(f),
    occurredOn: f.date.value,
    description: f.description.value,
    cents: parseDollars(f.amount.value),
    debitId: f.debit.value,
    creditId: f.credit.value,
    anyKinds: f.anyKinds && modeOf(f) === "transfer",
  }, state.accounts.byId);
}

// Which field a refusal in the page is about, so it can be marked and focused.
function fieldOf(f, message) {
  if (/date/i.test(message)) return f.date;
  if (/Describe/.test(message)) return f.description;
  if (/account/i.test(message)) return f.debit;
  return f.amount;
}

const newEntry = {
  root: form,
  modeName: "mode",
  date: byId("occurred-on"),
  description: byId("description"),
  amount: byId("amount"),
  credit: byId("credit"),
  debit: byId("debit"),
  creditLabel: byId("credit-label"),
  debitLabel: byId("debit-label"),
  anyKinds: false,
};

function fillAccountChoices() {
  fillPickers(newEntry);
  for (const row of state.editing.values()) fillPickers(row.fields);
  const chosen = Number(byId("tx-account").value) || null;
  byId("tx-account").replaceChildren(...accountOptions(state.accounts.list, { chosen, style: state.style, empty: "All accounts" }));
}

async function reloadAccounts() {
  showAccounts(await loadAccounts());
}

function showAccounts(accounts) {
  state.accounts = accounts;
  fillAccountChoices();
  if (state.accounts.open.length === 0) {
    say(recordMessage, "No accounts yet: create them under Accounts first (for example a bank account of kind asset).", "info");
  }
}

// ---- recording ------------------------------------------------------------------

form.addEventListener("change", (event) => {
  if (event.target.name === "mode") fillPickers(newEntry);
});

form.addEventListener("submit", (event) => {
  event.preventDefault();
  say(recordMessage, "");
  busy(byId("record-submit"), async () => {
    let body;
    try {
      body = readBody(newEntry);
    } catch (err) {
      say(recordMessage, err.message, "error", fieldOf(newEntry, err.message)); // nothing was sent
      return;
    }
    let tx;
    try {
      tx = await orSignIn(api("/transactions", { method: "POST", json: body }));
    } catch (err) {
      say(recordMessage, `Not recorded: ${err.message}`);
      return;
    }
    const recorded = `Recorded: ${body.description}, ${formatCents(body.entries[0].amount_cents)}.`;
    const receipt = await attachChosen(tx); // the receipt chosen in the form, if any
    byId("description").value = "";
    byId("amount").value = "";
    await reloadList();
    say(recordMessage, receipt ? `${recorded} ${receipt.text}` : recorded, receipt?.failed ? "error" : "info");
  });
});

// The form's receipt, sent to the transaction just recorded: null when none was chosen.
async function attachChosen(tx) {
  const input = byId("record-receipt");
  const [file] = input.files ?? [];
  if (!file) return null;
  try {
    const doc = await orSignIn(uploadDocument(tx.id, file));
    input.value = "";
    return { text: `Receipt attached: ${doc.filename}.` };
  } catch (err) {
    input.value = "";
    return { text: `The receipt was not attached (${err.message}): attach it with the paperclip on its row.`, failed: true };
  }
}

// ---- correcting a transaction in place ------------------------------------------

function editable(tx) {
  const values = toForm(tx, state.accounts.byId);
  if (!values) return null;
  const archived = [values.debitId, values.creditId].some((id) => state.accounts.byId.get(id)?.archived);
  return archived ? null : values;
}

function editRow(tx, values) {
  const w = words(state.style);
  const modeName = `mode-${tx.id}`;
  const field = (label, control) => h("label", {}, label, control);
  const fields = {
    modeName,
    anyKinds: Boolean(values.anyKinds),
    date: h("input", { type: "date", class: "e-date", value: values.occurredOn, required: true }),
    description: h("input", { class: "e-description", maxlength: 200, value: values.description, required: true }),
    amount: h("input", { class: "e-amount", inputmode: "decimal", autocomplete: "off", value: formatCents(values.cents), required: true }),
    credit: h("select", { class: "e-credit" }),
    debit: h("select", { class: "e-debit" }),
    creditLabel: h("span", {}),
    debitLabel: h("span", {}),
  };
  const message = h("p", { id: `edit-message-${tx.id}`, role: "alert", hidden: true });
  const save = h("button", { type: "submit", class: "e-save" }, "Save correction");
  const cancel = h("button", { type: "button", class: "secondary e-cancel" }, "Cancel");
  const modes = h("fieldset", { class: "modes" }, h("legend", {}, "What happened"),
    ["in", "out", "transfer"].map((m) => h("label", {},
      h("input", { type: "radio", name: modeName, value: m, checked: m === values.mode }), " ", w.modes[m])));
  const editForm = h("form", { class: "edit-form", novalidate: true, "aria-label": `Correct “${tx.description}”` },
    h("p", { class: "edit-title" }, `Correct “${tx.description}” of ${tx.occurred_on}`),
    modes,
    h("div", { class: "grid" },
      field("Date ", fields.date), field("Description ", fields.description), field("Amount ", fields.amount),
      h("label", {}, fields.creditLabel, " ", fields.credit), h("label", {}, fields.debitLabel, " ", fields.debit)),
    h("div", { class: "actions" }, save, cancel),
    h("p", { class: "hint" }, state.reconciled.has(tx.id)
      ? "Reconciled with a bank statement: its date, amount and reconciled account stay; the description and the other account may change. For an amount the bank really paid differently, use Adjust. "
      : "Saving stores the corrected transaction and deletes this one in one step: both happen or neither. ",
    h("a", { href: `/history?transaction=${tx.id}` }, "Its history")),
    message);
  fields.root = editForm;
  const row = h("tr", { class: "editing", "data-edit": tx.id }, h("td", { colspan: 7 }, editForm));
  row.fields = fields;
  fillPickers(fields);
  fields.debit.value = String(values.debitId);
  fields.credit.value = String(values.creditId);
  const reconciled = state.reconciled.get(tx.id);
  if (reconciled) lockReconciled(fields, values, reconciled);
  editForm.addEventListener("change", (event) => {
    if (event.target.name === modeName) fillPickers(fields);
  });
  cancel.addEventListener("click", () => {
    state.editing.delete(tx.id);
    renderList();
  });
  editForm.addEventListener("submit", (event) => {
    event.preventDefault();
    say(message, "");
    busy(save, async () => {
      let body;
      try {
        body = readBody(fields);
      } catch (err) {
        say(message, err.message, "error", fieldOf(fields, err.message));
        return;
      }
      try {
        await orSignIn(api("/transactions", { method: "POST", json: { ...body, replaces: tx.id } }));
      } catch (err) {
        // Refused whole (a reconciled or locked original, say): nothing was recorded.
        say(message, `Not saved: ${err.message}`);
        return;
      }
      state.editing.delete(tx.id);
      await reloadList();
      say(txMessage, `Saved: ${body.description}, ${formatCents(body.entries[0].amount_cents)}.`, "info");
    });
  });
  return row;
}

function startEdit(tx) {
  const values = editable(tx);
  if (!values) return;
  const row = editRow(tx, values);
  state.editing.set(tx.id, row);
  renderList();
  row.fields.description.focus();
}

function startAdjust(tx) {
  const values = editable(tx);
  if (!values) return;
  const close = () => {
    state.editing.delete(tx.id);
    renderList();
  };
  const row = adjustRow(tx, values, {
    locked: state.locked,
    accountsById: state.accounts.byId,
    cancel: close,
    done: async (text) => {
      state.editing.delete(tx.id);
      await reloadList();
      say(txMessage, text, "info");
    },
  });
  state.editing.set(tx.id, row);
  renderList();
  row.querySelector(".a-amount").focus();
}

// ---- transactions -----------------------------------------------------------------

function describe(tx) {
  const values = toForm(tx, state.accounts.byId);
  if (!values) {
    return [
      h("td", { class: "accounts", "data-label": "Accounts" }, h("span", {}, tx.entries.map((e) => h("div", {}, `${e.account_name} ${formatCents(e.amount_cents)}`)))),
      h("td", { class: "num", "data-label": "Amount" }, ""),
    ];
  }
  const from = state.accounts.byId.get(values.creditId).name;
  const to = state.accounts.byId.get(values.debitId).name;
  return [
    h("td", { class: "accounts", "data-label": "Accounts" }, h("span", {}, h("span", { class: "badge" }, words(state.style).modes[values.mode]), ` ${from} → ${to}`)),
    h("td", { class: "num", "data-label": "Amount" }, formatCents(values.cents)),
  ];
}

// Why a transaction cannot change, or null when it can.
function frozen(tx) {
  if (state.locked && tx.occurred_on <= state.locked) {
    return ["locked", `Locked: dated on or before ${state.locked}, when the books were closed (Year end).`];
  }
  return null;
}

// A reconciled transaction's buttons: Edit (limited) and Adjust, never Delete.
function reconciledButtons(tx) {
  const buttons = [h("span", { class: "badge status reconciled", title: "Reconciled with a bank statement: its date, amount and reconciled account stay as the statement saw them." }, "reconciled")];
  if (!editable(tx)) return buttons;
  const edit = h("button", { type: "button", class: "secondary" }, "Edit");
  edit.addEventListener("click", () => startEdit(tx));
  buttons.push(edit);
  if (adjustmentDays(tx.occurred_on, state.locked)) {
    const adjust = h("button", { type: "button", class: "secondary adjust" }, "Adjust");
    adjust.addEventListener("click", () => startAdjust(tx));
    buttons.push(adjust);
  }
  return buttons;
}

function txRow(tx) {
  const actions = h("td", { class: "row-actions" });
  const why = frozen(tx);
  const showButtons = () => {
    if (why) {
      actions.replaceChildren(h("span", { class: `badge status ${why[0]}`, title: why[1] }, why[0]));
      return;
    }
    if (state.reconciled.has(tx.id)) {
      actions.replaceChildren(...reconciledButtons(tx));
      return;
    }
    const buttons = [];
    if (editable(tx)) {
      const edit = h("button", { type: "button", class: "secondary" }, "Edit");
      edit.addEventListener("click", () => startEdit(tx));
      buttons.push(edit);
    }
    const del = h("button", { type: "button", class: "secondary" }, "Delete");
    del.addEventListener("click", () => {
      const yes = h("button", { type: "button", class: "danger" }, "Yes, delete");
      const keep = h("button", { type: "button", class: "secondary" }, "Keep");
      yes.addEventListener("click", () => busy(yes, () => deleteTx(tx)));
      keep.addEventListener("click", showButtons);
      actions.replaceChildren(h("span", { class: "confirm" }, "Delete this transaction?"), yes, keep);
      yes.focus();
    });
    buttons.push(del);
    actions.replaceChildren(...buttons);
  };
  showButtons();
  return h("tr", { "data-id": tx.id, class: why ? why[0] : state.reconciled.has(tx.id) ? "reconciled" : "" },
    h("td", { class: "date", "data-label": "Date" }, tx.occurred_on),
    h("td", { class: "desc", "data-label": "Description" }, h("span", {}, tx.description)),
    ...describe(tx),
    receiptCell(tx),
    h("td", { class: "by hint", "data-label": "By" }, tx.created_by_email ?? ""), actions);
}

async function deleteTx(tx) {
  let outcome = [`Deleted “${tx.description}”.`, "info"];
  try {
    await orSignIn(api(`/transactions/${tx.id}`, { method: "DELETE" }));
  } catch (err) {
    outcome = [err.message];
  }
  state.editing.delete(tx.id);
  await reloadList();
  say(txMessage, ...outcome);
}

function renderList() {
  const body = byId("transactions").querySelector("tbody");
  const listed = withoutReceipt(state.list.items);
  const shown = new Set(listed.map((tx) => tx.id));
  for (const id of state.editing.keys()) if (!shown.has(id)) state.editing.delete(id);
  // An open correction keeps its row (and whatever is typed in it) across re-renders.
  body.replaceChildren(...listed.map((tx) => state.editing.get(tx.id) ?? txRow(tx)));
  if (listed.length === 0) {
    body.append(h("tr", { class: "empty" }, h("td", { colspan: 7, class: "hint" }, "No transactions match.")));
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
  // Which rows hold a reconciled entry, and of which accounts: said by the page itself.
  for (const tx of page.items) {
    if (tx.reconciled_account_ids?.length) state.reconciled.set(tx.id, new Set(tx.reconciled_account_ids));
  }
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
    byId("tx-search").open = true;
    say(txMessage, err.message, "error", byId(`tx-${err.field}`));
    return;
  }
  state.list = startList(query);
  state.reconciled = new Map();
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

// ---- the lock, wording ------------------------------------------------------------

function showLock() {
  const line = byId("lock-line");
  if (!state.locked) {
    line.hidden = true;
    return;
  }
  line.replaceChildren(`The books are locked through ${state.locked}: nothing on or before it can change. `,
    h("a", { href: "/year-end" }, "Year end"));
  line.hidden = false;
}

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

// What the page reads first comes in one round (the list then asks for the search
// the account choice makes); a failed part is said and the rest still shows.
const settled = (promise) => promise.then((value) => ({ value, err: null }), (err) => ({ value: null, err }));

async function main() {
  const [me, settings, accounts, locked] = await Promise.all([
    requireSession(), orSignIn(api("/settings")), settled(loadAccounts()), settled(lockedThrough()),
  ]);
  renderNav("books", me.email);
  clearMessagesOnAction(document.querySelector("main"), ["message"]); // a failed load stays
  // A phone shows the list first: the entry form and the search open on request.
  if (PHONE.matches) {
    byId("record-section").open = false;
    byId("tx-search").open = false;
  }
  byId("occurred-on").value = today();
  applyStyle(settings.book_style);
  const wanted = new URLSearchParams(window.location.search).get("account");
  if (accounts.err) say(byId("message"), `Could not load the accounts. ${accounts.err.message}`);
  else showAccounts(accounts.value);
  if (wanted && state.accounts.byId.has(Number(wanted))) {
    byId("tx-account").value = wanted;
    byId("tx-search").open = true;
  }
  if (locked.err) say(byId("message"), `Could not load the lock date. ${locked.err.message}`);
  else state.locked = locked.value;
  showLock();
  await reloadList();
  document.body.dataset.ready = "true";
}

main().catch((err) => say(byId("message"), err.message));
