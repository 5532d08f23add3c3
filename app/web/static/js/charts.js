// The charts of the Reports and Register pages, plain SVG drawn here (docs/web.md,
// "Charts"): figures per period as bars and/or a line, and shares as horizontal bars.
// Each chart is drawn at the width of its box (again when the box changes width), so
// text keeps its size on a phone; labels along the axis are thinned until none
// touches another. Every period (or share) is a focusable element: hovering, tapping
// or focusing it writes its figures in the read-out line above the chart. Each chart
// comes with its table of the same figures (chartTable), for reading aloud and copying.
import { h, svg } from "./dom.js";
import { formatCents } from "./money.js";
import { labelStep, niceTicks, shortAmount } from "./trends.js";

const CHAR = 7; // an upper bound of one character's width at the charts' 11-12 px

// Draw with draw(width) into target now and whenever target's width changes.
const observers = new WeakMap();
function mount(target, draw) {
  observers.get(target)?.disconnect();
  let drawn = -1;
  const redraw = () => {
    const width = Math.floor(target.clientWidth);
    if (width === drawn || width <= 0) return;
    drawn = width;
    draw(width);
  };
  redraw();
  if (typeof ResizeObserver === "function") {
    const observer = new ResizeObserver(redraw);
    observer.observe(target);
    observers.set(target, observer);
  }
}

// The read-out line and the focusable slots: show(i) writes slot i's words.
function readout(slots, describe, start) {
  const line = h("p", { class: "chart-readout", "aria-live": "polite" });
  const show = (i) => {
    line.textContent = describe(i);
    slots.forEach((slot, j) => slot.classList.toggle("on", i === j));
  };
  slots.forEach((slot, i) => {
    slot.setAttribute("tabindex", "0");
    slot.setAttribute("aria-label", describe(i));
    for (const type of ["pointerenter", "click", "focus"]) slot.addEventListener(type, () => show(i));
  });
  return { line, show: () => show(start) };
}

/**
 * Figures per period: bars side by side (e.g. income and spending) and a line over
 * them (the net, a net worth, a balance).
 * @param {HTMLElement} target
 * @param {{title: string, slots: {short: string, long: string}[],
 *   bars?: {name: string, cls: string, values: number[]}[],
 *   line?: {name: string, cls: string, values: number[]} | null}} chart
 */
export function periodChart(target, { title, slots, bars = [], line = null }) {
  const series = [...bars, ...(line ? [line] : [])];
  const describe = (i) => `${slots[i].long}: ${series.map((s) => `${s.name} ${formatCents(s.values[i])}`).join(", ")}`;
  mount(target, (width) => {
    const n = slots.length;
    const { lo, hi, ticks } = niceTicks(series.flatMap((s) => s.values));
    const tickText = ticks.map(shortAmount);
    const left = Math.max(...tickText.map((t) => t.length)) * CHAR + 10;
    const labelWidth = Math.max(...slots.map((s) => s.short.length)) * CHAR;
    const right = Math.max(12, labelWidth / 2);
    const top = 10;
    const height = 230;
    const bottom = 30;
    const plot = Math.max(40, width - left - right);
    const slot = plot / Math.max(1, n);
    const y = (cents) => top + (hi - cents) * (height - top - bottom) / (hi - lo);
    const x = (i) => left + slot * (i + 0.5);
    const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "group", class: "chart-svg" });
    root.append(svg("title", {}, title));
    ticks.forEach((t, i) => {
      root.append(svg("line", { x1: left, x2: left + plot, y1: y(t), y2: y(t), class: t === 0 ? "axis" : "grid" }),
        svg("text", { x: left - 6, y: y(t) + 4, "text-anchor": "end", class: "tick" }, tickText[i]));
    });
    const hits = [];
    const band = slot * 0.7;
    const barWidth = bars.length ? band / bars.length : 0;
    for (let i = 0; i < n; i += 1) {
      const group = svg("g", { class: "period" });
      group.append(svg("rect", { x: left + slot * i, y: top, width: slot, height: height - top - bottom, class: "hit" }));
      bars.forEach((s, k) => {
        const v = s.values[i];
        group.append(svg("rect", {
          x: x(i) - band / 2 + k * barWidth, y: Math.min(y(v), y(0)),
          width: Math.max(1, barWidth - 1), height: Math.max(1, Math.abs(y(v) - y(0))), class: `bar ${s.cls}`,
        }));
      });
      if (line) group.append(svg("circle", { cx: x(i), cy: y(line.values[i]), r: n > 40 ? 2 : 3.5, class: `dot ${line.cls}` }));
      hits.push(group);
      root.append(group);
    }
    if (line) {
      const points = line.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
      root.insertBefore(svg("polyline", { points, class: `line ${line.cls}` }), hits[0] ?? null);
    }
    const step = labelStep(n, slot, labelWidth);
    for (let i = n - 1; i >= 0; i -= step) {
      root.append(svg("text", { x: x(i), y: height - 8, "text-anchor": "middle", class: "label" }, slots[i].short));
    }
    const { line: out, show } = readout(hits, describe, n - 1);
    const legend = h("p", { class: "chart-legend" }, ...series.map((s) => h("span", { class: `key ${s.cls}` }, s.name)));
    target.replaceChildren(out, root, legend);
    if (n) show();
  });
}

/**
 * Shares as horizontal bars, largest first: each row's name and figure on a line,
 * its bar under them. A name too long for the width is cut with … (whole in the table).
 * @param {HTMLElement} target
 * @param {{title: string, rows: {label: string, cents: number}[], describe: (i: number) => string}} chart
 */
export function shareChart(target, { title, rows, describe }) {
  mount(target, (width) => {
    const rowHeight = 38;
    const height = Math.max(1, rows.length * rowHeight);
    const max = Math.max(1, ...rows.map((r) => Math.abs(r.cents)));
    const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "group", class: "chart-svg" });
    root.append(svg("title", {}, title));
    const hits = rows.map((row, i) => {
      const top = i * rowHeight;
      const value = formatCents(row.cents);
      const room = Math.floor((width - value.length * CHAR - 16) / CHAR);
      const name = row.label.length > room ? `${row.label.slice(0, Math.max(1, room - 1))}…` : row.label;
      const group = svg("g", { class: "share" });
      group.append(
        svg("rect", { x: 0, y: top, width, height: rowHeight, class: "hit" }),
        svg("text", { x: 2, y: top + 15, class: "label" }, name),
        svg("text", { x: width - 2, y: top + 15, "text-anchor": "end", class: "value" }, value),
        svg("rect", { x: 0, y: top + 21, width: Math.max(2, (Math.abs(row.cents) / max) * width), height: 11,
          class: row.cents < 0 ? "bar negative" : "bar spending" }),
      );
      root.append(group);
      return group;
    });
    const { line, show } = readout(hits, describe, 0);
    target.replaceChildren(line, root);
    if (rows.length) show();
  });
}

/**
 * The table beside a chart: the same figures, one row per period or share.
 * @param {{id: string, caption: any, head: string[], rows: {cells: any[]}[]}} table
 */
export function chartTable({ id, caption, head, rows }) {
  return h("table", { class: "report chart-table", id },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, head.map((label, i) => h("th", { scope: "col", class: i ? "num" : "" }, label)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, row.cells.map((cell, i) => (i
      ? h("td", { class: "num", "data-label": head[i] }, typeof cell === "number" ? formatCents(cell) : cell)
      : h("th", { scope: "row" }, cell)))))));
}
