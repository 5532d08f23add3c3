// Income statement and balance sheet, shown exactly as the API gives them
// (reports are already sign-adjusted, README "A short tour"; never flip a sign here).
import { barChart } from "./chart.js";
import { h, keepDates } from "./dom.js";
import { formatCents } from "./money.js";
import { words } from "./vocab.js";

const money = (cents) => h("td", { class: "num" }, formatCents(cents));
// An account's line; with onAccount(name) its name is a button that lists what makes it up.
const name = (account, onAccount) => (onAccount
  ? h("button", { type: "button", class: "account-line", onclick: () => onAccount(account) }, account)
  : account);
// Year against year (`compare=previous_year`): each figure, last year's and the difference.
const figures = (cents, previous) => (previous === undefined
  ? [money(cents)]
  : [money(cents), money(previous), money(cents - previous)]);
const lines = (list, onAccount, compared) => list.map((line) => h("tr", {},
  h("td", {}, name(line.account, onAccount)), figures(line.cents, compared ? line.previous_cents : undefined)));
const total = (label, cents, previous, cls = "total") => h("tr", { class: cls }, h("th", { scope: "row" }, label), figures(cents, previous));
const heading = (label, columns) => h("tr", { class: "group" }, h("th", { colspan: columns, scope: "rowgroup" }, label));
// The column heads of a comparison (none for a plain statement).
const heads = (thisLabel, previous) => (previous
  ? h("thead", {}, h("tr", {}, h("th", { scope: "col" }, h("span", { class: "sr-only" }, "Account")),
    h("th", { scope: "col", class: "num" }, thisLabel), h("th", { scope: "col", class: "num" }, "Last year"),
    h("th", { scope: "col", class: "num" }, "Difference")))
  : null);

export function renderIncomeStatement(target, chartTarget, report, style, { onAccount = null } = {}) {
  const w = words(style);
  const p = report.previous;
  const cols = p ? 4 : 2;
  const caption = p
    ? `${w.incomeStatement}, ${report.from} to ${report.to}, against ${p.from} to ${p.to}`
    : `${w.incomeStatement}, ${report.from ?? "start"} to ${report.to ?? "today"}`;
  target.replaceChildren(
    h("table", { class: p ? "report compared" : "report", id: "income-statement-table" },
      h("caption", {}, keepDates(caption)),
      heads("This year", p),
      h("tbody", {},
        heading(w.income, cols), lines(report.income, onAccount, p), total(w.totalIncome, report.total_income_cents, p?.total_income_cents),
        heading(w.expenses, cols), lines(report.expenses, onAccount, p), total(w.totalExpenses, report.total_expenses_cents, p?.total_expenses_cents),
        total(w.net, report.net_cents, p?.net_cents, "grand"))),
  );
  chartTarget.replaceChildren(barChart([
    { label: w.income, cents: report.total_income_cents },
    { label: w.expenses, cents: report.total_expenses_cents },
    { label: w.net, cents: report.net_cents },
  ], w.incomeStatement));
}

export function renderBalanceSheet(target, chartTarget, report, style, { onAccount = null } = {}) {
  const w = words(style);
  const p = report.previous;
  const cols = p ? 4 : 2;
  const caption = p ? `${w.balanceSheet} as of ${report.as_of}, against ${p.as_of}` : `${w.balanceSheet} as of ${report.as_of}`;
  target.replaceChildren(
    h("table", { class: p ? "report compared" : "report", id: "balance-sheet-table" },
      h("caption", {}, keepDates(caption)),
      heads("This year", p),
      h("tbody", {},
        heading(w.assets, cols), lines(report.assets, onAccount, p), total(w.totalAssets, report.total_assets_cents, p?.total_assets_cents),
        heading(w.liabilities, cols), lines(report.liabilities, onAccount, p), total(w.totalLiabilities, report.total_liabilities_cents, p?.total_liabilities_cents),
        heading(w.equity, cols), lines(report.equity, onAccount, p),
        h("tr", {}, h("td", {}, w.retained), figures(report.retained_cents, p?.retained_cents)),
        total(w.totalEquity, report.total_equity_cents, p?.total_equity_cents, "grand"))),
  );
  chartTarget.replaceChildren(barChart([
    { label: w.assets, cents: report.total_assets_cents },
    { label: w.liabilities, cents: report.total_liabilities_cents },
    { label: w.totalEquity, cents: report.total_equity_cents },
  ], w.balanceSheet));
}
