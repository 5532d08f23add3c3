// Downloads: a report's figures as CSV (built here from the report JSON, the
// figures exactly as the API gave them) and saving any text as a file.
import { formatCents } from "./money.js";

// One CSV field: quoted when it holds a separator, a quote or a newline; a
// leading = + - @ is prefixed with ' so a spreadsheet never runs it as a formula.
export function csvField(value) {
  let text = String(value ?? "");
  if (/^[=+\-@\t\r]/.test(text) && !/^-?\d[\d,]*\.\d\d$/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function toCsv(rows) {
  return rows.map((row) => row.map(csvField).join(",")).join("\r\n") + "\r\n";
}

const amount = (cents) => formatCents(cents).replaceAll(",", "");
// Year against year (`previous` in the report): each row also has last year's figure
// and the difference, as the screen shows them.
const compared = (rows, report, previousOf, w, against) => {
  if (!report.previous) return rows;
  return rows.map((row, i) => {
    if (i === 0 && w) return [`${row[0]}, against ${against}`];
    if (row.length < 3) return row;
    if (row[2] === "Amount" || row[2] === "amount") return [...row, w ? "Last year" : "last year", w ? "Difference" : "difference"];
    const before = previousOf(i);
    return [...row, amount(before.previous), amount(before.cents - before.previous)];
  });
};

// Income statement JSON → rows [section, account, amount]. With `w` (vocab.js
// words) the rows read as the screen does: its caption with the period first, then
// its headings and totals in the book style's words ("Spending", "Left over").
export function incomeStatementRows(report, w = null) {
  const say = (plain, key) => (w ? w[key] : plain);
  const p = report.previous ?? {};
  const pairs = [
    ...report.income.map((l) => ({ cents: l.cents, previous: l.previous_cents })),
    { cents: report.total_income_cents, previous: p.total_income_cents },
    ...report.expenses.map((l) => ({ cents: l.cents, previous: l.previous_cents })),
    { cents: report.total_expenses_cents, previous: p.total_expenses_cents },
    { cents: report.net_cents, previous: p.net_cents },
  ];
  const skip = w ? 2 : 1;
  return compared([
    ...(w ? [[`${w.incomeStatement}, ${report.from ?? "start"} to ${report.to ?? "today"}`]] : []),
    w ? ["Section", "Account", "Amount"] : ["section", "account", "amount"],
    ...report.income.map((l) => [say("income", "income"), l.account, amount(l.cents)]),
    [say("total income", "totalIncome"), "", amount(report.total_income_cents)],
    ...report.expenses.map((l) => [say("expenses", "expenses"), l.account, amount(l.cents)]),
    [say("total expenses", "totalExpenses"), "", amount(report.total_expenses_cents)],
    [say("net", "net"), "", amount(report.net_cents)],
  ], report, (i) => pairs[i - skip], w, `${p.from} to ${p.to}`);
}

export function balanceSheetRows(report, w = null) {
  const say = (plain, key) => (w ? w[key] : plain);
  const p = report.previous ?? {};
  const pairs = [
    ...report.assets.map((l) => ({ cents: l.cents, previous: l.previous_cents })),
    { cents: report.total_assets_cents, previous: p.total_assets_cents },
    ...report.liabilities.map((l) => ({ cents: l.cents, previous: l.previous_cents })),
    { cents: report.total_liabilities_cents, previous: p.total_liabilities_cents },
    ...report.equity.map((l) => ({ cents: l.cents, previous: l.previous_cents })),
    { cents: report.retained_cents, previous: p.retained_cents },
    { cents: report.total_equity_cents, previous: p.total_equity_cents },
  ];
  const skip = w ? 2 : 1;
  return compared([
    ...(w ? [[`${w.balanceSheet} as of ${report.as_of}`]] : []),
    w ? ["Section", "Account", "Amount"] : ["section", "account", "amount"],
    ...report.assets.map((l) => [say("assets", "assets"), l.account, amount(l.cents)]),
    [say("total assets", "totalAssets"), "", amount(report.total_assets_cents)],
    ...report.liabilities.map((l) => [say("liabilities", "liabilities"), l.account, amount(l.cents)]),
    [say("total liabilities", "totalLiabilities"), "", amount(report.total_liabilities_cents)],
    ...report.equity.map((l) => [say("equity", "equity"), l.account, amount(l.cents)]),
    [say("retained", "retained"), "", amount(report.retained_cents)],
    [say("total equity", "totalEquity"), "", amount(report.total_equity_cents)],
  ], report, (i) => pairs[i - skip], w, p.as_of);
}

// "Income and spending" → "income-and-spending" (a file name's words).
export function slug(text) {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-|-$/g, "");
}

// Hand a Blob to the browser as a file download.
export function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
