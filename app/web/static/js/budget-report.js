// Budget against actual, on the Reports page: the income statement with a budget
// (GET /reports/income-statement?budget=), one call for the window and one per month,
// shown as the API gives it (variance positive = better than plan), a chart per
// account and month, and a CSV of every figure. Mounted by pages/reports.js.
import { api, orSignIn } from "./api.js";
import { budgetMonths, budgetSpans, openingBudget, SPANS, spanOf } from "./budget-math.js";
import { byId, h, keepDates, say, today } from "./dom.js";
import { saveBlob, toCsv } from "./download.js";
import { formatCents } from "./money.js";
import { words } from "./vocab.js";

const NS = "http://www.w3.org/2000/svg";
const state = { budgets: [], window: null, months: [], style: "personal" };

const money = (cents, cls = "") => h("td", { class: `num ${cls}` }, formatCents(cents));
const varianceClass = (cents) => (cents > 0 ? "variance-pos" : cents < 0 ? "variance-neg" : "");
const amount = (cents) => formatCents(cents).replaceAll(",", "");

function svg(tag, attrs, text) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

// Planned against actual per month, as paired vertical bars around a zero line.
export function monthChart(points, title) {
  const width = 460;
  const height = 190;
  const top = 18;
  const bottom = 36;
  const left = 62; // room for the scale's figures
  const plotHeight = height - top - bottom;
  const max = Math.max(1, ...points.flatMap((p) => [Math.abs(p.budget), Math.abs(p.actual)]));
  const negative = points.some((p) => p.budget < 0 || p.actual < 0);
  const zero = top + (negative ? plotHeight / 2 : plotHeight);
  const scale = (negative ? plotHeight / 2 : plotHeight) / max;
  const slot = (width - left) / Math.max(points.length, 1);
  const bar = Math.max(3, slot * 0.36);
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", class: "budget-chart" });
  root.append(svg("title", {}, title));
  const scaleGroup = svg("g", { class: "scale" });
  root.append(scaleGroup); // drawn first, under the bars
  points.forEach((p, i) => {
    const x = left + i * slot + slot * 0.12;
    for (const [value, cls, dx] of [[p.budget, "planned", 0], [p.actual, "actual", bar]]) {
      const length = Math.max(Math.abs(value) * scale, value === 0 ? 0 : 1);
      root.append(svg("rect", { x: x + dx, y: value < 0 ? zero : zero - length, width: bar, height: length, class: cls },
      ));
    }
    root.append(svg("text", { x: x + bar, y: height - 20, "text-anchor": "middle" }, p.label.slice(0, 3)));
  });
  // The scale: the largest figure, half of it and zero (minus the largest below zero).
  const ticks = [max, Math.round(max / 2), 0, ...(negative ? [-Math.round(max / 2), -max] : [])];
  for (const cents of ticks) {
    const y = zero - cents * scale;
    scaleGroup.append(
      svg("line", { x1: left - 4, x2: width, y1: y, y2: y, class: cents === 0 ? "axis" : "gridline" }),
      svg("text", { x: left - 6, y: y + 4, "text-anchor": "end" }, formatCents(cents)),
    );
  }
  return root;
}

function lineRows(lines) {
  return lines.map((l) => h("tr", {},
    h("td", { "data-label": "Account" }, l.account),
    money(l.budget_cents), money(l.cents), money(l.variance_cents, varianceClass(l.variance_cents))));
}

function renderTable(report) {
  const w = words(state.style);
  const heading = (label) => h("tr", { class: "group" }, h("th", { colspan: 4, scope: "rowgroup" }, label));
  const total = (label, budget, actual, variance, cls = "total") => h("tr", { class: cls },
    h("th", { scope: "row" }, label), money(budget), money(actual), money(variance, varianceClass(variance)));
  const incomeVariance = report.total_income_cents - report.total_income_budget_cents;
  const expensesVariance = report.total_expenses_budget_cents - report.total_expenses_cents;
  byId("bva-table").replaceChildren(h("table", { class: "report", id: "budget-report-table" },
    h("caption", {}, keepDates(`${report.budget.name}: ${report.from} to ${report.to}`)),
    h("thead", {}, h("tr", {}, h("th", {}, "Account"), h("th", { class: "num" }, "Budget"),
      h("th", { class: "num" }, "Actual"), h("th", { class: "num" }, "Variance"))),
    h("tbody", {},
      heading(w.income), lineRows(report.income),
      total(w.totalIncome, report.total_income_budget_cents, report.total_income_cents, incomeVariance),
      heading(w.expenses), lineRows(report.expenses),
      total(w.totalExpenses, report.total_expenses_budget_cents, report.total_expenses_cents, expensesVariance),
      total(w.net, report.net_budget_cents, report.net_cents, report.net_cents - report.net_budget_cents, "grand"))));
  byId("bva-hint").hidden = false;
}

