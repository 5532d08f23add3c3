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

// Cents → the text shown in a grid cell ("" for 0 keeps the grid readable).
export const centsToCell = (cents) => (cents === 0 ? "" : formatCents(cents).replaceAll(",", ""));

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
