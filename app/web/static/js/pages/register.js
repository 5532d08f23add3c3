// One account's register, statement-first (docs/web.md, "Register"):
// the statement's date and closing balance at the top, the entries up to that date
// newest first with the running balance, a live "statement vs cleared: difference"
// while ticking, "tick everything up to this date" as one request (one audit event),
// and reconciling. Reconciled and locked entries are shown as such, with no box.
import { api, ApiError, orSignIn } from "../api.js";
import { chartTable, periodChart } from "../charts.js";
import { busy, byId, h, keepDates, say, today } from "../dom.js";
import { accountOptions } from "../ledger.js";
import { centsToInput, formatCents } from "../money.js";
import { parseSigned } from "../csv.js";
import { receiptCell } from "../documents.js";
import { addPage, nextRequest, PAGE_SIZE, startList } from "../paging.js";
import { fixed, lastReconciliation, missingLine, signFor, toTick } from "../statement.js";
import { balanceByDay } from "../trends.js";
import { startPage } from "../start.js";

const BIG_PAGE = 500; // the register's largest page
const MAX_PAGES = 20; // 10,000 entries: as many as one request may clear
const DAY = /^\d{4}-\d{2}-\d{2}$/;

const state = {
  style: "personal", accounts: null, accountId: null, kind: "asset",
  list: startList({}), head: null, locked: null,
  day: null, // the statement date the list is cut at
};
const message = byId("register-message");

const statementDay = () => (DAY.test(byId("rec-date").value) ? byId("rec-date").value : null);

// The closing balance typed, in cents; null when empty or unreadable.
function closingCents() {
  try {
    return parseSigned(byId("rec-balance").value);
  } catch {
    return null;
  }
}

// The figures box: statement, cleared up to the date, difference.
function renderDifference() {
  const box = byId("rec-difference");
  const day = state.day;
  if (!state.head || !day) {
    box.replaceChildren("Choose the statement date.");
    box.className = "difference";
    return;
  }
  const closing = closingCents();
  // The register read up to the statement date answers the cleared balance up to it.
  const cleared = state.head.cleared_through_cents;
  const figure = (label, cents, id) => h("span", {}, `${label} `, h("strong", { id }, cents === null ? "–" : formatCents(cents)));
  const difference = closing !== null && cleared !== null ? closing - cleared : null;
  box.replaceChildren(
    figure("Statement", closing, "rec-statement"),
    figure(`Cleared to ${day}`, cleared, "rec-cleared"),
    figure("Difference", difference, "rec-diff"),
  );
  box.className = `difference${difference === 0 ? " zero" : difference !== null ? " off" : ""}`;
  byId("rec-tick-all").textContent = `Tick everything up to ${day}`;
}

function entryRow(item) {
  const locked = !item.reconciled && fixed(item, state.locked);
  let mark;
  if (item.reconciled) mark = h("span", { class: "badge reconciled" }, "reconciled");
  else if (locked) mark = h("span", { class: "badge locked" }, item.cleared ? "cleared, locked" : "locked");
  else {
    const box = h("input", {
      type: "checkbox",
      checked: item.cleared,
      "aria-label": `Cleared: ${item.description}, ${item.occurred_on}`,
    });
    box.addEventListener("change", () => setCleared(item, box));
    mark = h("label", { class: "style-switch" }, box, "cleared");
  }
  return h("tr", { "data-entry": item.entry_id, class: item.reconciled ? "reconciled" : locked ? "locked" : "" },
    h("td", { "data-label": "Date", class: "date" }, item.occurred_on),
    h("td", { "data-label": "Description" }, h("span", {}, item.description)),
    h("td", { class: "num", "data-label": "Amount" }, formatCents(item.amount_cents)),
    h("td", { class: "num", "data-label": "Balance" }, formatCents(item.balance_cents)),
    h("td", { "data-label": "Cleared", class: "cleared" }, mark),
    receiptCell({ id: item.transaction_id, document_count: item.document_count }));
}

