// The statement page's rules (docs/statements.md, "The statement page"): what each
// line's status says, which account a line goes to, the one request that files every
// suggested line, a rule made from a line, and when the statement can be reconciled.
// Pure, so node tests it (tests/js/bankfile.test.mjs); pages/statements.js draws it.
import { parseSigned } from "./csv.js";
import { formatCents } from "./money.js";

// What the file input offers; the server reads the format from the bytes.
export const ACCEPT = ".ofx,.qfx,.xml,.sta,.mt940,.940,.txt";

// A line's status as a treasurer reads it: a short word and what it means.
export const STATUS = {
  new: { word: "New", means: "Not in the books yet." },
  match: { word: "Found in the books", means: "Already recorded by hand." },
  duplicate: { word: "Already imported", means: "From an earlier statement." },
  posted: { word: "Posted", means: "Added to the books from this statement." },
  matched: { word: "Matched", means: "Ticked off against the entry already in the books." },
  ignored: { word: "Ignored", means: "Left out of the books." },
};

// Lines that still need a decision before the statement can be reconciled.
export const WAITING = new Set(["new", "match"]);

export function statusWord(status) {
  return STATUS[status]?.word ?? status;
}

// {new: 3, match: 1, ...} for the summary line.
export function countByStatus(lines) {
  const counts = { new: 0, match: 0, duplicate: 0, posted: 0, matched: 0, ignored: 0 };
  for (const line of lines) counts[line.status] = (counts[line.status] ?? 0) + 1;
  return counts;
}

export function waitingCount(lines) {
  return lines.reduce((n, line) => n + (WAITING.has(line.status) ? 1 : 0), 0);
}

// "38 new, 2 found in the books, 1 already imported" (statuses with none left out).
export function summaryWords(lines) {
  const counts = countByStatus(lines);
  const parts = Object.keys(STATUS)
    .filter((status) => counts[status] > 0)
    .map((status) => `${counts[status]} ${statusWord(status).toLowerCase()}`);
  const n = lines.length;
  return `${n} line${n === 1 ? "" : "s"}${parts.length ? `: ${parts.join(", ")}` : ""}.`;
}

// The account a new line is filed to: the person's own choice (`choices`, a Map of
// line_id → account id, 0 for "none"), else the suggestion's, when it is one the
// picker offers (`offered`, a Set of account ids); null when none.
export function chosenAccount(line, choices, offered) {
  if (choices.has(line.line_id)) return choices.get(line.line_id) || null;
  const id = line.suggestion?.account_id ?? null;
  return id !== null && offered.has(id) ? id : null;
}

// The one request of "post every suggested line": every new line with an account
// (posted to it) and every line found in the books (matched to its candidate). A new
// line with candidates (entries in the books it might be, none certain) is never
// posted here: a person chooses one, or posts it alone.
// Returns {lines, post, match}; `lines` is the body's array.
export function bulkActions(lines, choices, offered) {
  const out = [];
  let post = 0;
  let match = 0;
  for (const line of lines) {
    if (line.status === "new") {
      if (line.candidates?.length) continue;
      const accountId = chosenAccount(line, choices, offered);
      if (accountId === null) continue;
      out.push({ line_id: line.line_id, action: "post", account_id: accountId });
      post += 1;
    } else if (line.status === "match") {
      out.push({ line_id: line.line_id, action: "match" });
      match += 1;
    }
  }
  return { lines: out, post, match };
}

// The bulk button's words: "Post 38 suggested lines and match 2".
export function bulkWords({ post, match }) {
  const posts = `${post} suggested line${post === 1 ? "" : "s"}`;
  if (post && match) return `Post ${posts} and match ${match}`;
  if (post) return `Post ${posts}`;
  if (match) return `Match ${match} line${match === 1 ? "" : "s"} found in the books`;
  return "Nothing suggested to post";
}

