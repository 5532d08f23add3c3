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
const lines = (list, onAccount) => list.map((line) => h("tr", {}, h("td", {}, name(line.account, onAccount)), money(line.cents)));
const total = (label, cents, cls = "total") => h("tr", { class: cls }, h("th", { scope: "row" }, label), money(cents));
const heading = (label) => h("tr", { class: "group" }, h("th", { colspan: 2, scope: "rowgroup" }, label));

export function renderIncomeStatement(target, chartTarget, report, style, { onAccount = null } = {}) {
  const w = words(style);
  target.replaceChildren(
    h("table", { class: "report", id: "income-statement-table" },
      h("caption", {}, keepDates(`${w.incomeStatement}, ${report.from ?? "start"} to ${report.to ?? "today"}`)),
      h("tbody", {},
        heading(w.income), lines(report.income, onAccount), total(w.totalIncome, report.total_income_cents),
        heading(w.expenses), lines(report.expenses, onAccount), total(w.totalExpenses, report.total_expenses_cents),
        total(w.net, report.net_cents, "grand"))),
  );
  chartTarget.replaceChildren(barChart([
    { label: w.income, cents: report.total_income_cents },
    { label: w.expenses, cents: report.total_expenses_cents },
    { label: w.net, cents: report.net_cents },
  ], w.incomeStatement));
}

export function renderBalanceSheet(target, chartTarget, report, style, { onAccount = null } = {}) {
  const w = words(style);
  target.replaceChildren(
    h("table", { class: "report", id: "balance-sheet-table" },
      h("caption", {}, keepDates(`${w.balanceSheet} as of ${report.as_of}`)),
      h("tbody", {},
        heading(w.assets), lines(report.assets, onAccount), total(w.totalAssets, report.total_assets_cents),
        heading(w.liabilities), lines(report.liabilities, onAccount), total(w.totalLiabilities, report.total_liabilities_cents),
        heading(w.equity), lines(report.equity, onAccount),
        h("tr", {}, h("td", {}, w.retained), money(report.retained_cents)),
        total(w.totalEquity, report.total_equity_cents, "grand"))),
  );
  chartTarget.replaceChildren(barChart([
    { label: w.assets, cents: report.total_assets_cents },
    { label: w.liabilities, cents: report.total_liabilities_cents },
    { label: w.totalEquity, cents: report.total_equity_cents },
  ], w.balanceSheet));
}