function renderFigures() {
  const head = state.head;
  byId("register-title").textContent = head.account.archived
    ? `Register: ${head.account.name} (archived)` : `Register: ${head.account.name}`;
  byId("register-balance").textContent = formatCents(head.balance_cents);
  byId("register-cleared").textContent = formatCents(head.cleared_balance_cents);
  byId("register-lock").textContent = state.locked ? `Books locked through ${state.locked}` : "";
  renderDifference();
}

function render() {
  renderFigures();
  const body = byId("register").querySelector("tbody");
  body.replaceChildren(...state.list.items.map(entryRow));
  if (state.list.items.length === 0) {
    body.append(h("tr", {}, h("td", { colspan: 6, class: "hint" },
      state.day ? `No entries in this account up to ${state.day}.` : "No entries in this account yet.")));
  }
  byId("register-more").hidden = state.list.done;
  const n = state.list.items.length;
  const upTo = state.day ? ` up to ${state.day}` : "";
  byId("register-count").textContent = state.list.done
    ? `${n} entr${n === 1 ? "y" : "ies"}${upTo}.` : `Showing the newest ${n}${upTo}.`;
  byId("register-section").hidden = false;
  byId("reconcile-section").hidden = false;
  renderBalance();
}

// The balance over the entries listed: a line, one point per day, and its table.
function renderBalance() {
  const days = balanceByDay(state.list.items);
  byId("balance-section").hidden = days.length === 0;
  if (!days.length) return;
  const name = state.head.account.name;
  periodChart(byId("balance-chart"), {
    title: `Balance of ${name}`, slots: days,
    line: { name: "Balance", cls: "balance", values: days.map((d) => d.cents) },
  });
  byId("balance-table").replaceChildren(chartTable({
    id: "balance-figures", caption: keepDates(`Balance of ${name} at the end of each day, ${days[0].long} to ${days.at(-1).long}`),
    head: ["Day", "Balance"], rows: days.map((d) => ({ cells: [h("span", { class: "date" }, d.long), d.cents] })),
  }));
}

const registerOf = (query) => orSignIn(api(`/accounts/${state.accountId}/register`, { query }));

async function loadMore() {
  const query = nextRequest(state.list);
  if (!query) return;
  const asked = state.list;
  const page = await registerOf(query);
  if (state.list !== asked) return;
  state.head = page;
  state.list = addPage(state.list, page, (item) => item.entry_id);
  render();
}

// Every register item of `query` (pages of 500, at most MAX_PAGES); null when more.
async function readAll(query) {
  let list = startList(query);
  for (let n = 0; n < MAX_PAGES && !list.done; n += 1) {
    list = addPage(list, await registerOf(nextRequest(list, BIG_PAGE)), (item) => item.entry_id);
  }
  return list.done ? list.items : null;
}

// The account and the statement in the address, so a reload or a return keeps them.
function rememberStatement() {
  const url = new URL(window.location.href);
  url.searchParams.set("account", String(state.accountId));
  const day = statementDay();
  if (day) url.searchParams.set("statement_date", day);
  else url.searchParams.delete("statement_date");
  const closing = closingCents();
  if (closing !== null) url.searchParams.set("closing", String(closing));
  else url.searchParams.delete("closing");
  window.history.replaceState(null, "", url.pathname + url.search);
}

// The list again from the top, cut at the statement date, as many entries as shown.
async function reload() {
  rememberStatement();
  const shown = Math.min(Math.max(state.list.items.length, PAGE_SIZE), BIG_PAGE);
  state.day = statementDay();
  state.list = startList(state.day ? { to: state.day } : {});
  const asked = state.list;
  const page = await registerOf(nextRequest(state.list, shown));
  if (state.list !== asked) return;
  state.head = page;
  state.list = addPage(state.list, page, (item) => item.entry_id);
  render();
}

