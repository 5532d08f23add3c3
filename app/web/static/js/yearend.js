// The financial year (docs/web.md, "Closing the year"): the month it starts in, this
// browser's choice (the key the Reports page reads too), and the last day of the
// latest financial year that has ended. Pure date arithmetic on "YYYY-MM-DD" text
// (no time zone can move a day); node tests it (tests/js/yearend.test.mjs).

export const FY_KEY = "ledger.financialYearStart";

const pad = (n) => String(n).padStart(2, "0");

// The last day of month m (1-12) of year y.
function lastDay(y, m) {
  return new Date(Date.UTC(y, m, 0)).getUTCDate();
}

// today "YYYY-MM-DD", the first month of the financial year (1-12) → the last day of
// the most recent financial year that ended before today.
export function lastYearEnd(today, startMonth = 1) {
  const [y, m] = today.split("-").map(Number);
  const start = Number.isInteger(startMonth) && startMonth >= 1 && startMonth <= 12 ? startMonth : 1;
  const endMonth = start === 1 ? 12 : start - 1;
  // The current financial year began on the 1st of `start` in this year or the last.
  const began = m >= start ? y : y - 1;
  const endYear = start === 1 ? began - 1 : began;
  return `${endYear}-${pad(endMonth)}-${pad(lastDay(endYear, endMonth))}`;
}

export const MONTHS = ["January", "February", "March", "April", "May", "June", "July",
  "August", "September", "October", "November", "December"];

// This browser's financial-year start month (1 = the calendar year).
export function storedStart(storage = globalThis.localStorage) {
  try {
    const month = Number(storage?.getItem(FY_KEY));
    return Number.isInteger(month) && month >= 1 && month <= 12 ? month : 1;
  } catch {
    return 1; // storage refused (a private window): the calendar year
  }
}

export function storeStart(month, storage = globalThis.localStorage) {
  try {
    storage?.setItem(FY_KEY, String(month));
  } catch {
    // storage refused: the choice holds for this visit only
  }
}
