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

// Income statement JSON → rows [section, account, amount]. With `w` (vocab.js
// words) the rows read as the screen does: its caption with the period first, then
// its headings and totals in the book style's words ("Spending", "Left over").
export function incomeStatementRows(report, w = null) {
  const say = (plain, key) => (w ? w[key] : plain);
  return [
    ...(w ? [[`${w.incomeStatement}, ${report.from ?? "start"} to ${report.to ?? "today"}`]] : []),
    w ? ["Section", "Account", "Amount"] : ["section", "account", "amount"],
    ...report.income.map((l) => [say("income", "income"), l.account, amount(l.cents)]),
    [say("total income", "totalIncome"), "", amount(report.total_income_cents)],
    ...report.expenses.map((l) => [say("expenses", "expenses"), l.account, amount(l.cents)]),
    [say("total expenses", "totalExpenses"), "", amount(report.total_expenses_cents)],
    [say("net", "net"), "", amount(report.net_cents)],
  ];
}

export function balanceSheetRows(report, w = null) {
  const say = (plain, key) => (w ? w[key] : plain);
  return [
    ...(w ? [[`${w.balanceSheet} as of ${report.as_of}`]] : []),
    w ? ["Section", "Account", "Amount"] : ["section", "account", "amount"],
    ...report.assets.map((l) => [say("assets", "assets"), l.account, amount(l.cents)]),
    [say("total assets", "totalAssets"), "", amount(report.total_assets_cents)],
    ...report.liabilities.map((l) => [say("liabilities", "liabilities"), l.account, amount(l.cents)]),
    [say("total liabilities", "totalLiabilities"), "", amount(report.total_liabilities_cents)],
    ...report.equity.map((l) => [say("equity", "equity"), l.account, amount(l.cents)]),
    [say("retained", "retained"), "", amount(report.retained_cents)],
    [say("total equity", "totalEquity"), "", amount(report.total_equity_cents)],
  ];
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
