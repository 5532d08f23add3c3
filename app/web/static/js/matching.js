// Statement import, per line: which account the other side of a line probably is
// (from how similar descriptions were booked before), and the statement's closing
// balance. Pure, so node tests it (tests/js/matching.test.mjs); the page
// (pages/import.js) does the few bounded requests and hands their answers here.

// The words of a description that say what it is: lower case, letters only, no
// reference numbers or dates ("COUNCIL GRANT REF 88231" → ["council", "grant", "ref"]).
export function words(description) {
  return (description ?? "")
    .toLowerCase()
    .split(/[^\p{L}]+/u)
    .filter((word) => word.length >= 2);
}

// What to search the books for (GET /transactions?q=): the line's longest word of
// three letters or more (the first of equal length), or null when it has none.
// The search is a plain substring match, so one distinctive word finds "Council
// grant 2025" for "COUNCIL GRANT REF 88231" where the whole text would not.
export function searchWord(description) {
  let best = null;
  for (const word of words(description)) {
    if (word.length >= 3 && (best === null || word.length > best.length)) best = word;
  }
  return best;
}

// How alike two descriptions are, 0 to 1: shared words over all words (Jaccard).
export function likeness(a, b) {
  return wordLikeness(new Set(words(a)), new Set(words(b)));
}

// likeness of two descriptions' word sets, each found once by the caller.
function wordLikeness(left, right) {
  if (left.size === 0 || right.size === 0) return 0;
  let shared = 0;
  for (const word of left) if (right.has(word)) shared += 1;
  return shared / (left.size + right.size - shared);
}

export const ALIKE = 0.5; // at least half the words in common

// A booked transaction → the account that took the other side of a statement line
// of `cents` (money into the bank; negative: out) for bank account `bankId`, or null.
// The other side carries -cents' sign: an expense for money out, income for money in.
export function otherSide(tx, bankId, cents) {
  const bank = Number(bankId);
  const entries = tx.entries ?? [];
  const others = entries.filter((e) => e.account_id !== bank);
  const touchesBank = others.length < entries.length;
  const sameSign = others.filter((e) => Math.sign(e.amount_cents) === -Math.sign(cents));
  if (touchesBank && others.length === 1) return others[0].account_id;
  return sameSign.length === 1 ? sameSign[0].account_id : null;
}

// Statement lines ({description, cents}) + transactions booked before (newest first)
// → Map(line index → {account_id, from: transaction}) for the lines with a match:
// the most alike description (ties: the newest), at least ALIKE, whose other side is
// an account in `usable` (a Set of ids: open accounts other than the bank).
export function suggestions(lines, booked, bankId, usable) {
  const found = new Map();
  // Each description's words once (not once per pair: 1,000 lines x 500 transactions).
  const bookedWords = booked.map((tx) => new Set(words(tx.description)));
  lines.forEach((line, index) => {
    if (line.error) return;
    const lineWords = new Set(words(line.description));
    let best = null;
    for (const [i, tx] of booked.entries()) {
      const score = wordLikeness(lineWords, bookedWords[i]);
      if (score < ALIKE || (best && score <= best.score)) continue;
      const account = otherSide(tx, bankId, line.cents);
      if (account === null || !usable.has(account)) continue;
      best = { score, account_id: account, from: tx };
    }
    if (best) found.set(index, { account_id: best.account_id, from: best.from });
  });
  return found;
}

// The distinct search words of the lines still without a suggestion, at most `max`
// (the page's bound on requests), in the order the lines come.
export function searchesFor(lines, found, max) {
  const wanted = [];
  lines.forEach((line, index) => {
    if (line.error || found.has(index)) return;
    const word = searchWord(line.description);
    if (word && !wanted.includes(word) && wanted.length < max) wanted.push(word);
  });
  return wanted;
}

// The statement's closing balance: the balance column of its newest line. Statements
// come oldest first or newest first; among lines of the newest date the last one in
// the statement's own order is the closing one. lines: [{occurred_on, balance}] with
// balance in cents or null. → {statement_date, closing_balance_cents} or null.
export function closingBalance(lines) {
  const dated = lines.filter((l) => l.occurred_on);
  if (dated.length === 0) return null;
  const newestFirst = dated.length > 1 && dated[0].occurred_on > dated[dated.length - 1].occurred_on;
  const ordered = newestFirst ? [...dated].reverse() : dated;
  const newest = ordered.reduce((day, l) => (l.occurred_on > day ? l.occurred_on : day), ordered[0].occurred_on);
  const last = ordered.filter((l) => l.occurred_on === newest).at(-1);
  return {
    statement_date: newest,
    closing_balance_cents: Number.isSafeInteger(last.balance) ? last.balance : null,
  };
}

