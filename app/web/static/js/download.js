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

// Income statement JSON → rows [section, account, amount].
export function incomeStatementRows(report) {
  return [
    ["section", "account", "amount"],
    ...report.income.map((l) => ["income", l.account, amount(l.cents)]),
    ["total income", "", amount(report.total_income_cents)],
    ...report.expenses.map((l) => ["expenses", l.account, amount(l.cents)]),
    ["total expenses", "", amount(report.total_expenses_cents)],
    ["net", "", amount(report.net_cents)],
  ];
}

export function balanceSheetRows(report) {
  return [
    ["section", "account", "amount"],
    ...report.assets.map((l) => ["assets", l.account, amount(l.cents)]),
    ["total assets", "", amount(report.total_assets_cents)],
    ...report.liabilities.map((l) => ["liabilities", l.account, amount(l.cents)]),
    ["total liabilities", "", amount(report.total_liabilities_cents)],
    ...report.equity.map((l) => ["equity", l.account, amount(l.cents)]),
    ["retained", "", amount(report.retained_cents)],
    ["total equity", "", amount(report.total_equity_cents)],
  ];
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