// Where a suggestion comes from, in words: "by the rule “Grocer”", "as filed before",
// or for a schedule's (`{source: "schedule", schedule_id, occurs_on}`) the expected
// item it meets, "the expected “Hall rent” due 2026-03-01" (`schedules`: id → schedule).
export function suggestionWords(suggestion, rules, schedules = new Map()) {
  if (!suggestion) return "";
  if (suggestion.source === "rule") {
    const rule = rules.get(suggestion.rule_id);
    return rule ? `by the rule “${rule.name}”` : "by a rule";
  }
  if (suggestion.source === "schedule") return `as ${expectedWords(suggestion, schedules)}`;
  return "as filed before";
}

// A schedule's suggestion as the line's detail says it: "Expected: Hall rent due
// 2026-03-01." (a schedule the page does not know: "Expected: a scheduled item …");
// within a sentence, "the expected “Hall rent” due 2026-03-01" ("an expected item …").
export function expectedWords(suggestion, schedules = new Map()) {
  const schedule = schedules.get(suggestion.schedule_id);
  const what = schedule?.name ? `the expected “${schedule.name}”` : "an expected item";
  return `${what}${suggestion.occurs_on ? ` due ${suggestion.occurs_on}` : ""}`;
}

// What a waiting new line's detail says about its suggestion.
export function suggestedDetail(suggestion, rules, schedules = new Map()) {
  if (!suggestion) return "Nothing suggested: choose the account.";
  if (suggestion.source === "schedule") {
    const schedule = schedules.get(suggestion.schedule_id);
    const name = schedule?.name ?? "a scheduled item";
    return `Expected: ${name}${suggestion.occurs_on ? ` due ${suggestion.occurs_on}` : ""}.`;
  }
  return `Suggested ${suggestionWords(suggestion, rules, schedules)}.`;
}

// One of a line's candidates, as the line lists it: "2026-10-28 · Cheque 101 Hall hire
// (no word in common)" / "(2 words in common)".
export function candidateLine(candidate) {
  const n = candidate.shared_words ?? 0;
  const shared = n === 0 ? "no word in common" : `${n} word${n === 1 ? "" : "s"} in common`;
  return `${candidate.occurred_on} · ${candidate.description} (${shared})`;
}

// The new lines "post every suggested line" leaves for a person, each with the
// entries in the books it might be: [{line, candidates}] (lines with candidates).
export function heldLines(lines) {
  return lines.filter((line) => line.status === "new" && line.candidates?.length)
    .map((line) => ({ line, candidates: line.candidates }));
}

// Those in words, for the bulk action's message: "Not posted: line 4 (K JONES, 15.00)
// might be Subs L Garcia of 2026-11-23; choose on the line." (empty when none).
export function heldWords(held) {
  if (held.length === 0) return "";
  const each = held.map(({ line, candidates }) => {
    const what = candidates.map((c) => `${c.description} of ${c.occurred_on}`).join(" or ");
    return `line ${line.line_id} (${line.payee || line.memo || "no payee"}, ${formatCents(line.amount_cents)}) might be ${what}`;
  });
  const n = held.length;
  return `Not posted, as ${n === 1 ? "it" : "they"} might already be in the books: ${each.join("; ")}. Match or post ${n === 1 ? "it" : "each"} on the line.`;
}

// Can a line be undone (action "undo")? Posted, matched and ignored lines.
export const UNDOABLE = new Set(["posted", "matched", "ignored"]);

// The description a line is posted with when none is typed: the server's default,
// the payee and the memo joined by " · " (either alone), else "Bank statement".
export function defaultDescription(line) {
  const parts = [line.payee, line.memo].map((p) => (p ?? "").trim()).filter(Boolean);
  return parts.length ? parts.join(" · ") : "Bank statement";
}

