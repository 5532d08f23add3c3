// Reports (docs/web.md, "Reports"): the income statement for a period (presets:
// this and last month, year and financial year) and the balance sheet as of a day,
// each downloadable as CSV of exactly what is shown, in the screen's words; an
// account's line opens the transactions that make it up, with their count and sum;
// and the export of the books (GET /export) as a file. Dates are YYYY-MM-DD
// throughout. A report's CSV is only offered while the dates chosen are the ones
// shown: changing a date shows that period (or nothing, when it cannot be shown).
import { api, orSignIn } from "../api.js";
import { mountBudgetReport } from "../budget-report.js";
import { mountAuditPack } from "../documents.js";
import { busy, byId, h, say, today } from "../dom.js";
import { balanceSheetRows, incomeStatementRows, saveBlob, slug, toCsv } from "../download.js";
import { formatCents } from "../money.js";
import { addPage, nextRequest, startList } from "../paging.js";
import { periods, PRESETS, presetOf, startMonthOf } from "../periods.js";
import { renderBalanceSheet, renderIncomeStatement } from "../reports.js";
import { signFor } from "../statement.js";
import { mountTrends } from "../trends-report.js";
import { words } from "../vocab.js";
import { startPage } from "../start.js";

const EXTENSIONS = { csv: "csv", hledger: "journal", beancount: "beancount" };
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const FY_KEY = "ledger.financialYearStart"; // this browser's choice, when the settings carry none
const LINES_PAGE = 100;
const state = { style: "personal", income: null, balance: null, accounts: null, fyStart: 1, fySetting: null, lines: null };
let isTimer = null;
let bsTimer = null;

// --- the period ----------------------------------------------------------------

function table() {
  return periods(today(), state.fyStart);
}

function renderPresets() {
  const chosen = presetOf(byId("is-from").value, byId("is-to").value, table());
  byId("is-presets").replaceChildren(...PRESETS.map(([key, label]) => h("button", {
    type: "button", class: "secondary", "data-preset": key, "aria-pressed": String(key === chosen),
    onclick: () => choosePreset(key),
  }, label)));
}

function choosePreset(key) {
  const { from, to } = table()[key];
  byId("is-from").value = from;
  byId("is-to").value = to;
  byId("bs-as-of").value = to; // the balance sheet at the period's end
  renderPresets();
  loadIncomeStatement();
  loadBalanceSheet();
}

function showFinancialYear() {
  const select = byId("fy-start");
  select.replaceChildren(...MONTHS.map((month, i) => h("option", { value: i + 1, selected: i + 1 === state.fyStart }, month)));
  select.disabled = state.fySetting !== null; // the books' own setting wins
}

byId("fy-start").addEventListener("change", (event) => {
  state.fyStart = Number(event.currentTarget.value);
  try {
    window.localStorage.setItem(FY_KEY, String(state.fyStart));
  } catch {
    // storage refused (a private window): the choice holds for this visit
  }
  renderPresets();
});

// --- the reports -----------------------------------------------------------------

// The income statement's account lines open what makes them up, for its period.
const incomeLines = (name) => showLines(name, state.income.from, state.income.to);
const balanceLines = (name) => showLines(name, null, state.balance.as_of);

// `asked`: the person pressed Show (a missing date is then said, not passed over).
async function loadIncomeStatement(asked = true) {
  clearTimeout(isTimer);
  say(byId("is-message"), "");
  const from = byId("is-from").value;
  const to = byId("is-to").value;
  byId("is-csv").disabled = true;
  state.income = null;
  renderPresets();
  if (!from || !to) {
    byId("income-statement").replaceChildren();
    byId("is-chart").replaceChildren();
    if (asked) say(byId("is-message"), "Choose both dates.", "error", byId(from ? "is-to" : "is-from"));
    return;
  }
  try {
    const compare = byId("compare-year").checked ? "previous_year" : "";
    const report = await orSignIn(api("/reports/income-statement", { query: { from, to, compare } }));
    if (byId("is-from").value !== from || byId("is-to").value !== to) return; // a newer period is on its way
    if (compare !== (byId("compare-year").checked ? "previous_year" : "")) return;
    state.income = report;
    renderIncomeStatement(byId("income-statement"), byId("is-chart"), report, state.style, { onAccount: incomeLines });
    byId("is-csv").disabled = false;
  } catch (err) {
    byId("income-statement").replaceChildren();
    byId("is-chart").replaceChildren();
    say(byId("is-message"), err.message, "error", /from/.test(err.message) ? byId("is-from") : null);
  }
}

