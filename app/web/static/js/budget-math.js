// Budget arithmetic the Budgets page and the budget report share, in integer cents
// (docs/ledger.md "Budgets"): the exact annual split the server applies, signed
// amounts as a treasurer types them, and the months a budget covers.
import { AmountError, formatCents, parseDollars } from "./money.js";

const MONTH_NAMES = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

// An annual figure → twelve months that add up to it exactly: q, r = divmod(annual, 12)
// with floor division (as the server), the first r months q + 1, the others q.
export function splitAnnual(annual) {
  if (!Number.isSafeInteger(annual)) throw new TypeError(`not integer cents: ${annual}`);
  const q = Math.floor(annual / 12);
  const r = annual - 12 * q;
  return Array.from({ length: 12 }, (_, i) => (i < r ? q + 1 : q));
}

export const sum = (list) => list.reduce((a, b) => a + b, 0);

// A budget figure as typed: empty is 0; a leading "-" makes a negative plan (a
// refund expected on an expense, say); otherwise money.js's rules (no rounding).
export function parseBudgetCents(text) {
  let raw = typeof text === "string" ? text.trim() : "";
  if (raw === "") return 0;
  let sign = 1;
  if (/^[-\u2212]/u.test(raw)) {
    sign = -1;
    raw = raw.slice(1).trim();
  }
  if (/^[$£€¥]?\s*0*(\.0{0,2})?$/u.test(raw) && /\d/.test(raw)) return 0;
  try {
    return sign * parseDollars(raw);
  } catch (err) {
    if (err instanceof AmountError && /without a sign/.test(err.message)) {
      throw new AmountError("Write a minus sign only in front of the amount, like -12.50.");
    }
    throw err;
  }
}

// Cents → the text shown in a grid cell ("" for 0 keeps the grid readable), written
// as every other figure is (1,234.50): parseBudgetCents reads it back.
export const centsToCell = (cents) => (cents === 0 ? "" : formatCents(cents));

// The twelve months of a budget starting on YYYY-MM-01: [{label, from, to}].
export function budgetMonths(startsOn) {
  const [year, month] = startsOn.split("-").map(Number);
  return Array.from({ length: 12 }, (_, i) => {
    const index = year * 12 + (month - 1) + i;
    const y = Math.floor(index / 12);
    const m = (index % 12) + 1;
    const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
    const mm = String(m).padStart(2, "0");
    return { label: `${MONTH_NAMES[m - 1]} ${y}`, from: `${y}-${mm}-01`, to: `${y}-${mm}-${last}` };
  });
}

// The spans of a budget the report offers (docs/web.md, "Budget against actual"), for
// `today` ("YYYY-MM-DD"): the month holding today, the quarter of the budget's year
// holding it, the year to date (the budget's first month through today's) and the
// whole year. Before the budget starts, "today" counts as its first month; after it
// ends, as its last. → {key: {from, to, label}}, keys in SPANS order.
export const SPANS = [
  ["month", "This month"],
  ["quarter", "This quarter"],
  ["ytd", "Year to date"],
  ["year", "Whole year"],
];

export function budgetSpans(startsOn, today) {
  const months = budgetMonths(startsOn);
  const found = months.findIndex((m) => m.from <= today && today <= m.to);
  const now = found >= 0 ? found : today < months[0].from ? 0 : 11;
  const span = (first, last) => ({
    from: months[first].from,
    to: months[last].to,
    label: first === last ? months[first].label : `${months[first].label} to ${months[last].label}`,
  });
  const quarter = Math.floor(now / 3) * 3;
  return {
    month: span(now, now),
    quarter: span(quarter, quarter + 2),
    ytd: span(0, now),
    year: span(0, 11),
  };
}

// The budget the report opens on, for `today` ("YYYY-MM-DD"), from `budgets` as GET
// /budgets lists them (newest start first): the one whose twelve months hold today;
// when none does, the one that ended last (its actuals are complete), and when every
// budget lies ahead, the one that starts first. Among budgets of the same twelve
// months an approved one before a draft, then the list's order. → a budget, or null.
export function openingBudget(budgets, today) {
  const day = (iso) => Date.parse(`${iso}T00:00:00Z`) / 86400000;
  const now = day(today);
  // [0] holds today, [1, days since it ended] ended, [2, days until it starts] ahead.
  const distance = (b) => {
    const months = budgetMonths(b.starts_on);
    const first = day(months[0].from);
    const last = day(months[11].to);
    if (first <= now && now <= last) return [0, 0];
    return last < now ? [1, now - last] : [2, first - now];
  };
  const ranked = budgets.map((b, i) => ({ b, key: [...distance(b), b.approved_at ? 0 : 1, i] }));
  ranked.sort((x, y) => x.key.reduce((found, k, n) => found || k - y.key[n], 0));
  return ranked[0]?.b ?? null;
}

// Which span (key) from..to is, or null; the year to date before the others when
// two coincide (in the first month, say), since it is the one the report opens on.
export function spanOf(from, to, spans) {
  const order = ["ytd", "month", "quarter", "year"];
  return order.find((key) => spans[key].from === from && spans[key].to === to) ?? null;
}

// The grid's totals: rows [{kind: "income"|"expense", months: [12 cents]}] →
// {income, expense, surplus}, each twelve monthly totals then the year's (13 figures);
// surplus is income minus expense (the plan's surplus, negative for a deficit).
export function gridTotals(rows) {
  const total = (kind) => {
    const months = Array.from({ length: 12 }, (_, i) =>
      sum(rows.filter((r) => r.kind === kind).map((r) => r.months[i])));
    return [...months, sum(months)];
  };
  const income = total("income");
  const expense = total("expense");
  return { income, expense, surplus: income.map((cents, i) => cents - expense[i]) };
}
