// An account's forecast drawn (docs/web.md "Expected"): its balance from today to the
// forecast's end as a step line (the balance holds until the next expected item), the
// zero line when the balance crosses it, and the lowest point marked. The figures are
// GET /reports/forecast's, drawn as given; the table beside it (forecastRows) holds the
// same figures for reading aloud and copying. SVG in the house style of chart.js.
import { svg } from "./dom.js";
import { formatCents } from "./money.js";
import { daysBetween } from "./schedule-words.js";


// The balance after each item: [{day, on, balance_cents}], starting with today's
// balance at day 0. An overdue or due item is counted today (the API's rule): its day is
// never before 0. Items on one day are steps at one x, so the line reaches every running
// balance (the lowest one included, where its mark is).
export function forecastSteps(forecast) {
  const steps = [{ day: 0, on: forecast.from, balance_cents: forecast.balance_cents }];
  for (const item of forecast.items) {
    const day = Math.max(0, daysBetween(forecast.from, item.due_on));
    steps.push({ day, on: day === 0 ? forecast.from : item.due_on, balance_cents: item.balance_cents });
  }
  return steps;
}

// The table's rows: today's balance, then each item with its running balance.
export function forecastRows(forecast) {
  return [
    { on: forecast.from, what: "Balance today", amount_cents: null, balance_cents: forecast.balance_cents },
    ...forecast.items.map((item) => ({
      on: item.due_on, what: item.name, amount_cents: item.amount_cents, balance_cents: item.balance_cents,
    })),
  ];
}

// forecast → <svg>: x is the days from `from` to `to`, y the balance.
export function forecastChart(forecast, title) {
  const width = 640;
  const height = 240;
  const left = 8;
  const right = 8;
  const top = 22;
  const bottom = 26;
  const span = Math.max(1, daysBetween(forecast.from, forecast.to));
  const steps = forecastSteps(forecast);
  const values = [...steps.map((s) => s.balance_cents), 0];
  const high = Math.max(...values);
  const low = Math.min(...values);
  const range = Math.max(1, high - low);
  const x = (day) => left + (Math.min(day, span) / span) * (width - left - right);
  const y = (cents) => top + ((high - cents) / range) * (height - top - bottom);

  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", class: "forecast-chart", "aria-labelledby": "forecast-chart-title" });
  root.append(svg("title", { id: "forecast-chart-title" }, title));
  root.append(svg("line", { x1: left, x2: width - right, y1: y(0), y2: y(0), class: "zero" }));
  let d = `M ${x(0)} ${y(steps[0].balance_cents)}`;
  for (let i = 1; i < steps.length; i += 1) {
    d += ` H ${x(steps[i].day)} V ${y(steps[i].balance_cents)}`;
  }
  d += ` H ${x(span)}`;
  root.append(svg("path", { d, class: "balance" }));

  const lowest = forecast.lowest;
  const lowDay = Math.max(0, daysBetween(forecast.from, lowest.on));
  const lx = x(lowDay);
  const ly = y(lowest.balance_cents);
  const label = `Lowest ${formatCents(lowest.balance_cents)} on ${lowest.on}`;
  const anchor = lx > width * 0.6 ? "end" : lx < width * 0.25 ? "start" : "middle";
  const below = ly < top + 20;
  root.append(
    svg("circle", { cx: lx, cy: ly, r: 5, class: "lowest", "data-on": lowest.on }),
    svg("text", { x: lx, y: below ? ly + 18 : ly - 9, "text-anchor": anchor, class: "lowest-label" }, label),
    svg("text", { x: left, y: height - 6, class: "axis-label" }, forecast.from),
    svg("text", { x: width - right, y: height - 6, "text-anchor": "end", class: "axis-label" }, forecast.to),
  );
  return root;
}