// The account's figures only (after a tick): the newest entry up to the date.
async function refreshFigures() {
  state.head = await registerOf({ ...(state.day ? { to: state.day } : {}), limit: "1" });
  renderFigures();
}

// Count a tick at once in the figures shown (the answer to the request corrects them).
function countTick(item, cleared) {
  item.cleared = cleared;
  const change = (cleared ? 1 : -1) * signFor(state.kind) * item.amount_cents;
  state.head.cleared_balance_cents += change;
  state.head.cleared_through_cents += change; // every entry listed is dated up to the date
  renderFigures();
}

async function setCleared(item, box) {
  say(message, "");
  box.disabled = true;
  countTick(item, box.checked);
  try {
    await orSignIn(api(`/accounts/${state.accountId}/cleared`, {
      method: "POST", json: { entry_ids: [item.entry_id], cleared: box.checked },
    }));
    await refreshFigures();
  } catch (err) {
    countTick(item, !box.checked);
    box.checked = item.cleared;
    say(message, err.message);
  } finally {
    box.disabled = false;
  }
}

byId("rec-tick-all").addEventListener("click", (event) => {
  const out = byId("rec-message");
  say(out, "");
  if (!state.day) return say(out, "Choose the statement date.", "error", byId("rec-date"));
  busy(event.currentTarget, async () => {
    try {
      const items = await readAll({ to: state.day });
      if (items === null) return say(out, "There are too many entries up to that date to tick at once; choose an earlier statement date first.");
      const ids = toTick(items, state.locked);
      if (ids.length === 0) return say(out, `Every entry up to ${state.day} is already cleared.`, "info");
      await orSignIn(api(`/accounts/${state.accountId}/cleared`, { method: "POST", json: { entry_ids: ids, cleared: true } }));
      await reload();
      say(out, `Ticked ${ids.length} entr${ids.length === 1 ? "y" : "ies"} up to ${state.day} as cleared.`, "info");
    } catch (err) {
      say(out, err.message);
    }
  });
});