async function loadBalanceSheet(asked = true) {
  clearTimeout(bsTimer);
  say(byId("bs-message"), "");
  const asOf = byId("bs-as-of").value;
  byId("bs-csv").disabled = true;
  state.balance = null;
  if (!asOf) {
    byId("balance-sheet").replaceChildren();
    byId("bs-chart").replaceChildren();
    if (asked) say(byId("bs-message"), "Choose the date.", "error", byId("bs-as-of"));
    return;
  }
  try {
    const compare = byId("compare-year").checked ? "previous_year" : "";
    const report = await orSignIn(api("/reports/balance-sheet", { query: { as_of: asOf, compare } }));
    if (byId("bs-as-of").value !== asOf) return;
    if (compare !== (byId("compare-year").checked ? "previous_year" : "")) return;
    state.balance = report;
    renderBalanceSheet(byId("balance-sheet"), byId("bs-chart"), report, state.style, { onAccount: balanceLines });
    byId("bs-csv").disabled = false;
  } catch (err) {
    byId("balance-sheet").replaceChildren();
    byId("bs-chart").replaceChildren();
    say(byId("bs-message"), err.message);
  }
}

// Year against year: both statements again, each with last year's column and the difference.
byId("compare-year").addEventListener("change", () => {
  loadIncomeStatement();
  loadBalanceSheet();
});
byId("is-form").addEventListener("submit", (e) => { e.preventDefault(); loadIncomeStatement(); });
byId("bs-form").addEventListener("submit", (e) => { e.preventDefault(); loadBalanceSheet(); });
// A changed date shows its period at once, so the CSV is always of what is shown.
for (const id of ["is-from", "is-to"]) {
  byId(id).addEventListener("input", () => {
    byId("is-csv").disabled = true;
    renderPresets();
    clearTimeout(isTimer);
    isTimer = setTimeout(() => loadIncomeStatement(false), 300);
  });
}
byId("bs-as-of").addEventListener("input", () => {
  byId("bs-csv").disabled = true;
  clearTimeout(bsTimer);
  bsTimer = setTimeout(() => loadBalanceSheet(false), 300);
});

byId("is-csv").addEventListener("click", () => {
  const r = state.income;
  if (!r) return;
  const w = words(state.style);
  saveBlob(new Blob([toCsv(incomeStatementRows(r, w))], { type: "text/csv" }), `${slug(w.incomeStatement)}-${r.from}-to-${r.to}.csv`);
});
byId("bs-csv").addEventListener("click", () => {
  const r = state.balance;
  if (!r) return;
  const w = words(state.style);
  saveBlob(new Blob([toCsv(balanceSheetRows(r, w))], { type: "text/csv" }), `${slug(w.balanceSheet)}-${r.as_of}.csv`);
});

// --- what a line is made of: the account's transactions, counted and summed --------

function lineRow(tx, account) {
  const cents = signFor(account.kind) * tx.entries
    .filter((e) => e.account_id === account.id)
    .reduce((sum, e) => sum + e.amount_cents, 0);
  return { cents, row: h("tr", { "data-id": tx.id },
    h("td", { class: "date", "data-label": "Date" }, tx.occurred_on),
    h("td", { "data-label": "Description" }, h("span", {}, tx.description)),
    h("td", { class: "num", "data-label": "Amount" }, formatCents(cents))) };
}

