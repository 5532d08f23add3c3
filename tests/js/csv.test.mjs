// Bank statements: CSV parsing, dates, signed amounts, column mapping, the two
// entries of each line (static/js/csv.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { CsvError, guessMapping, lineTransaction, parseCsv, parseDate, parseSigned, statementLines } from "../../app/web/static/js/csv.js";

test("CSV with quotes, embedded separators, newlines, CRLF and a BOM", () => {
  assert.deepEqual(parseCsv('\uFEFFDate,Details,Amount\r\n2026-01-02,"Raffle, tickets",12.50\r\n2026-01-03,"He said ""hi""\nthere",-3\r\n\r\n'), [
    ["Date", "Details", "Amount"],
    ["2026-01-02", "Raffle, tickets", "12.50"],
    ["2026-01-03", 'He said "hi"\nthere', "-3"],
  ]);
  assert.deepEqual(parseCsv("a;b;c\n1,5;x;2"), [["a", "b", "c"], ["1,5", "x", "2"]]);
  assert.throws(() => parseCsv('a,"b\n'), CsvError);
});

test("dates in three layouts; impossible days refused", () => {
  assert.equal(parseDate("2026-1-5", "YYYY-MM-DD"), "2026-01-05");
  assert.equal(parseDate("31/12/2026", "DD/MM/YYYY"), "2026-12-31");
  assert.equal(parseDate("12/31/2026", "MM/DD/YYYY"), "2026-12-31");
  assert.equal(parseDate("05.01.2026", "DD/MM/YYYY"), "2026-01-05");
  assert.throws(() => parseDate("30/02/2026", "DD/MM/YYYY"), /not a day/);
  assert.throws(() => parseDate("12/31/2026", "DD/MM/YYYY"), /not a day/);
  assert.throws(() => parseDate("yesterday", "YYYY-MM-DD"), /not a date/);
});

test("signed statement amounts, exact to the cent", () => {
  for (const [text, cents] of [
    ["12.50", 1250], ["-12.50", -1250], ["12.50-", -1250], ["(12.50)", -1250], ["$ -3", -300],
    ["\u22124", -400], ["+1,234.5", 123450], ["0.00", 0], ["", null], ["  ", null],
  ]) {
    assert.equal(parseSigned(text), cents, text);
  }
  for (const text of ["1.234", "1,23", "abc", "1e3"]) assert.throws(() => parseSigned(text), CsvError, text);
});

test("the header guides the mapping", () => {
  assert.deepEqual(guessMapping(["Date", "Details", "Debit", "Credit"]), { date: 0, description: 1, amount: -1, debit: 2, credit: 3, balance: -1 });
  assert.deepEqual(guessMapping(["Booked", "Memo", "Amount"]), { date: 0, description: 1, amount: 2, debit: -1, credit: -1, balance: -1 });
  assert.equal(guessMapping(["Date", "Memo", "Amount", "Balance"]).balance, 3);
});

test("a balance column gives each line the statement's balance after it", () => {
  const rows = [["Date", "Memo", "Amount", "Balance"], ["2026-01-05", "Dues", "20.05", "1,020.05"], ["2026-01-06", "Ink", "-32.10", "n/a"]];
  const lines = statementLines(rows, { date: 0, description: 1, amount: 2, balance: 3, split: false, dateFormat: "YYYY-MM-DD", hasHeader: true });
  assert.equal(lines[0].balance, 102005);
  assert.equal(lines[1].balance, null); // unreadable: only not offered, the line stays good
  assert.equal(lines[1].error, null);
});

test("lines: money in positive, out negative, problems by line number", () => {
  const rows = [["Date", "Text", "Debit", "Credit"], ["05/01/2026", " Dues  Ann ", "", "20.05"], ["06/01/2026", "Ink", "32.10", ""], ["31/02/2026", "Bad", "1", ""], ["07/01/2026", "Nothing", "", ""]];
  const lines = statementLines(rows, { date: 0, description: 1, debit: 2, credit: 3, split: true, dateFormat: "DD/MM/YYYY", hasHeader: true });
  assert.deepEqual(lines.slice(0, 2), [
    { line: 2, occurred_on: "2026-01-05", description: "Dues Ann", cents: 2005, balance: null, error: null },
    { line: 3, occurred_on: "2026-01-06", description: "Ink", cents: -3210, balance: null, error: null },
  ]);
  assert.equal(lines[2].line, 4);
  assert.match(lines[2].error, /not a day/);
  assert.match(lines[3].error, /Neither debit nor credit/);
  const single = statementLines([["2026-01-05", "Fee", "-0.07"], ["2026-01-06", "Zero", "0"]], { date: 0, description: 1, amount: 2, split: false, dateFormat: "YYYY-MM-DD", hasHeader: false });
  assert.equal(single[0].cents, -7);
  assert.equal(single[0].line, 1);
  assert.match(single[1].error, /zero/);
});

test("a line becomes two entries: the bank account and the other side", () => {
  const line = { occurred_on: "2026-01-06", description: "Ink", cents: -3210 };
  assert.deepEqual(lineTransaction(line, "1", "4"), {
    occurred_on: "2026-01-06",
    description: "Ink",
    entries: [{ account_id: 1, amount_cents: -3210 }, { account_id: 4, amount_cents: 3210 }],
  });
});