function renderChart() {
  const target = byId("bva-chart");
  const account = byId("bva-account").value;
  if (!account || !state.months.length) return target.replaceChildren();
  const points = state.months.map(({ label, report }) => {
    const line = [...report.income, ...report.expenses].find((l) => l.account === account);
    return { label, budget: line?.budget_cents ?? 0, actual: line?.cents ?? 0 };
  });
  target.replaceChildren(
    monthChart(points, `${account}: budget and actual per month`),
    h("div", { class: "legend" }, h("span", {}, h("span", { class: "swatch planned" }), "Budget"),
      h("span", {}, h("span", { class: "swatch actual" }), "Actual")),
  );
}

// Every figure: the window per account, then each account month by month.
export function budgetCsvRows(report, months) {
  const rows = [["section", "account", "month", "budget", "actual", "variance"]];
  const add = (section, line, month) =>
    rows.push([section, line.account, month, amount(line.budget_cents), amount(line.cents), amount(line.variance_cents)]);
  const window = `${report.from} to ${report.to}`;
  report.income.forEach((l) => add("income", l, window));
  report.expenses.forEach((l) => add("expenses", l, window));
  for (const { label, report: month } of months) {
    month.income.forEach((l) => add("income", l, label));
    month.expenses.forEach((l) => add("expenses", l, label));
  }
  rows.push(["net", "", window, amount(report.net_budget_cents), amount(report.net_cents),
    amount(report.net_cents - report.net_budget_cents)]);
  return rows;
}

// The chosen budget's months in the pickers, set to the year to date.
function fillMonths() {
  const budget = state.budgets.find((b) => String(b.id) === byId("bva-budget").value);
  const months = budget ? budgetMonths(budget.starts_on) : [];
  byId("bva-from").replaceChildren(...months.map((m) => h("option", { value: m.from }, m.label)));
  byId("bva-to").replaceChildren(...months.map((m) => h("option", { value: m.to }, m.label)));
  if (budget) setSpan("ytd");
}

const spansNow = () => {
  const budget = state.budgets.find((b) => String(b.id) === byId("bva-budget").value);
  return budget ? budgetSpans(budget.starts_on, today()) : null;
};

function setSpan(key) {
  const spans = spansNow();
  if (!spans) return;
  byId("bva-from").value = spans[key].from;
  byId("bva-to").value = spans[key].to;
  markSpan();
}

// Which span is shown: its preset pressed, and said in words above the table.
function markSpan() {
  const spans = spansNow();
  const from = byId("bva-from");
  const to = byId("bva-to");
  const key = spans ? spanOf(from.value, to.value, spans) : null;
  for (const button of byId("bva-spans").querySelectorAll("button")) {
    button.setAttribute("aria-pressed", String(button.dataset.span === key));
  }
  const name = SPANS.find(([k]) => k === key)?.[1];
  const first = from.selectedOptions[0]?.textContent ?? "";
  const last = to.selectedOptions[0]?.textContent ?? "";
  const months = first === last ? first : `${first} to ${last}`;
  byId("bva-span").textContent = name ? `Showing ${name.toLowerCase()}: ${months}` : `Showing ${months}`;
}