// The statement's opening balance against the account's last reconciliation before
// it (`events`: its entries.reconciled audit events, any order): {agree, words}, or
// null when the file gives no opening balance. `kind` turns the bank's sign into the
// register's (a card's debt is negative on the statement, positive in the books).
export function openingCheck(statement, events, accountId, kind) {
  const opening = statement.opening_balance_cents;
  if (opening === null || opening === undefined) return null;
  const before = statement.period_from ?? statement.closing_balance_on;
  let last = null;
  for (const e of events) {
    if (e.action !== "entries.reconciled" || e.object?.account_id !== accountId) continue;
    const day = e.object.statement_date;
    if (before && day >= before) continue; // this statement's own, or a later one
    if (!last || day > last.statement_date) last = { statement_date: day, closing_balance_cents: e.object.closing_balance_cents };
  }
  if (!last) return { agree: null, words: "No earlier reconciliation of the account to compare the opening balance with." };
  const theirs = kind === "liability" ? -last.closing_balance_cents : last.closing_balance_cents; // as the bank signs it
  if (opening === theirs) {
    return { agree: true, words: `The opening balance ${formatCents(opening)} agrees with the last reconciliation (${last.statement_date}).` };
  }
  return {
    agree: false,
    words: `The opening balance ${formatCents(opening)} differs from the last reconciliation (${last.statement_date}, closing ${formatCents(theirs)}) by ${formatCents(opening - theirs)}: a statement may be missing, or an entry up to then changed.`,
  };
}

const NAME_MAX = 100;

// "Always file this payee here": the rule's body (for POST /rules and /rules/preview).
// It is limited to the statement's own account. `how` picks the condition: `kind`
// "payee_is" (the default: the payee exactly, case and inner spaces aside, as the
// server compares), "payee_contains" or "memo_contains" with its `text` (default: the
// line's payee, or memo), and an optional amount range `min_cents`/`max_cents` (signed
// as the line's amount; either may be null). Null when there is nothing to match on.
export function ruleFromLine(line, statementAccountId, counter, how = {}) {
  const kind = how.kind ?? "payee_is";
  const fallback = kind === "memo_contains" ? line.memo : line.payee;
  const text = (how.text ?? fallback ?? "").trim().replace(/\s+/g, " ");
  const conditions = {};
  if (text) conditions[kind] = [...text].slice(0, 200).join("");
  if (Number.isSafeInteger(how.min_cents)) conditions.min_cents = how.min_cents;
  if (Number.isSafeInteger(how.max_cents)) conditions.max_cents = how.max_cents;
  if (Object.keys(conditions).length === 0) return null;
  const label = text || rangeWords(conditions) || "Rule";
  const tail = ` → ${counter.name}`;
  const room = NAME_MAX - tail.length;
  const name = room >= 10 ? `${[...label].slice(0, room).join("")}${tail}` : [...label].slice(0, NAME_MAX).join("");
  return { name, counter_account_id: counter.id, account_id: statementAccountId, conditions };
}

// The condition keys the API takes, in the order the pages show them.
export const CONDITIONS = ["payee_is", "payee_contains", "memo_contains", "min_cents", "max_cents"];
export const TEXT_CONDITIONS = { payee_is: "payee is", payee_contains: "payee contains", memo_contains: "memo contains" };

// "amount from -50.00 to -1.00", "amount at least 10.00", "amount at most -50.00", or "".
export function rangeWords(conditions) {
  const low = conditions.min_cents;
  const high = conditions.max_cents;
  const has = (v) => v !== null && v !== undefined;
  if (has(low) && has(high)) return low === high ? `amount exactly ${formatCents(low)}` : `amount from ${formatCents(low)} to ${formatCents(high)}`;
  if (has(low)) return `amount at least ${formatCents(low)}`;
  if (has(high)) return `amount at most ${formatCents(high)}`;
  return "";
}

// What a rule matches, in words: "payee is “Corner Grocer” and amount from -50.00 to -1.00".
export function conditionWords(conditions) {
  const parts = Object.entries(TEXT_CONDITIONS)
    .filter(([key]) => conditions[key] !== undefined && conditions[key] !== null && conditions[key] !== "")
    .map(([key, said]) => `${said} “${conditions[key]}”`);
  const range = rangeWords(conditions);
  if (range) parts.push(range);
  return parts.join(" and ");
}

