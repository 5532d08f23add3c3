// The reports' period presets (docs/web.md, "Reports"): this and last month, this
// and last year, this and last financial year. Pure, so node tests it
// (tests/js/periods.test.mjs). Days are "YYYY-MM-DD" text, the one date format the
// pages and their CSV files use; no time zone can move a day.

const pad = (n) => String(n).padStart(2, "0");
const day = (y, m, d) => `${y}-${pad(m)}-${pad(d)}`;

// The last day of month m (1-12) of year y.
function lastDay(y, m) {
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

function monthSpan(y, m) {
  return { from: day(y, m, 1), to: day(y, m, lastDay(y, m)) };
}

// The financial year holding `today` that starts on the first of month `start`
// (1 = January: the calendar year), shifted by `back` years.
function financialYear(y, m, start, back) {
  const first = (m >= start ? y : y - 1) - back;
  const endYear = start === 1 ? first : first + 1;
  const endMonth = start === 1 ? 12 : start - 1;
  return { from: day(first, start, 1), to: day(endYear, endMonth, lastDay(endYear, endMonth)) };
}

export const PRESETS = [
  ["this-month", "This month"],
  ["last-month", "Last month"],
  ["this-year", "This year"],
  ["last-year", "Last year"],
  ["this-fy", "This financial year"],
  ["last-fy", "Last financial year"],
];

// today "YYYY-MM-DD", the financial year's first month (1-12) → {key: {from, to}}.
export function periods(today, fyStart = 1) {
  const [y, m] = today.split("-").map(Number);
  const start = Number.isInteger(fyStart) && fyStart >= 1 && fyStart <= 12 ? fyStart : 1;
  const prior = m === 1 ? [y - 1, 12] : [y, m - 1];
  return {
    "this-month": monthSpan(y, m),
    "last-month": monthSpan(...prior),
    "this-year": { from: day(y, 1, 1), to: day(y, 12, 31) },
    "last-year": { from: day(y - 1, 1, 1), to: day(y - 1, 12, 31) },
    "this-fy": financialYear(y, m, start, 0),
    "last-fy": financialYear(y, m, start, 1),
  };
}

// Which preset (key) a period is, or null: the first one that matches exactly.
export function presetOf(from, to, table) {
  return PRESETS.map(([key]) => key).find((key) => table[key].from === from && table[key].to === to) ?? null;
}

// The financial year's first month from the settings, when they carry one
// (`financial_year_start` as "MM-DD" or a month number), else null.
export function startMonthOf(settings) {
  const value = settings?.financial_year_start;
  if (Number.isInteger(value) && value >= 1 && value <= 12) return value;
  const match = typeof value === "string" ? /^(\d{2})-(\d{2})$/.exec(value) : null;
  const month = match ? Number(match[1]) : NaN;
  return month >= 1 && month <= 12 ? month : null;
}