async function compare() {
  const out = byId("bva-message");
  say(out, "");
  const budget = byId("bva-budget").value;
  const from = byId("bva-from").value;
  const to = byId("bva-to").value;
  if (!budget) return say(out, "Choose a budget.", "error", byId("bva-budget"));
  try {
    const query = (f, t) => api("/reports/income-statement", { query: { from: f, to: t, budget } });
    const chosen = state.budgets.find((b) => String(b.id) === budget);
    const inside = budgetMonths(chosen.starts_on).filter((m) => m.from >= from && m.to <= to);
    // The window and its months in one round.
    const [report, ...monthly] = await Promise.all(
      [{ from, to }, ...inside].map((m) => orSignIn(query(m.from, m.to))));
    state.window = report;
    state.months = inside.map((m, i) => ({ label: m.label, report: monthly[i] }));
    renderTable(report);
    const names = [...report.income, ...report.expenses].map((l) => l.account);
    // Keep the account charted; at first, the first line that has a budget.
    const planned = [...report.income, ...report.expenses].find((l) => l.budget_cents !== 0);
    const keep = byId("bva-account").value || planned?.account;
    byId("bva-account").replaceChildren(...names.map((n) => h("option", { value: n, selected: n === keep }, n)));
    byId("bva-account-label").hidden = names.length === 0;
    renderChart();
    byId("bva-csv").disabled = false;
  } catch (err) {
    say(out, err.message, "error", /'to'/.test(err.message) ? byId("bva-to") : /'from'/.test(err.message) ? byId("bva-from") : null);
  }
}

// Build the card inside `section` (an empty <section> on the Reports page).
export async function mountBudgetReport(section, style) {
  state.style = style;
  section.replaceChildren(
    h("h2", {}, "Budget against actual"),
    h("p", { class: "hint", id: "bva-intro" }, "Compare the books with a budget, month by month. A positive variance is better than the plan: more income, or less spending."),
    h("form", { id: "bva-form", class: "inline", novalidate: true },
      h("label", {}, "Budget ", h("select", { id: "bva-budget" })),
      h("label", {}, "From ", h("select", { id: "bva-from" })),
      h("label", {}, "To ", h("select", { id: "bva-to" })),
      h("button", { type: "submit", id: "bva-show" }, "Compare"),
      h("button", { type: "button", id: "bva-csv", class: "secondary", disabled: true }, "Download CSV")),
    h("div", { id: "bva-spans", class: "presets", role: "group", "aria-label": "Span" },
      SPANS.map(([key, label]) => h("button", { type: "button", class: "secondary", "data-span": key, "aria-pressed": "false" }, label))),
    h("p", { id: "bva-span", class: "period", role: "status" }),
    h("p", { id: "bva-message", role: "alert", hidden: true }),
    h("div", { class: "report-row" },
      h("div", { id: "bva-table" }),
      h("div", {},
        h("label", { id: "bva-account-label", hidden: true }, "Chart for ", h("select", { id: "bva-account" })),
        h("div", { id: "bva-chart", class: "chart" }))),
    h("p", { class: "hint", id: "bva-hint", hidden: true }, "Figures are signed as in the income statement; budgets are planned on the Budgets page."),
  );
  addStyles();
  state.budgets = await orSignIn(api("/budgets"));
  if (!state.budgets.length) {
    byId("bva-form").hidden = true;
    byId("bva-intro").replaceChildren("No budgets yet: plan one on the ", h("a", { href: "/budgets" }, "Budgets page"), ".");
    return;
  }
  // Start with the budget whose year holds today, an approved one first (budget-math.js).
  const opening = openingBudget(state.budgets, today());
  byId("bva-budget").replaceChildren(...state.budgets.map((b) =>
    h("option", { value: b.id, selected: b === opening }, `${b.name}${b.approved_at ? "" : " (draft)"}`)));
  fillMonths();
  byId("bva-budget").addEventListener("change", fillMonths);
  byId("bva-form").addEventListener("submit", (e) => { e.preventDefault(); markSpan(); compare(); });
  byId("bva-spans").addEventListener("click", (e) => {
    const key = e.target instanceof HTMLElement ? e.target.dataset.span : null;
    if (!key) return;
    setSpan(key);
    compare();
  });
  for (const id of ["bva-from", "bva-to"]) byId(id).addEventListener("change", markSpan);
  byId("bva-account").addEventListener("change", renderChart);
  byId("bva-csv").addEventListener("click", () => {
    const r = state.window;
    saveBlob(new Blob([toCsv(budgetCsvRows(r, state.months))], { type: "text/csv" }),
      `budget-vs-actual-${r.from}-${r.to}.csv`);
  });
  await compare();
}

// The report's styles live with the Budgets page's (css/budgets.css); add them once.
function addStyles() {
  if (document.querySelector('link[href="/static/css/budgets.css"]')) return;
  document.head.append(h("link", { rel: "stylesheet", href: "/static/css/budgets.css" }));
}