// A whole rule in words (`accounts`: id → account): "Lines whose payee is “Corner
// Grocer”, in Bank, go to Food (described “Groceries”); priority 100, inactive."
export function ruleWords(rule, accounts) {
  const name = (id) => accounts.get(id)?.name ?? `account ${id}`;
  const where = rule.account_id === null || rule.account_id === undefined ? "in any account" : `in ${name(rule.account_id)}`;
  const described = rule.description ? ` (described “${rule.description}”)` : "";
  return `Lines whose ${conditionWords(rule.conditions)}, ${where}, go to ${name(rule.counter_account_id)}${described}; priority ${rule.priority}${rule.active ? "" : ", inactive"}.`;
}

// Can "Reconcile" be pressed? {ready, done, reason}: a statement without a closing
// balance or its date, or with lines waiting, cannot be (the server would answer 409);
// one already reconciled (`done`: the account's reconciliation to this statement,
// see reconciliationOf) is not offered again, since a second press would only record
// the same reconciliation twice.
export function reconcileState(statement, done = null) {
  const waiting = waitingCount(statement.lines ?? []);
  if (statement.closing_balance_cents === null || statement.closing_balance_cents === undefined || !statement.closing_balance_on) {
    return { ready: false, done: false, reason: "The file gives no closing balance and date, so this statement cannot be reconciled here: use the register." };
  }
  if (waiting > 0) {
    return { ready: false, done: false, reason: `${waiting} line${waiting === 1 ? " is" : "s are"} still waiting: post, match or ignore ${waiting === 1 ? "it" : "them"} first.` };
  }
  if (done) {
    return { ready: false, done: true, reason: `This statement is reconciled: the account's entries up to ${statement.closing_balance_on} are locked and agree with its closing balance. There is nothing left to do here.` };
  }
  return { ready: true, done: false, reason: "" };
}

// The account's reconciliation to this statement among `entries.reconciled` audit
// events (any order), or null: the same account, the statement's closing date and
// its closing balance as the register counts it (registerClosing).
export function reconciliationOf(events, accountId, statement, kind) {
  const closing = registerClosing(statement, kind);
  if (closing === null || !statement.closing_balance_on) return null;
  const found = events.find((e) => e.action === "entries.reconciled" && e.object?.account_id === accountId
    && e.object.statement_date === statement.closing_balance_on && e.object.closing_balance_cents === closing);
  return found ? { statement_date: found.object.statement_date, closing_balance_cents: found.object.closing_balance_cents } : null;
}

// The closing balance as the account's register shows it (the register's `closing`
// query): the bank's figure for an asset, negated for a liability (a card statement
// showing -500.00 is a debt of 500.00).
export function registerClosing(statement, kind) {
  const cents = statement.closing_balance_cents;
  if (cents === null || cents === undefined) return null;
  return kind === "liability" ? -cents : cents;
}

// The reconcile 409 with a difference, in words.
export function differenceWords(statement, accountName, differenceCents) {
  return `Not reconciled: the cleared entries in ${accountName} up to ${statement.closing_balance_on} do not add up to the statement's closing balance of ${formatCents(statement.closing_balance_cents)}: the difference is ${formatCents(differenceCents)}. Nothing was changed; open the register to find the entry that differs.`;
}

// The statement's period: "2026-03-01 to 2026-03-31", "to 2026-03-31", or "".
export function periodWords(statement) {
  const from = statement.period_from;
  const to = statement.period_to ?? statement.closing_balance_on;
  if (from && to) return `${from} to ${to}`;
  if (to) return `to ${to}`;
  if (from) return `from ${from}`;
  return "";
}