async function open(accountId) {
  state.accountId = accountId;
  state.kind = state.accounts.byId.get(accountId)?.kind ?? "asset";
  fillOther();
  byId("register-statements").href = `/statements?account=${accountId}`; // a bank or card's own file
  byId("register-statements").hidden = state.kind !== "asset" && state.kind !== "liability";
  state.list = startList({});
  say(byId("message"), "");
  say(message, "");
  say(byId("rec-message"), "");
  try {
    await reload();
    await loadLastReconciliation();
  } catch (err) {
    byId("register-section").hidden = true;
    byId("reconcile-section").hidden = true;
    byId("balance-section").hidden = true;
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

// A new statement date cuts the list there; a new balance only moves the difference.
let dayTimer = null;
byId("rec-date").addEventListener("input", () => {
  clearTimeout(dayTimer);
  dayTimer = setTimeout(() => {
    if (!state.accountId || statementDay() === state.day) return;
    reload().catch((err) => say(message, err.message));
  }, 150);
});
byId("rec-balance").addEventListener("input", () => {
  renderDifference();
  if (state.accountId) rememberStatement();
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
      await loadLastReconciliation();
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

// ---- the last reconciliation, the statement's opening balance ------------------------

const AUDIT_PAGES = 4; // the last reconciliation is looked for in the newest 2,000 changes

async function loadLastReconciliation() {
  state.last = null;
  let cursor = null;
  for (let n = 0; n < AUDIT_PAGES; n += 1) {
    const page = await orSignIn(api("/audit", { query: { action: "entries.reconciled", limit: 500, cursor } }));
    state.last = lastReconciliation(page.items, state.accountId);
    if (state.last || !page.next_cursor) break;
    cursor = page.next_cursor;
  }
  byId("rec-last").textContent = state.last
    ? `Last reconciled to ${state.last.statement_date}, closing balance ${formatCents(state.last.closing_balance_cents)}.`
    : "Not reconciled before: this is the first statement.";
  checkOpening();
}

// The statement's opening balance against the last reconciliation's closing one.
function checkOpening() {
  const out = byId("rec-opening-check");
  let opening = null;
  try {
    opening = parseSigned(byId("rec-opening").value);
  } catch (err) {
    out.textContent = `Opening balance: ${err.message}`;
    out.hidden = false;
    return;
  }
  out.hidden = opening === null;
  if (opening === null) return;
  if (!state.last) out.textContent = "No earlier reconciliation to compare the opening balance with.";
  else if (opening === state.last.closing_balance_cents) out.textContent = `The opening balance matches the last reconciliation (${state.last.statement_date}).`;
  else out.textContent = `The opening balance differs from the last reconciliation's closing ${formatCents(state.last.closing_balance_cents)} by ${formatCents(opening - state.last.closing_balance_cents)}: a statement may be missing.`;
}
byId("rec-opening").addEventListener("input", checkOpening);

// ---- a statement line missing from the books: recorded and ticked here -------------

function fillOther() {
  const others = state.accounts.open.filter((a) => a.id !== state.accountId);
  byId("missing-other").replaceChildren(...accountOptions(others, { style: state.style }));
}

byId("missing-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const out = byId("missing-message");
  say(out, "");
  const date = byId("missing-date");
  const description = byId("missing-description");
  const amount = byId("missing-amount");
  const other = byId("missing-other");
  if (!DAY.test(date.value)) return say(out, "Choose the date on the statement.", "error", date);
  if (!description.value.trim()) return say(out, "Describe the line as on the statement.", "error", description);
  let cents;
  try {
    cents = parseSigned(amount.value);
  } catch (err) {
    return say(out, err.message, "error", amount);
  }
  if (!cents) return say(out, "Type the amount: money out with a minus, like -4.50.", "error", amount);
  if (!other.value) return say(out, "Choose the account for the other side.", "error", other);
  busy(byId("missing-submit"), async () => {
    const body = missingLine({ occurredOn: date.value, description: description.value, cents, kind: state.kind, accountId: state.accountId, otherId: other.value });
    try {
      const tx = await orSignIn(api("/transactions", { method: "POST", json: body }));
      // Its entry in this account (the answer carries no entry ids): from the register.
      const day = await orSignIn(api(`/accounts/${state.accountId}/register`, { query: { from: body.occurred_on, to: body.occurred_on, limit: 500 } }));
      const entry = day.items.find((item) => item.transaction_id === tx.id);
      if (entry) await orSignIn(api(`/accounts/${state.accountId}/cleared`, { method: "POST", json: { entry_ids: [entry.entry_id], cleared: true } }));
      await reload();
      description.value = "";
      amount.value = "";
      say(out, `Added and ticked: ${body.description}, ${formatCents(cents)}.`, "info");
    } catch (err) {
      say(out, `Not added: ${err.message}`);
    }
  });
});

async function main() {
  const start = await startPage("register", { more: [orSignIn(api("/books/lock"))] });
  const [lock] = start.more;
  state.style = start.style;
  state.accounts = start.accounts;
  state.locked = lock?.locked_through ?? null;
  const params = new URLSearchParams(window.location.search);
  const wanted = Number(params.get("account")) || null;
  byId("register-account").replaceChildren(...accountOptions(state.accounts.list, { chosen: wanted, style: state.style }));
  const day = params.get("statement_date");
  byId("rec-date").value = day && DAY.test(day) ? day : today();
  byId("missing-date").value = byId("rec-date").value;
  const closing = Number(params.get("closing"));
  if (params.get("closing") && Number.isSafeInteger(closing)) byId("rec-balance").value = centsToInput(closing);
  if (wanted) await open(wanted);
  else if (state.accounts.list.length === 0) say(byId("message"), "No accounts yet: create one under Accounts first.", "info");
  document.body.dataset.ready = "true";
}

main().catch((err) => say(byId("message"), err.message));