function renderLines() {
  const { account, from, to, list } = state.lines;
  const rows = list.items.map((tx) => lineRow(tx, account));
  const sum = rows.reduce((total, r) => total + r.cents, 0);
  const n = rows.length;
  const period = from ? `${from} to ${to}` : `up to ${to}`;
  byId("lines-title").textContent = `${account.name}, ${period}`;
  byId("lines-table").querySelector("tbody").replaceChildren(...rows.map((r) => r.row));
  byId("lines-count").textContent = `${n} transaction${n === 1 ? "" : "s"}${list.done ? "" : " shown"}`;
  byId("lines-sum").textContent = formatCents(sum);
  byId("lines-more").hidden = list.done;
  byId("lines-status").textContent = list.done
    ? `${n} transaction${n === 1 ? "" : "s"}, total ${formatCents(sum)}: the figure on the report.`
    : `The newest ${n}, total ${formatCents(sum)}; load more for the rest of the period.`;
  byId("lines-section").hidden = false;
}

async function moreLines() {
  const asked = state.lines;
  const page = await orSignIn(api("/transactions", { query: nextRequest(asked.list, LINES_PAGE) }));
  if (state.lines !== asked) return;
  state.lines = { ...asked, list: addPage(asked.list, page) };
  renderLines();
}

async function showLines(name, from, to) {
  say(byId("lines-message"), "");
  const account = state.accounts.list.find((a) => a.name === name);
  if (!account) return say(byId("lines-message"), `${name} is not an account any more; reload the page.`);
  const query = { account_id: String(account.id), to };
  if (from) query.from = from;
  state.lines = { account, from, to, list: startList(query) };
  try {
    await moreLines();
    byId("lines-section").scrollIntoView({ block: "start" });
  } catch (err) {
    say(byId("lines-message"), err.message);
  }
}

byId("lines-more").addEventListener("click", (event) => {
  busy(event.currentTarget, () => moreLines().catch((err) => say(byId("lines-message"), err.message)));
});

// --- the export ----------------------------------------------------------------------

// The export comes from the API with the session cookie, so a plain link would
// not do (another origin): fetch it, then hand the bytes over as a file.
byId("export-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const out = byId("export-message");
  say(out, "");
  busy(byId("export-submit"), async () => {
    const format = byId("export-format").value;
    try {
      const response = await orSignIn(api("/export", {
        raw: true,
        query: { format, from: byId("export-from").value, to: byId("export-to").value },
      }));
      const blob = await response.blob();
      // Named as the API names it (ledger-DAY.ext); CORS does not expose its header.
      const name = `ledger-${today()}.${EXTENSIONS[format]}`;
      saveBlob(blob, name);
      say(out, `Downloaded ${name}.`, "info");
    } catch (err) {
      say(out, err.message);
    }
  });
});

async function main() {
  const { settings, style, accounts } = await startPage("reports");
  // Left blank, the pack is of the period chosen above (its dates as they stand).
  mountAuditPack(byId("export-section"), () => ({ from: byId("is-from").value, to: byId("is-to").value }));
  state.style = style;
  state.accounts = accounts;
  state.fySetting = startMonthOf(settings);
  let stored = null;
  try {
    stored = Number(window.localStorage.getItem(FY_KEY)) || null;
  } catch {
    stored = null;
  }
  state.fyStart = state.fySetting ?? (stored >= 1 && stored <= 12 ? stored : 1);
  showFinancialYear();
  const now = today();
  byId("is-from").value = `${now.slice(0, 4)}-01-01`;
  byId("is-to").value = now;
  byId("bs-as-of").value = now;
  byId("annual-year").value = String(Number(now.slice(0, 4)) - 1); // the meeting looks back on last year
  await Promise.all([
    mountTrends(byId("trends-section"), state.style).catch((err) => say(byId("message"), err.message)),
    loadIncomeStatement(),
    loadBalanceSheet(),
    mountBudgetReport(byId("budget-section"), state.style).catch((err) => say(byId("message"), err.message)),
  ]);
  document.body.dataset.ready = "true";
}

main().catch((err) => say(byId("message"), err.message));
