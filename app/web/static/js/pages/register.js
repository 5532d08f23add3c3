// One account's register: its entries newest first with the running balance,
// the cleared mark, and reconciliation against a bank statement.
import { api, ApiError, orSignIn, requireSession } from "../api.js";
import { busy, byId, h, say, today } from "../dom.js";
import { accountOptions, loadAccounts, loadStyle } from "../ledger.js";
import { formatCents } from "../money.js";
import { parseSigned } from "../csv.js";
import { renderNav } from "../nav.js";
import { receiptCell } from "../documents.js";
import { addPage, nextRequest, PAGE_SIZE, startList } from "../paging.js";

const state = { style: "personal", accounts: null, accountId: null, list: startList({}), head: null };
const message = byId("register-message");

function entryRow(item) {
  const box = h("input", {
    type: "checkbox",
    checked: item.cleared,
    disabled: item.reconciled,
    "aria-label": `Cleared: ${item.description}, ${item.occurred_on}`,
  });
  box.addEventListener("change", () => setCleared(item, box));
  return h("tr", { "data-entry": item.entry_id, class: item.reconciled ? "reconciled" : "" },
    h("td", { "data-label": "Date" }, item.occurred_on),
    h("td", { "data-label": "Description" }, h("span", {}, item.description)),
    h("td", { class: "num", "data-label": "Amount" }, formatCents(item.amount_cents)),
    h("td", { class: "num", "data-label": "Balance" }, formatCents(item.balance_cents)),
    h("td", { "data-label": "Cleared", class: "cleared" },
      h("label", { class: "style-switch" }, box, item.reconciled ? "reconciled" : "cleared")),
    receiptCell({ id: item.transaction_id, document_count: item.document_count }));
}

function render() {
  const head = state.head;
  byId("register-title").textContent = head.account.archived
    ? `Register: ${head.account.name} (archived)` : `Register: ${head.account.name}`;
  byId("register-balance").textContent = formatCents(head.balance_cents);
  byId("register-cleared").textContent = formatCents(head.cleared_balance_cents);
  const body = byId("register").querySelector("tbody");
  body.replaceChildren(...state.list.items.map(entryRow));
  if (state.list.items.length === 0) {
    body.append(h("tr", {}, h("td", { colspan: 6, class: "hint" }, "No entries in this account yet.")));
  }
  byId("register-more").hidden = state.list.done;
  const n = state.list.items.length;
  byId("register-count").textContent = state.list.done ? `${n} entr${n === 1 ? "y" : "ies"}.` : `Showing the newest ${n}.`;
  byId("register-section").hidden = false;
  byId("reconcile-section").hidden = false;
}

async function loadMore() {
  const query = nextRequest(state.list);
  if (!query) return;
  const asked = state.list;
  const page = await orSignIn(api(`/accounts/${state.accountId}/register`, { query }));
  if (state.list !== asked) return;
  state.head = page;
  state.list = addPage(state.list, page, (item) => item.entry_id);
  render();
}

// Load the register again from the top, as many entries as were shown.
async function reload() {
  const shown = Math.min(Math.max(state.list.items.length, PAGE_SIZE), 500);
  state.list = startList({});
  const query = nextRequest(state.list, shown);
  const page = await orSignIn(api(`/accounts/${state.accountId}/register`, { query }));
  state.head = page;
  state.list = addPage(state.list, page, (item) => item.entry_id);
  render();
}

async function setCleared(item, box) {
  say(message, "");
  box.disabled = true;
  try {
    await orSignIn(api(`/accounts/${state.accountId}/cleared`, {
      method: "POST", json: { entry_ids: [item.entry_id], cleared: box.checked },
    }));
    await reload();
  } catch (err) {
    box.checked = !box.checked;
    box.disabled = false;
    say(message, err.message);
  }
}

async function open(accountId) {
  state.accountId = accountId;
  state.list = startList({});
  say(byId("message"), "");
  say(message, "");
  say(byId("rec-message"), "");
  const url = new URL(window.location.href);
  url.searchParams.set("account", String(accountId));
  window.history.replaceState(null, "", url.pathname + url.search);
  try {
    await loadMore();
  } catch (err) {
    byId("register-section").hidden = true;
    byId("reconcile-section").hidden = true;
    say(byId("message"), err instanceof ApiError && err.status === 404
      ? "That account does not exist (any more). Choose another one." : err.message);
  }
}

byId("register-account").addEventListener("change", (event) => {
  const id = Number(event.currentTarget.value);
  if (id) open(id);
});
byId("register-more").addEventListener("click", (event) => {
  busy(event.currentTarget, () => loadMore().catch((err) => say(message, err.message)));
});

byId("reconcile-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const out = byId("rec-message");
  say(out, "");
  const statementDate = byId("rec-date").value;
  if (!statementDate) return say(out, "Choose the statement date.", "error", byId("rec-date"));
  let cents;
  try {
    cents = parseSigned(byId("rec-balance").value);
  } catch (err) {
    return say(out, `Closing balance: ${err.message}`, "error", byId("rec-balance"));
  }
  if (cents === null) return say(out, "Enter the closing balance from the statement.", "error", byId("rec-balance"));
  busy(byId("rec-submit"), async () => {
    try {
      const done = await orSignIn(api(`/accounts/${state.accountId}/reconciliations`, {
        method: "POST", json: { statement_date: statementDate, closing_balance_cents: cents },
      }));
      await reload();
      const n = Array.isArray(done.entries) ? done.entries.length : done.entries;
      say(out, `Reconciled to ${done.statement_date}: ${n} entr${n === 1 ? "y" : "ies"} now locked, closing balance ${formatCents(done.closing_balance_cents)}.`, "info");
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && Number.isSafeInteger(err.body?.difference_cents)) {
        say(out, `The cleared entries up to ${statementDate} do not add up to the statement's ${formatCents(cents)}: the difference is ${formatCents(err.body.difference_cents)}. Nothing was reconciled; check which entries are cleared.`, "error", byId("rec-balance"));
      } else {
        say(out, err.message);
      }
    }
  });
});

async function main() {
  const me = await requireSession();
  renderNav("register", me.email);
  state.style = await loadStyle();
  state.accounts = await loadAccounts();
  const wanted = Number(new URLSearchParams(window.location.search).get("account")) || null;
  byId("register-account").replaceChildren(...accountOptions(state.accounts.list, { chosen: wanted, style: state.style }));
  byId("rec-date").value = today();
  if (wanted) await open(wanted);
  else if (state.accounts.list.length === 0) say(byId("message"), "No accounts yet: create one under Accounts first.", "info");
  document.body.dataset.ready = "true";
}

main().catch((err) => say(byId("message"), err.message));
