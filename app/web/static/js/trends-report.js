// The Reports page's trends (docs/web.md, "Charts"): from GET /reports/series, income
// and spending per month, quarter or year with the net; spending by account over the
// window (largest first, the smallest as "Other"); the net worth at each period's end.
// Each chart (charts.js) has its table of the same figures under it.
import { api, orSignIn } from "./api.js";
import { chartTable, periodChart, shareChart } from "./charts.js";
import { h, keepDates, say, today } from "./dom.js";
import { formatCents } from "./money.js";
import { seriesRows, spendingByAccount } from "./trends.js";
import { words } from "./vocab.js";

// The API's default window, written in the form: the twelve whole months ending this month.
function defaultWindow(day) {
  const year = Number(day.slice(0, 4));
  const month = Number(day.slice(5, 7));
  const pad = (n) => String(n).padStart(2, "0");
  const start = month === 12 ? `${year}-01-01` : `${year - 1}-${pad(month + 1)}-01`;
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return { from: start, to: `${year}-${pad(month)}-${pad(last)}` };
}

export function mountTrends(section, style) {
  const w = words(style);
  const initial = defaultWindow(today());
  const field = (id, label, input) => h("label", {}, label, input);
  const from = h("input", { id: "tr-from", type: "date", value: initial.from });
  const to = h("input", { id: "tr-to", type: "date", value: initial.to });
  const interval = h("select", { id: "tr-interval" },
    h("option", { value: "month" }, "month"), h("option", { value: "quarter" }, "quarter"), h("option", { value: "year" }, "year"));
  const out = h("p", { id: "tr-message", role: "alert", hidden: true });
  const part = (id, title) => {
    const chart = h("div", { id: `${id}-chart`, class: "chart-box" });
    const table = h("div", { id: `${id}-table`, class: "chart-table-box" });
    return { chart, table, box: h("div", { class: "chart-part", id }, h("h3", {}, title), chart, table) };
  };
  const flow = part("flow", `${w.income} and ${w.expenses.toLowerCase()}`);
  const spend = part("spend", `${w.expenses} by account`);
  const worth = part("worth", "Net worth");
  const form = h("form", { id: "tr-form", class: "inline", novalidate: true },
    field("tr-from", "From", from), field("tr-to", "To", to), field("tr-interval", "Per", interval),
    h("button", { type: "submit" }, "Show"));
  section.replaceChildren(h("h2", {}, "Trends"), form, out, h("div", { class: "chart-parts" }, flow.box, spend.box, worth.box));

  let asked = 0;
  async function load() {
    say(out, "");
    const mine = ++asked;
    try {
      const series = await orSignIn(api("/reports/series", { query: { from: from.value, to: to.value, interval: interval.value } }));
      if (mine !== asked) return;
      draw(series);
    } catch (err) {
      for (const p of [flow, spend, worth]) {
        p.chart.replaceChildren();
        p.table.replaceChildren();
      }
      say(out, err.message, "error", /from/.test(err.message) ? from : /to/.test(err.message) ? to : null);
    }
  }

  function draw(series) {
    const rows = seriesRows(series);
    // (A fresh copy per caption: a node can stand in one place only.)
    const span = () => keepDates(`, ${series.periods[0]?.from ?? from.value} to ${series.periods.at(-1)?.to ?? to.value}`);
    periodChart(flow.chart, {
      title: `${w.income} and ${w.expenses.toLowerCase()} per ${series.interval}`,
      slots: rows,
      bars: [{ name: w.income, cls: "income", values: rows.map((r) => r.income) },
        { name: w.expenses, cls: "spending", values: rows.map((r) => r.spending) }],
      line: { name: w.net, cls: "net", values: rows.map((r) => r.net) },
    });
    flow.table.replaceChildren(chartTable({
      id: "flow-figures", caption: [`${w.income} and ${w.expenses.toLowerCase()}`, ...span()],
      head: ["Period", w.income, w.expenses, w.net],
      rows: rows.map((r) => ({ cells: [r.long, r.income, r.spending, r.net] })),
    }));
    const shares = spendingByAccount(series);
    const total = shares.reduce((sum, s) => sum + s.cents, 0);
    const describe = (i) => `${shares[i].label}: ${formatCents(shares[i].cents)}${shares[i].other ? ` (${shares[i].other.join(", ")})` : ""}`;
    if (shares.length) shareChart(spend.chart, { title: `${w.expenses} by account`, rows: shares, describe });
    else spend.chart.replaceChildren(h("p", { class: "hint" }, "Nothing spent in this window."));
    spend.table.replaceChildren(chartTable({
      id: "spend-figures", caption: [`${w.expenses} by account`, ...span()],
      head: ["Account", "Amount"],
      rows: [...shares.map((s) => ({ cells: [s.label, s.cents] })), { cells: ["Total", total] }],
    }));
    periodChart(worth.chart, {
      title: "Net worth at the end of each period",
      slots: rows,
      line: { name: "Net worth", cls: "worth", values: rows.map((r) => r.netWorth) },
    });
    worth.table.replaceChildren(chartTable({
      id: "worth-figures", caption: ["Net worth (assets minus liabilities) at each period's end", ...span()],
      head: ["Period", "Net worth"],
      rows: rows.map((r) => ({ cells: [r.long, r.netWorth] })),
    }));
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    load();
  });
  interval.addEventListener("change", () => load());
  return load();
}
