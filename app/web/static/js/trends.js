// The figures the charts draw, taken from the API's answers (docs/web.md, "Charts"):
// pure functions, no DOM, pinned by tests/js/trends.test.mjs. Amounts stay integer
// cents; only the drawing (charts.js) turns them into pixels.

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const LONG_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

// A period of GET /reports/series named: `short` under the chart, `long` in its table
// and its read-out. A period cut by the window (it does not start on the month's,
// quarter's or year's first day, or ends before its last) also names its dates.
export function periodNames(period, interval) {
  const year = period.from.slice(0, 4);
  const month = Number(period.from.slice(5, 7));
  const shortYear = `’${year.slice(2)}`;
  let short;
  let long;
  if (interval === "year") {
    short = year;
    long = year;
  } else if (interval === "quarter") {
    const q = Math.floor((month - 1) / 3) + 1;
    short = `Q${q} ${shortYear}`;
    long = `Q${q} ${year}`;
  } else {
    short = `${MONTHS[month - 1]} ${shortYear}`;
    long = `${LONG_MONTHS[month - 1]} ${year}`;
  }
  if (!wholePeriod(period, interval)) long = `${long} (${period.from} to ${period.to})`;
  return { short, long };
}

function lastDayOfMonth(year, month) {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function wholePeriod(period, interval) {
  const year = Number(period.from.slice(0, 4));
  const month = Number(period.from.slice(5, 7));
  const span = interval === "year" ? 12 : interval === "quarter" ? 3 : 1;
  const first = interval === "year" ? 1 : interval === "quarter" ? Math.floor((month - 1) / 3) * 3 + 1 : month;
  const last = first + span - 1;
  const pad = (n) => String(n).padStart(2, "0");
  return period.from === `${year}-${pad(first)}-01`
    && period.to === `${year}-${pad(last)}-${pad(lastDayOfMonth(year, last))}`;
}

// Income, spending and net per period, and the net worth at each period's end.
export function seriesRows(series) {
  return series.periods.map((period, i) => ({
    ...periodNames(period, series.interval),
    from: period.from,
    to: period.to,
    income: series.total_income_cents[i],
    spending: series.total_expenses_cents[i],
    net: series.net_cents[i],
    netWorth: series.net_worth_cents[i],
  }));
}

// Spending by expense account over the whole window, largest first; past `keep`
// accounts the rest is one line, "Other (n accounts)". Accounts with nothing spent
// are left out. A negative total (refunds beyond spending) is shown as it is.
export function spendingByAccount(series, keep = 6) {
  const spent = series.accounts
    .filter((a) => a.kind === "expense")
    .map((a) => ({ label: a.name, cents: a.cents.reduce((sum, c) => sum + c, 0) }))
    .filter((a) => a.cents !== 0)
    .sort((a, b) => b.cents - a.cents || a.label.localeCompare(b.label));
  if (spent.length <= keep + 1) return spent;
  const rest = spent.slice(keep);
  return [...spent.slice(0, keep), {
    label: `Other (${rest.length} accounts)`,
    cents: rest.reduce((sum, a) => sum + a.cents, 0),
    other: rest.map((a) => a.label),
  }];
}

// A register's balance over the entries it shows: the balance at the end of each
// day (items come newest first, as the register lists them), oldest day first.
export function balanceByDay(items) {
  const days = new Map();
  for (const item of items) {
    if (!days.has(item.occurred_on)) days.set(item.occurred_on, item.balance_cents); // the day's newest
  }
  return [...days].reverse().map(([day, cents]) => ({ short: day.slice(5), long: day, cents }));
}

// Which labels along an axis of `count` slots `slot` pixels wide are written so
// that labels `labelWidth` wide never touch: every step-th, counted from the last.
export function labelStep(count, slot, labelWidth) {
  if (count <= 1 || slot <= 0) return 1;
  return Math.max(1, Math.ceil((labelWidth + 6) / slot));
}

// A round scale from the smallest to the largest figure (zero always inside):
// ticks in cents, at most `most` of them, 1, 2 or 5 times a power of ten apart.
export function niceTicks(values, most = 5) {
  let lo = Math.min(0, ...values);
  let hi = Math.max(0, ...values);
  if (lo === hi) hi = lo + 100;
  const raw = (hi - lo) / Math.max(1, most - 1);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  lo = Math.floor(lo / step) * step;
  hi = Math.ceil(hi / step) * step;
  const ticks = [];
  for (let t = lo; t <= hi + step / 2; t += step) ticks.push(Math.round(t));
  return { lo, hi, ticks };
}

// A tick's figure in short: 1,200 → "1.2k", 3,000,000 → "3M" (whole units, no cents).
export function shortAmount(cents) {
  const units = cents / 100;
  const size = Math.abs(units);
  const trim = (n) => String(Number(n.toFixed(1)));
  if (size >= 1e6) return `${trim(units / 1e6)}M`;
  if (size >= 1e3) return `${trim(units / 1e3)}k`;
  return String(Math.round(units));
}

// The financial year that starts in `year` on the first of month `start` (1-12):
// {from, to, name} ("2025", or "2025/26" when it does not start in January).
export function financialYearOf(year, start = 1) {
  const pad = (n) => String(n).padStart(2, "0");
  if (start === 1) return { from: `${year}-01-01`, to: `${year}-12-31`, name: String(year) };
  const endYear = year + 1;
  const endMonth = start - 1;
  return {
    from: `${year}-${pad(start)}-01`,
    to: `${endYear}-${pad(endMonth)}-${pad(lastDayOfMonth(endYear, endMonth))}`,
    name: `${year}/${String(endYear).slice(2)}`,
  };
}

// The budget of a year: the approved one (the latest approved) whose twelve months
// are the year's; else null. (`budgets`: GET /budgets.)
export function budgetOfYear(budgets, from, to) {
  return budgets
    .filter((b) => b.approved_at && b.starts_on === from && b.ends_on === to)
    .sort((a, b) => (a.approved_at < b.approved_at ? 1 : a.approved_at > b.approved_at ? -1 : b.id - a.id))[0] ?? null;
}

// Each account's last reconciliation to a statement dated on or before `through`,
// from the entries.reconciled events of GET /audit: {account_id: {statement_date,
// closing_balance_cents}}.
export function reconciledThrough(events, through) {
  const found = {};
  for (const e of events) {
    const o = e.object;
    if (e.action !== "entries.reconciled" || !o || o.statement_date > through) continue;
    const seen = found[o.account_id];
    if (!seen || o.statement_date > seen.statement_date) {
      found[o.account_id] = { statement_date: o.statement_date, closing_balance_cents: o.closing_balance_cents };
    }
  }
  return found;
}
