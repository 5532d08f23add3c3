// Bank statements as CSV: parsing (RFC 4180 quoting, comma or semicolon), column
// mapping and turning each row into a two-entry transaction. Pure, so node tests
// it (tests/js/csv.test.mjs). Amounts by string arithmetic only (money.js).
import { AmountError, parseDollars } from "./money.js";

export class CsvError extends Error {}

// Text → rows of fields. Quotes may hold separators, newlines and "" (a quote).
export function parseCsv(text) {
  const source = text.replace(/^\uFEFF/, "");
  const firstLine = source.split(/\r?\n/, 1)[0] ?? "";
  const separator = (firstLine.match(/;/g) ?? []).length > (firstLine.match(/,/g) ?? []).length ? ";" : ",";
  const rows = [];
  let row = [];
  let field = "";
  let quoted = false;
  let i = 0;
  while (i < source.length) {
    const ch = source[i];
    if (quoted) {
      if (ch === '"' && source[i + 1] === '"') { field += '"'; i += 2; continue; }
      if (ch === '"') { quoted = false; i += 1; continue; }
      field += ch;
      i += 1;
      continue;
    }
    if (ch === '"' && field === "") { quoted = true; i += 1; continue; }
    if (ch === separator) { row.push(field); field = ""; i += 1; continue; }
    if (ch === "\r" || ch === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
      i += ch === "\r" && source[i + 1] === "\n" ? 2 : 1;
      continue;
    }
    field += ch;
    i += 1;
  }
  if (quoted) throw new CsvError("A quoted field is never closed: the file is not complete CSV.");
  if (field !== "" || row.length) { row.push(field); rows.push(row); }
  return rows.filter((r) => r.some((cell) => cell.trim() !== ""));
}

export const DATE_FORMATS = {
  "YYYY-MM-DD": /^(?<y>\d{4})-(?<m>\d{1,2})-(?<d>\d{1,2})$/,
  "DD/MM/YYYY": /^(?<d>\d{1,2})[/.-](?<m>\d{1,2})[/.-](?<y>\d{4})$/,
  "MM/DD/YYYY": /^(?<m>\d{1,2})[/.-](?<d>\d{1,2})[/.-](?<y>\d{4})$/,
};

// "31/12/2026" with "DD/MM/YYYY" → "2026-12-31"; a day that does not exist → error.
export function parseDate(text, format) {
  const match = DATE_FORMATS[format]?.exec(text.trim());
  if (!match) throw new CsvError(`“${text.trim()}” is not a date of the form ${format}.`);
  const { y, m, d } = match.groups;
  const iso = `${y}-${m.padStart(2, "0")}-${d.padStart(2, "0")}`;
  const check = new Date(`${iso}T00:00:00Z`);
  if (Number.isNaN(check.getTime()) || check.toISOString().slice(0, 10) !== iso) {
    throw new CsvError(`${text.trim()} is not a day of the calendar.`);
  }
  return iso;
}

// A statement amount → signed cents: "-12.50", "12.50-", "(12.50)", "1,234.5",
// "$ -3", "−4" (minus sign). Empty → null. Zero is allowed here (a zero line).
export function parseSigned(text) {
  let raw = (text ?? "").trim().replace(/\u2212/g, "-");
  if (raw === "") return null;
  let negative = false;
  if (/^\(.*\)$/.test(raw)) { negative = true; raw = raw.slice(1, -1).trim(); }
  raw = raw.replace(/^([$£€¥])\s*/u, "");
  if (raw.startsWith("-") || raw.startsWith("+")) { negative = raw[0] === "-" ? !negative : negative; raw = raw.slice(1).trim(); }
  else if (raw.endsWith("-")) { negative = !negative; raw = raw.slice(0, -1).trim(); }
  raw = raw.replace(/^([$£€¥])\s*/u, "");
  if (/^0*(?:\.0{1,2})?$/.test(raw) && /0/.test(raw)) return 0;
  try {
    const cents = parseDollars(raw);
    return negative ? -cents : cents;
  } catch (err) {
    if (err instanceof AmountError) throw new CsvError(`“${text.trim()}”: ${err.message}`);
    throw err;
  }
}

// Guess the mapping from a header row: {date, description, amount, debit, credit,
// balance} as column indexes (or -1).
export function guessMapping(header) {
  const find = (...names) => header.findIndex((cell) => names.some((n) => cell.trim().toLowerCase().includes(n)));
  return {
    date: find("date", "booked", "datum"),
    description: find("description", "memo", "details", "payee", "narrative", "text"),
    amount: find("amount", "value", "betrag"),
    debit: find("debit", "withdrawal", "paid out", "money out"),
    credit: find("credit", "deposit", "paid in", "money in"),
    balance: find("balance", "saldo"),
  };
}

// Rows + mapping → [{line, occurred_on, description, cents, balance, error}], where
// cents is the money into the bank account (negative: out of it) and balance the
// statement's running balance after the line (cents; null without a readable one).
// mapping: {date, description, amount | (debit, credit), balance?, dateFormat,
// hasHeader, split}
export function statementLines(rows, mapping) {
  const body = mapping.hasHeader ? rows.slice(1) : rows;
  const first = mapping.hasHeader ? 2 : 1;
  return body.map((cells, index) => {
    const line = first + index;
    const cell = (i) => (i >= 0 && i < cells.length ? cells[i] : "");
    try {
      if (mapping.date < 0) throw new CsvError("Choose the date column.");
      if (mapping.description < 0) throw new CsvError("Choose the description column.");
      const occurred_on = parseDate(cell(mapping.date), mapping.dateFormat);
      const description = cell(mapping.description).trim().replace(/\s+/g, " ");
      if (!description) throw new CsvError("The description is empty.");
      let cents;
      if (mapping.split) {
        if (mapping.debit < 0 || mapping.credit < 0) throw new CsvError("Choose the debit and credit columns.");
        const out = parseSigned(cell(mapping.debit));
        const into = parseSigned(cell(mapping.credit));
        if (out === null && into === null) throw new CsvError("Neither debit nor credit has an amount.");
        cents = (into ?? 0) - Math.abs(out ?? 0);
      } else {
        if (mapping.amount < 0) throw new CsvError("Choose the amount column.");
        cents = parseSigned(cell(mapping.amount));
        if (cents === null) throw new CsvError("The amount is empty.");
      }
      if (cents === 0) throw new CsvError("The amount is zero: nothing to record.");
      let balance = null;
      if (mapping.balance !== undefined && mapping.balance >= 0) {
        try {
          balance = parseSigned(cell(mapping.balance));
        } catch (err) {
          if (!(err instanceof CsvError)) throw err; // an unreadable balance is only not offered
        }
      }
      return { line, occurred_on, description, cents, balance, error: null };
    } catch (err) {
      if (!(err instanceof CsvError)) throw err;
      return { line, occurred_on: null, description: cell(mapping.description).trim(), cents: null, balance: null, error: err.message };
    }
  });
}

// A statement line → the POST /import transaction: money into the bank debits
// the bank account and credits the counter account; money out the reverse.
export function lineTransaction(line, bankId, counterId) {
  return {
    occurred_on: line.occurred_on,
    description: line.description,
    entries: [
      { account_id: Number(bankId), amount_cents: line.cents },
      { account_id: Number(counterId), amount_cents: -line.cents },
    ],
  };
}
