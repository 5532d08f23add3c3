// A small horizontal bar chart in SVG, drawn around a zero line so a negative
// figure points left: values are drawn as given, never flipped.
import { svg } from "./dom.js";
import { formatCents } from "./money.js";


// rows: [{label, cents}] → <svg>. Pixel geometry only uses floats; amounts are
// shown with formatCents from the integer cents.
export function barChart(rows, title) {
  const width = 460;
  const labelWidth = 150;
  const valueWidth = 110;
  const rowHeight = 30;
  const plot = width - labelWidth - valueWidth;
  const height = rows.length * rowHeight + 10;
  const max = Math.max(1, ...rows.map((r) => Math.abs(r.cents)));
  const hasNegative = rows.some((r) => r.cents < 0);
  const zero = labelWidth + (hasNegative ? plot / 2 : 0);
  const scale = (hasNegative ? plot / 2 : plot) / max;

  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", class: "bars" });
  root.append(svg("title", {}, title));
  rows.forEach((row, i) => {
    const y = 5 + i * rowHeight;
    const length = Math.abs(row.cents) * scale;
    const x = row.cents < 0 ? zero - length : zero;
    root.append(
      svg("text", { x: 0, y: y + 19, class: "bar-label" }, row.label),
      svg("rect", { x, y: y + 4, width: Math.max(length, 1), height: rowHeight - 10,
        class: row.cents < 0 ? "bar negative" : "bar" }),
      svg("text", { x: width, y: y + 19, "text-anchor": "end", class: "bar-value" }, formatCents(row.cents)),
    );
  });
  root.append(svg("line", { x1: zero, x2: zero, y1: 0, y2: height, class: "axis" }));
  return root;
}