// "2026-03-01 → 2026-01-29": calendar days in UTC, so no time zone moves a day.
export function addDays(day, n) {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

// The register window holding every candidate of the lines found in the books or
// already imported ({from, to}, or null when there are none): candidates are dated
// at most 3 days from the line; an earlier statement's duplicate may be anywhere, so
// those are looked for in the same window only.
export function candidateWindow(lines) {
  let low = null;
  let high = null;
  for (const line of lines) {
    if (line.transaction_id === null || line.transaction_id === undefined) continue;
    if (line.status !== "match" && line.status !== "duplicate") continue;
    if (low === null || line.booked_on < low) low = line.booked_on;
    if (high === null || line.booked_on > high) high = line.booked_on;
  }
  return low === null ? null : { from: addDays(low, -3), to: addDays(high, 3) };
}

// A candidate transaction, as the line shows it: "2026-03-02 · Hall rent · -450.00"
// (`item`: a register item of the statement's account).
export function candidateWords(item) {
  return `${item.occurred_on} · ${item.description} · ${formatCents(item.amount_cents)}`;
}

// The lines whose drawing changed between two answers (by line_id), so a page of
// many lines redraws only those.
export function changedLines(before, after) {
  const old = new Map(before.map((line) => [line.line_id, JSON.stringify(line)]));
  return after.filter((line) => old.get(line.line_id) !== JSON.stringify(line)).map((line) => line.line_id);
}

// The rule preview's answer in words: "It would file 5 waiting lines now (3 in this statement)."
export function previewWords(matches, statementId) {
  const n = matches.length;
  if (n === 0) return "It would file no waiting line now; it applies to the lines of later statements.";
  const here = matches.filter((m) => m.statement_id === statementId).length;
  const where = here === n ? (n === 1 ? " (in this statement)" : ", all in this statement") : ` (${here} in this statement)`;
  return `It would file ${n} waiting line${n === 1 ? "" : "s"} now${where}:`;
}

// What "post every suggested line" did, in words, each count with its own noun:
// "Done: posted 26 lines and matched 1." / "Done: matched 1 line."
export function doneWords(posted, matched) {
  const lines = (n) => `${n} line${n === 1 ? "" : "s"}`;
  if (posted && matched) return `Done: posted ${lines(posted)} and matched ${matched}.`;
  if (posted) return `Done: posted ${lines(posted)}.`;
  return `Done: matched ${lines(matched)}.`;
}

// The rules page's form (`values`: its fields as typed) → {body} for POST/PUT /rules
// and /rules/preview, or {error, field} naming the field to fix. Amounts are signed as
// the lines' (money out negative); empty text and amounts are left out, an empty
// description is null (the line's own), an empty statement account null (any).
export function ruleFormBody(values) {
  const conditions = {};
  for (const key of Object.keys(TEXT_CONDITIONS)) {
    const text = (values[key] ?? "").trim().replace(/\s+/g, " ");
    if (text) conditions[key] = text;
  }
  for (const [key, field] of [["min_cents", "min"], ["max_cents", "max"]]) {
    let cents = null;
    try {
      cents = parseSigned(values[field] ?? "");
    } catch (err) {
      return { error: `${key === "min_cents" ? "Amount from" : "Amount to"}: ${err.message}`, field };
    }
    if (cents !== null) conditions[key] = cents;
  }
  if (Object.keys(conditions).length === 0) return { error: "Give the rule at least one condition: words of the payee or memo, or an amount.", field: "payee_is" };
  if (conditions.min_cents !== undefined && conditions.max_cents !== undefined && conditions.min_cents > conditions.max_cents) {
    return { error: "The amount's “from” is above its “to”: a card purchase of up to 50.00 is from -50.00 to -0.01.", field: "min" };
  }
  const name = (values.name ?? "").trim();
  if (!name) return { error: "Give the rule a name.", field: "name" };
  const counter = Number(values.counter_account_id);
  if (!counter) return { error: "Choose the account the lines go to.", field: "counter_account_id" };
  const priority = (values.priority ?? "").trim();
  if (priority !== "" && !/^\d{1,9}$/.test(priority)) return { error: "The priority is a whole number (lower first; 100 by default).", field: "priority" };
  const description = (values.description ?? "").trim();
  return {
    body: {
      name,
      counter_account_id: counter,
      account_id: Number(values.account_id) || null,
      conditions,
      priority: priority === "" ? 100 : Number(priority),
      description: description || null,
      active: values.active !== false,
    },
  };
}
