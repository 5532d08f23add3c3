// The annual report for the members' meeting (docs/web.md, "The annual report"): a
// print view (A4, static/css/annual.css) of one financial year: the income statement
// against last year and the year's approved budget, the balance sheet against last
// year, the bank balances and their last reconciliation, lines for the auditors.
// /annual-report?year=2025 (the year the financial year starts in).
import { api, orSignIn, requireSession } from "../api.js";
import { byId, h, keepDates, say, today } from "../dom.js";
import { loadAccounts, loadStyle } from "../ledger.js";
import { formatCents } from "../money.js";
import { renderNav } from "../nav.js";
import { startMonthOf } from "../periods.js";
import { budgetOfYear, financialYearOf, reconciledThrough } from "../trends.js";
import { words } from "../vocab.js";

const FY_KEY = "ledger.financialYearStart"; // as the Reports page keeps it
const AUDIT_PAGES = 4; // reconciliations are looked for in the newest 2,000 of them

// On a phone each row is a card (table.stack), each figure labelled with its column.
const money = (cents, label) => h("td", { class: "num", "data-label": label }, cents === undefined ? "" : formatCents(cents));
let columns = [];
const head = (labels) => {
  columns = labels.map((label) => (typeof label === "string" ? label : label.textContent));
  return h("thead", {}, h("tr", {},
    labels.map((label, i) => h("th", { scope: "col", class: i ? "num" : "" }, i ? label : h("span", { class: "sr-only" }, label)))));
};
const row = (label, figures, cls = "") => h("tr", { class: cls }, cls ? h("th", { scope: "row" }, label) : h("td", {}, label),
  figures.map((cents, i) => money(cents, columns[i + 1])));
const group = (label, columns) => h("tr", { class: "group" }, h("th", { colspan: columns, scope: "rowgroup" }, label));

function incomeTable(report, year, before, w) {
  const budget = report.total_income_budget_cents !== undefined;
  const p = report.previous;
  const labels = ["Account", year.name, before.name, ...(budget ? ["Budget", "Against budget"] : [])];
  const figures = (line) => [line.cents, line.previous_cents, ...(budget ? [line.budget_cents, line.variance_cents] : [])];
  const totals = (now, before, planned) => [now, before, ...(budget ? [planned, null] : [])];
  const totalRow = (label, now, before, planned, sign, cls = "total") => {
    const cells = totals(now, before, planned);
    if (budget) cells[3] = sign * (now - planned); // positive is better than plan, as the lines
    return row(label, cells, cls);
  };
  const cols = labels.length;
  return [
    h("h2", {}, w.incomeStatement),
    h("table", { class: "report stack", id: "ar-income-table" },
      h("caption", { class: "sr-only" }, `${w.incomeStatement}, ${report.from} to ${report.to}`),
      head(labels),
      h("tbody", {},
        group(w.income, cols), report.income.map((l) => row(l.account, figures(l))),
        totalRow(w.totalIncome, report.total_income_cents, p.total_income_cents, report.total_income_budget_cents, 1),
        group(w.expenses, cols), report.expenses.map((l) => row(l.account, figures(l))),
        totalRow(w.totalExpenses, report.total_expenses_cents, p.total_expenses_cents, report.total_expenses_budget_cents, -1),
        totalRow(w.net, report.net_cents, p.net_cents, report.net_budget_cents, 1, "grand"))),
    h("p", { class: "hint", id: "ar-budget-note" }, budget
      ? `Budget: ${report.budget.name}. Against budget: positive is better than planned.`
      : "No approved budget covers this year."),
  ];
}

function balanceTable(sheet, w) {
  const p = sheet.previous;
  const line = (l) => row(l.account, [l.cents, l.previous_cents]);
  return [
    h("h2", {}, keepDates(`${w.balanceSheet} as of ${sheet.as_of}`)),
    h("table", { class: "report stack", id: "ar-balance-table" },
      head(["Account", h("span", { class: "date" }, sheet.as_of), h("span", { class: "date" }, p.as_of)]),
      h("tbody", {},
        group(w.assets, 3), sheet.assets.map(line), row(w.totalAssets, [sheet.total_assets_cents, p.total_assets_cents], "total"),
        group(w.liabilities, 3), sheet.liabilities.map(line),
        row(w.totalLiabilities, [sheet.total_liabilities_cents, p.total_liabilities_cents], "total"),
        group(w.equity, 3), sheet.equity.map(line), row(w.retained, [sheet.retained_cents, p.retained_cents]),
        row(w.totalEquity, [sheet.total_equity_cents, p.total_equity_cents], "grand"))),
  ];
}