// --- possible duplicates: a transaction of the bank account already there -------
//
// A line may already be in the books typed by hand in other words ("Hall rent" for
// "ST MARYS HALL 0326") and booked to another other side: a transaction of the bank
// account dated at most DUPLICATE_DAYS before or after the line, with the line's amount
// on the bank account, is a possible duplicate whatever its wording. Only a bank
// reference tells two such movements apart: when both descriptions carry one and they
// share none (two transfers of one amount, each with its own reference), it is not.

export const DUPLICATE_DAYS = 3;
const MAX_DUPLICATES = 5; // as many ids as the server's look-alikes name at most

// The bank's references in a text: its tokens of 4 characters or more holding a
// digit, lower case ("SUBS ANN REF 4411-A" → ["4411"]; "ab12cd" → ["ab12cd"]). A year
// (1900 to 2199: "Hall rent 2026", a date's year) is no reference.
export function references(text) {
  return (text ?? "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((token) => token.length >= 4 && /\p{N}/u.test(token) && !/^(19|20|21)\d\d$/u.test(token));
}

// Could a stored transaction's description be the same bank movement as a statement
// line's? Yes unless both carry references and they have none in common.
export function sameReference(lineText, storedText) {
  const mine = references(lineText);
  const theirs = new Set(references(storedText));
  return !(mine.length && theirs.size) || mine.some((ref) => theirs.has(ref));
}

const dayNumber = (day) => Date.parse(`${day}T00:00:00Z`) / 86400000;

// Does the stored transaction `tx` look like the statement line (date within
// DUPLICATE_DAYS, the line's cents as its net amount on the bank account, no other
// reference)?
export function looksLikeLine(line, bank, tx) {
  if (!line.occurred_on || !tx.occurred_on) return false;
  if (Math.abs(dayNumber(line.occurred_on) - dayNumber(tx.occurred_on)) > DUPLICATE_DAYS) return false;
  const onBank = (tx.entries ?? []).filter((e) => e.account_id === Number(bank));
  if (!onBank.length || onBank.reduce((sum, e) => sum + e.amount_cents, 0) !== line.cents) return false;
  return sameReference(line.description, tx.description);
}

// `booked`'s transactions by their net amount on `bank` (Map cents → transactions, in
// booked's order), found once per `booked` and bank: a line looks only at those of its
// own amount, not at every transaction of the bank account around the statement
// (hundreds in busy books, for each of a thousand lines).
const amountIndexes = new WeakMap();
function byBankAmount(booked, bank) {
  const known = amountIndexes.get(booked);
  if (known && known.bank === Number(bank)) return known.index;
  const index = new Map();
  for (const tx of booked.values()) {
    const onBank = (tx.entries ?? []).filter((e) => e.account_id === Number(bank));
    if (!onBank.length) continue;
    const cents = onBank.reduce((sum, e) => sum + e.amount_cents, 0);
    if (!index.has(cents)) index.set(cents, []);
    index.get(cents).push(tx);
  }
  amountIndexes.set(booked, { bank: Number(bank), index });
  return index;
}

// The possible duplicates of a line among `booked` (Map id → transaction: the bank
// account's transactions around the lines, newest first), with the server's
// look-alike ids (`serverIds`) that were not read kept as they are: they cannot be
// told apart. At most MAX_DUPLICATES ids.
export function possibleDuplicates(line, bank, booked, serverIds = []) {
  const candidates = byBankAmount(booked, bank).get(line.cents) ?? [];
  const ids = candidates.filter((tx) => looksLikeLine(line, bank, tx)).map((tx) => tx.id);
  for (const id of serverIds ?? []) if (!booked.has(id) && !ids.includes(id)) ids.push(id);
  return ids.slice(0, MAX_DUPLICATES);
}

// Lines that repeat an earlier line of the same file exactly (the date, the amount,
// the description and, when the file has one, the running balance): Map(index → the
// earlier line's `line` number). Two real purchases alike in all else differ in the
// running balance; a line the file holds twice does not.
export function repeatedLines(lines) {
  const seen = new Map();
  const repeats = new Map();
  lines.forEach((line, index) => {
    if (line.error) return;
    const text = (line.description ?? "").toLowerCase().split(/\s+/u).filter(Boolean).join(" ");
    const key = JSON.stringify([line.occurred_on, line.cents, text, line.balance ?? null]);
    if (seen.has(key)) repeats.set(index, seen.get(key));
    else seen.set(key, line.line);
  });
  return repeats;
}