// The bank accounts: every asset account, and a liability (a card) once reconciled.
function bankTable(sheet, accounts, reconciled) {
  const byName = new Map(accounts.map((a) => [a.name, a]));
  const banks = [...sheet.assets, ...sheet.liabilities].filter((l) => {
    const account = byName.get(l.account);
    return account && (account.kind === "asset" || reconciled[account.id]);
  });
  return [
    h("h2", {}, keepDates(`Bank balances on ${sheet.as_of}`)),
    h("table", { class: "report stack", id: "ar-bank-table" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Account"), h("th", { scope: "col", class: "num" }, "Balance"),
        h("th", { scope: "col" }, "Last reconciled"), h("th", { scope: "col", class: "num" }, "Statement balance"))),
      h("tbody", {}, banks.map((l) => {
        const last = reconciled[byName.get(l.account).id];
        return h("tr", { "data-account": l.account }, h("td", { class: "account" }, l.account), money(l.cents, "Balance"),
          h("td", { class: "date", "data-label": "Last reconciled" }, last ? last.statement_date : "never"),
          money(last?.closing_balance_cents, "Statement balance"));
      }))),
  ];
}

async function reconciliations(through) {
  const events = [];
  let cursor = null;
  for (let n = 0; n < AUDIT_PAGES; n += 1) {
    const page = await orSignIn(api("/audit", { query: { action: "entries.reconciled", limit: 500, cursor } }));
    events.push(...page.items);
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  return reconciledThrough(events, through);
}

async function show(year, start, style) {
  const w = words(style);
  const fy = financialYearOf(year, start);
  const [budgets, accounts] = await Promise.all([orSignIn(api("/budgets")), loadAccounts()]);
  const budget = budgetOfYear(budgets, fy.from, fy.to);
  const [income, sheet, reconciled] = await Promise.all([
    orSignIn(api("/reports/income-statement", { query: { from: fy.from, to: fy.to, compare: "previous_year", budget: budget ? String(budget.id) : "" } })),
    orSignIn(api("/reports/balance-sheet", { query: { as_of: fy.to, compare: "previous_year" } })),
    reconciliations(fy.to),
  ]);
  if (budget) income.budget = budget;
  byId("ar-title").textContent = `Annual report ${fy.name}`;
  byId("ar-period").replaceChildren(...keepDates(`Financial year ${fy.from} to ${fy.to}, against ${income.previous.from} to ${income.previous.to}. Printed ${today()}.`));
  byId("ar-income").replaceChildren(...incomeTable(income, fy, financialYearOf(year - 1, start), w));
  byId("ar-balance").replaceChildren(...balanceTable(sheet, w));
  byId("ar-banks").replaceChildren(...bankTable(sheet, accounts.list, reconciled));
  document.title = `Annual report ${fy.name} · Ledger`;
  byId("annual-report").hidden = false;
}

async function main() {
  const me = await requireSession();
  renderNav("reports", me.email);
  const settings = await orSignIn(api("/settings"));
  let stored = null;
  try {
    stored = Number(window.localStorage.getItem(FY_KEY)) || null;
  } catch {
    stored = null;
  }
  const start = startMonthOf(settings) ?? (stored >= 1 && stored <= 12 ? stored : 1);
  const thisYear = Number(today().slice(0, 4));
  const asked = Number(new URLSearchParams(window.location.search).get("year"));
  const year = Number.isInteger(asked) && asked >= 1900 && asked <= 2200 ? asked : thisYear - 1;
  const select = byId("annual-year");
  const years = [];
  for (let y = Math.max(thisYear, year); y >= Math.min(thisYear - 10, year); y -= 1) years.push(y);
  select.replaceChildren(...years.map((y) => h("option", { value: y, selected: y === year }, financialYearOf(y, start).name)));
  select.addEventListener("change", () => {
    window.location.search = `?year=${select.value}`;
  });
  byId("annual-print").addEventListener("click", () => window.print());
  await show(year, start, await loadStyle());
  document.body.dataset.ready = "true";
}

main().catch((err) => say(byId("message"), err.message));
