// The statement page's rules (static/js/bankfile.js): status words, the account a
// line goes to, the one "post every suggested line" request, a rule from a line,
// when reconciling can be pressed.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  ACCEPT, bulkActions, bulkWords, candidateLine, candidateWindow, candidateWords, changedLines, chosenAccount,
  conditionWords, defaultDescription, differenceWords, doneWords, heldLines, heldWords, openingCheck, periodWords,
  previewWords, rangeWords, reconcileState, reconciliationOf, registerClosing, ruleFormBody, ruleFromLine, ruleWords,
  statusWord, suggestedDetail, suggestionWords, summaryWords, UNDOABLE, waitingCount,
} from "../../app/web/static/js/bankfile.js";

const line = (line_id, status, extra = {}) => ({
  line_id, status, booked_on: "2026-03-10", amount_cents: -1250, payee: "Grocer", memo: null,
  bank_ref: `R${line_id}`, transaction_id: null, suggestion: null, ...extra,
});
const rule = (account_id) => ({ account_id, source: "rule", rule_id: 7 });

test("the file input offers every format the server reads", () => {
  for (const ext of [".ofx", ".qfx", ".xml", ".sta", ".mt940", ".940", ".txt"]) assert.ok(ACCEPT.split(",").includes(ext));
});

test("statuses in a treasurer's words", () => {
  assert.deepEqual(["new", "match", "duplicate", "posted", "matched", "ignored"].map(statusWord),
    ["New", "Found in the books", "Already imported", "Posted", "Matched", "Ignored"]);
  const lines = [line(1, "new"), line(2, "new"), line(3, "match"), line(4, "posted")];
  assert.equal(summaryWords(lines), "4 lines: 2 new, 1 found in the books, 1 posted.");
  assert.equal(summaryWords([]), "0 lines.");
  assert.equal(waitingCount(lines), 3);
});

test("a line's account: the person's choice, else the suggestion the picker offers", () => {
  const offered = new Set([5, 6]);
  const choices = new Map();
  assert.equal(chosenAccount(line(1, "new", { suggestion: rule(5) }), choices, offered), 5);
  assert.equal(chosenAccount(line(1, "new"), choices, offered), null);
  // An archived (not offered) suggestion is no choice.
  assert.equal(chosenAccount(line(1, "new", { suggestion: rule(9) }), choices, offered), null);
  choices.set(1, 6);
  assert.equal(chosenAccount(line(1, "new", { suggestion: rule(5) }), choices, offered), 6);
  choices.set(1, 0); // "Choose…" picked on purpose
  assert.equal(chosenAccount(line(1, "new", { suggestion: rule(5) }), choices, offered), null);
});

test("post every suggested line: one body, new lines with an account posted, found ones matched", () => {
  const lines = [
    line(1, "new", { suggestion: rule(5) }),
    line(2, "new"), // nothing suggested: left for the person
    line(3, "match", { transaction_id: 40 }),
    line(4, "duplicate", { transaction_id: 41 }),
    line(5, "posted", { suggestion: rule(5) }),
    line(6, "new", { suggestion: rule(5) }),
    line(7, "ignored"),
  ];
  const choices = new Map([[6, 6], [2, 0]]);
  const bulk = bulkActions(lines, choices, new Set([5, 6]));
  assert.deepEqual(bulk.lines, [
    { line_id: 1, action: "post", account_id: 5 },
    { line_id: 3, action: "match" },
    { line_id: 6, action: "post", account_id: 6 },
  ]);
  assert.equal(bulk.post, 2);
  assert.equal(bulk.match, 1);
  assert.equal(bulkWords(bulk), "Post 2 suggested lines and match 1");
  assert.equal(bulkWords({ post: 1, match: 0 }), "Post 1 suggested line");
  assert.equal(bulkWords({ post: 0, match: 2 }), "Match 2 lines found in the books");
  assert.equal(bulkWords({ post: 0, match: 0 }), "Nothing suggested to post");
});

test("post every suggested line never posts a new line that might be an entry in the books", () => {
  const maybe = { transaction_id: 40, occurred_on: "2026-03-09", description: "Subs L Garcia", shared_words: 0 };
  const lines = [
    line(1, "new", { suggestion: rule(5), candidates: [maybe] }), // suggested, but perhaps booked
    line(2, "new", { suggestion: rule(5), candidates: [] }),
    line(3, "new", { candidates: [maybe] }), // the person's own choice: still not here
  ];
  const bulk = bulkActions(lines, new Map([[3, 6]]), new Set([5, 6]));
  assert.deepEqual(bulk.lines, [{ line_id: 2, action: "post", account_id: 5 }]);
  assert.equal(bulk.post, 1);
});

test("where a suggestion comes from", () => {
  const rules = new Map([[7, { id: 7, name: "Grocer → Food" }]]);
  assert.equal(suggestionWords(rule(5), rules), "by the rule “Grocer → Food”");
  assert.equal(suggestionWords({ account_id: 5, source: "rule", rule_id: 8 }, rules), "by a rule");
  assert.equal(suggestionWords({ account_id: 5, source: "history", rule_id: null }, rules), "as filed before");
  assert.equal(suggestionWords(null, rules), "");
  // A schedule's expected item the line meets, named (issue 45).
  const schedules = new Map([[3, { id: 3, name: "Dues: Ann Baker" }]]);
  const expected = { account_id: 5, source: "schedule", rule_id: null, schedule_id: 3, occurs_on: "2026-11-24" };
  assert.equal(suggestionWords(expected, rules, schedules), "as the expected “Dues: Ann Baker” due 2026-11-24");
  assert.equal(suggestionWords({ ...expected, schedule_id: 4 }, rules, schedules), "as an expected item due 2026-11-24");
});

test("always file this payee here: payee_is, limited to the statement's account", () => {
  const body = ruleFromLine(line(1, "new", { payee: "  Corner   Grocer " }), 3, { id: 5, name: "Food" });
  assert.deepEqual(body, {
    name: "Corner Grocer → Food", counter_account_id: 5, account_id: 3, conditions: { payee_is: "Corner Grocer" },
  });
  assert.equal(ruleFromLine(line(1, "new", { payee: null }), 3, { id: 5, name: "Food" }), null);
  assert.equal(ruleFromLine(line(1, "new", { payee: "  " }), 3, { id: 5, name: "Food" }), null);
  const long = ruleFromLine(line(1, "new", { payee: "x".repeat(300) }), 3, { id: 5, name: "Food" });
  assert.equal(long.name.length, 100);
  assert.ok(long.name.endsWith(" → Food"));
  assert.equal(long.conditions.payee_is.length, 200);
});

test("reconcile only with a closing balance and nothing waiting", () => {
  const statement = { closing_balance_cents: 206667, closing_balance_on: "2026-03-31", lines: [line(1, "posted"), line(2, "ignored"), line(3, "duplicate")] };
  assert.deepEqual(reconcileState(statement), { ready: true, done: false, reason: "" });
  assert.equal(reconcileState({ ...statement, lines: [line(1, "new"), line(2, "match")] }).reason,
    "2 lines are still waiting: post, match or ignore them first.");
  assert.equal(reconcileState({ ...statement, lines: [line(1, "new")] }).reason,
    "1 line is still waiting: post, match or ignore it first.");
  assert.equal(reconcileState({ ...statement, closing_balance_cents: null }).ready, false);
  assert.equal(reconcileState({ ...statement, closing_balance_on: null }).ready, false);
  // 0.00 is a closing balance.
  assert.equal(reconcileState({ ...statement, closing_balance_cents: 0 }).ready, true);
});

test("a reconciled statement is not offered again", () => {
  const statement = { closing_balance_cents: -52345, closing_balance_on: "2026-03-31", lines: [line(1, "posted")] };
  const event = (object) => ({ action: "entries.reconciled", object: { account_id: 4, statement_date: "2026-03-31", closing_balance_cents: 52345, ...object } });
  // A card: the statement's -523.45 is the register's 523.45 owed.
  const done = reconciliationOf([event({ account_id: 9 }), event({})], 4, statement, "liability");
  assert.deepEqual(done, { statement_date: "2026-03-31", closing_balance_cents: 52345 });
  assert.equal(reconciliationOf([event({})], 4, statement, "asset"), null);
  assert.equal(reconciliationOf([event({ statement_date: "2026-02-28" })], 4, statement, "liability"), null);
  assert.equal(reconciliationOf([event({ account_id: 5 })], 4, statement, "liability"), null);
  assert.equal(reconciliationOf([{ action: "entries.cleared", object: event({}).object }], 4, statement, "liability"), null);
  assert.equal(reconciliationOf([event({})], 4, { ...statement, closing_balance_cents: null }, "liability"), null);
  const state = reconcileState(statement, done);
  assert.equal(state.ready, false);
  assert.equal(state.done, true);
  assert.match(state.reason, /^This statement is reconciled: .* up to 2026-03-31 /);
  // Lines waiting come first: they must be done before anything else.
  assert.equal(reconcileState({ ...statement, lines: [line(1, "new")] }, done).done, false);
});

test("the register's closing figure: a card's debt is positive there", () => {
  assert.equal(registerClosing({ closing_balance_cents: 206667 }, "asset"), 206667);
  assert.equal(registerClosing({ closing_balance_cents: -50000 }, "liability"), 50000);
  assert.equal(registerClosing({ closing_balance_cents: null }, "asset"), null);
});

test("the difference, said plainly", () => {
  const text = differenceWords({ closing_balance_on: "2026-03-31", closing_balance_cents: 206667 }, "Bank", -1250);
  assert.match(text, /^Not reconciled: the cleared entries in Bank up to 2026-03-31 do not add up to the statement's closing balance of 2,066\.67: the difference is -12\.50\./);
});

test("period words", () => {
  assert.equal(periodWords({ period_from: "2026-03-01", period_to: "2026-03-31" }), "2026-03-01 to 2026-03-31");
  assert.equal(periodWords({ period_from: null, period_to: null, closing_balance_on: "2026-03-31" }), "to 2026-03-31");
  assert.equal(periodWords({ period_from: null, period_to: null, closing_balance_on: null }), "");
});

test("candidates are looked for 3 days either side of the lines found in the books", () => {
  const lines = [
    line(1, "new", { booked_on: "2026-01-01" }),
    line(2, "match", { booked_on: "2026-03-02", transaction_id: 4 }),
    line(3, "duplicate", { booked_on: "2026-02-27", transaction_id: 5 }),
    line(4, "matched", { booked_on: "2026-12-01", transaction_id: 6 }),
  ];
  assert.deepEqual(candidateWindow(lines), { from: "2026-02-24", to: "2026-03-05" });
  assert.equal(candidateWindow([line(1, "new")]), null);
  assert.equal(candidateWords({ occurred_on: "2026-03-02", description: "Hall rent", amount_cents: -45000 }), "2026-03-02 · Hall rent · -450.00");
});

test("only changed lines are redrawn", () => {
  const before = [line(1, "new"), line(2, "new"), line(3, "match")];
  const after = [line(1, "posted"), line(2, "new"), line(3, "match", { transaction_id: 9 })];
  assert.deepEqual(changedLines(before, after), [1, 3]);
});

test("the rule preview in words", () => {
  assert.match(previewWords([], 1), /no waiting line/);
  assert.equal(previewWords([{ statement_id: 1 }], 1), "It would file 1 waiting line now (in this statement):");
  assert.equal(previewWords([{ statement_id: 1 }, { statement_id: 1 }], 1), "It would file 2 waiting lines now, all in this statement:");
  assert.equal(previewWords([{ statement_id: 1 }, { statement_id: 2 }], 1), "It would file 2 waiting lines now (1 in this statement):");
});

test("what posting every suggested line did: each count with its own noun", () => {
  // Issue 44: "posted 26 and matched 1 lines".
  assert.equal(doneWords(26, 1), "Done: posted 26 lines and matched 1.");
  assert.equal(doneWords(1, 3), "Done: posted 1 line and matched 3.");
  assert.equal(doneWords(1, 0), "Done: posted 1 line.");
  assert.equal(doneWords(2, 0), "Done: posted 2 lines.");
  assert.equal(doneWords(0, 1), "Done: matched 1 line.");
  assert.equal(doneWords(0, 4), "Done: matched 4 lines.");
});

test("a schedule's suggestion names the expected item it meets", () => {
  const schedules = new Map([[3, { id: 3, name: "Hall rent" }]]);
  const due = { account_id: 5, source: "schedule", rule_id: null, schedule_id: 3, occurs_on: "2026-03-01" };
  assert.equal(suggestedDetail(due, new Map(), schedules), "Expected: Hall rent due 2026-03-01.");
  assert.equal(suggestionWords(due, new Map(), schedules), "as the expected “Hall rent” due 2026-03-01");
  // A schedule the page does not know (deleted since, or not readable): still said.
  assert.equal(suggestedDetail({ ...due, schedule_id: 9 }, new Map(), schedules), "Expected: a scheduled item due 2026-03-01.");
  assert.equal(suggestedDetail({ ...due, occurs_on: undefined }, new Map()), "Expected: a scheduled item.");
  assert.equal(suggestedDetail(rule(5), new Map([[7, { id: 7, name: "Grocer" }]])), "Suggested by the rule “Grocer”.");
  assert.equal(suggestedDetail(null, new Map()), "Nothing suggested: choose the account.");
});

test("a line's candidates, and what the one-click action leaves and why", () => {
  assert.equal(candidateLine({ occurred_on: "2026-10-28", description: "Cheque 101", shared_words: 0 }), "2026-10-28 · Cheque 101 (no word in common)");
  assert.equal(candidateLine({ occurred_on: "2026-10-28", description: "Cheque 101", shared_words: 1 }), "2026-10-28 · Cheque 101 (1 word in common)");
  assert.equal(candidateLine({ occurred_on: "2026-10-28", description: "Cheque 101", shared_words: 2 }), "2026-10-28 · Cheque 101 (2 words in common)");
  const garcia = { transaction_id: 40, occurred_on: "2026-11-23", description: "Subs L Garcia", shared_words: 0 };
  const patel = { transaction_id: 41, occurred_on: "2026-11-02", description: "Subs A Patel", shared_words: 0 };
  const lines = [
    line(1, "new", { payee: "K JONES", amount_cents: 1500, candidates: [garcia, patel] }),
    line(2, "new", { candidates: [] }),
    line(3, "match", { candidates: [garcia] }), // found: the one-click matches it
    line(4, "posted", { candidates: [] }),
  ];
  const held = heldLines(lines);
  assert.deepEqual(held.map((one) => one.line.line_id), [1]);
  assert.equal(heldWords(held), "Not posted, as it might already be in the books: line 1 (K JONES, 15.00) might be Subs L Garcia of 2026-11-23 or Subs A Patel of 2026-11-02. Match or post it on the line.");
  assert.equal(heldWords([]), "");
  assert.match(heldWords(heldLines([lines[0], { ...lines[0], line_id: 5 }])), /^Not posted, as they might .*; line 5 .* Match or post each on the line\.$/);
});

test("undo, and the description a posting gets when none is typed", () => {
  assert.deepEqual(["new", "match", "duplicate", "posted", "matched", "ignored"].filter((s) => UNDOABLE.has(s)), ["posted", "matched", "ignored"]);
  assert.equal(defaultDescription({ payee: "Corner Shop", memo: "card 1234" }), "Corner Shop · card 1234");
  assert.equal(defaultDescription({ payee: " Corner Shop ", memo: null }), "Corner Shop");
  assert.equal(defaultDescription({ payee: null, memo: "card 1234" }), "card 1234");
  assert.equal(defaultDescription({ payee: "", memo: " " }), "Bank statement");
});

test("the opening balance against the last reconciliation before the statement", () => {
  const rec = (day, cents, account_id = 4) => ({ action: "entries.reconciled", object: { account_id, statement_date: day, closing_balance_cents: cents } });
  const statement = { opening_balance_cents: 100000, period_from: null, closing_balance_on: "2026-11-30" };
  const events = [rec("2026-09-30", 90000), rec("2026-10-31", 100000), rec("2026-10-31", 5, 9)];
  assert.deepEqual(openingCheck(statement, events, 4, "asset"), { agree: true, words: "The opening balance 1,000.00 agrees with the last reconciliation (2026-10-31)." });
  // This statement's own reconciliation (its closing date) is no "last one before".
  assert.equal(openingCheck(statement, [...events, rec("2026-11-30", 73780)], 4, "asset").agree, true);
  const off = openingCheck({ ...statement, opening_balance_cents: 99001 }, events, 4, "asset");
  assert.equal(off.agree, false);
  assert.equal(off.words, "The opening balance 990.01 differs from the last reconciliation (2026-10-31, closing 1,000.00) by -9.99: a statement may be missing, or an entry up to then changed.");
  // With a period: reconciliations before its first day.
  assert.equal(openingCheck({ ...statement, period_from: "2026-10-01" }, events, 4, "asset").words,
    "The opening balance 1,000.00 differs from the last reconciliation (2026-09-30, closing 900.00) by 100.00: a statement may be missing, or an entry up to then changed.");
  // A card: the bank's -500.00 is the register's 500.00 owed.
  assert.equal(openingCheck({ ...statement, opening_balance_cents: -50000 }, [rec("2026-10-31", 50000)], 4, "liability").agree, true);
  assert.equal(openingCheck(statement, [], 4, "asset").agree, null);
  assert.equal(openingCheck({ ...statement, opening_balance_cents: null }, events, 4, "asset"), null);
});

test("always file this payee here: payee contains, memo contains, an amount range", () => {
  const grocer = line(1, "new", { payee: "Corner  Grocer", memo: "card 1234", amount_cents: -2345 });
  const food = { id: 5, name: "Food" };
  assert.deepEqual(ruleFromLine(grocer, 3, food, { kind: "payee_contains", text: " corner ", min_cents: -5000, max_cents: -1 }), {
    name: "corner → Food", counter_account_id: 5, account_id: 3, conditions: { payee_contains: "corner", min_cents: -5000, max_cents: -1 },
  });
  assert.deepEqual(ruleFromLine(grocer, 3, food, { kind: "memo_contains" }).conditions, { memo_contains: "card 1234" });
  assert.deepEqual(ruleFromLine(grocer, 3, food, { kind: "payee_is", text: "", max_cents: -5000 }), {
    name: "amount at most -50.00 → Food", counter_account_id: 5, account_id: 3, conditions: { max_cents: -5000 },
  });
  assert.equal(ruleFromLine(grocer, 3, food, { kind: "payee_is", text: " ", min_cents: null }), null);
});

test("a rule in words", () => {
  assert.equal(rangeWords({ min_cents: -5000, max_cents: -1 }), "amount from -50.00 to -0.01");
  assert.equal(rangeWords({ min_cents: 1500, max_cents: 1500 }), "amount exactly 15.00");
  assert.equal(rangeWords({ min_cents: 0 }), "amount at least 0.00");
  assert.equal(rangeWords({ max_cents: -5000 }), "amount at most -50.00");
  assert.equal(rangeWords({ payee_is: "x" }), "");
  assert.equal(conditionWords({ payee_is: "Shell", memo_contains: "fuel", min_cents: -5000 }), "payee is “Shell” and memo contains “fuel” and amount at least -50.00");
  const accounts = new Map([[3, { id: 3, name: "Bank" }], [5, { id: 5, name: "Fuel" }]]);
  const rule = { name: "Fuel", priority: 100, account_id: 3, counter_account_id: 5, description: null, active: true, conditions: { payee_contains: "shell" } };
  assert.equal(ruleWords(rule, accounts), "Lines whose payee contains “shell”, in Bank, go to Fuel; priority 100.");
  assert.equal(ruleWords({ ...rule, account_id: null, description: "Fuel", active: false, priority: 5 }, accounts),
    "Lines whose payee contains “shell”, in any account, go to Fuel (described “Fuel”); priority 5, inactive.");
});

test("the rules page's form: every condition the API takes, checked before it is sent", () => {
  const form = { name: " Fuel ", counter_account_id: "5", account_id: "", payee_is: "", payee_contains: " shell  station ", memo_contains: "", min: "-50.00", max: "", description: "", priority: "", active: true };
  assert.deepEqual(ruleFormBody(form), { body: {
    name: "Fuel", counter_account_id: 5, account_id: null, conditions: { payee_contains: "shell station", min_cents: -5000 },
    priority: 100, description: null, active: true,
  } });
  const all = ruleFormBody({ ...form, account_id: "3", payee_is: "Shell", memo_contains: "fuel", max: "(1.00)", description: "Fuel", priority: "7", active: false });
  assert.deepEqual(all.body.conditions, { payee_is: "Shell", payee_contains: "shell station", memo_contains: "fuel", min_cents: -5000, max_cents: -100 });
  assert.deepEqual([all.body.account_id, all.body.priority, all.body.description, all.body.active], [3, 7, "Fuel", false]);
  assert.equal(ruleFormBody({ ...form, payee_contains: "", min: "" }).field, "payee_is");
  assert.equal(ruleFormBody({ ...form, min: "12.345" }).field, "min");
  assert.equal(ruleFormBody({ ...form, max: "-60" }).field, "min"); // from above to
  assert.equal(ruleFormBody({ ...form, name: " " }).field, "name");
  assert.equal(ruleFormBody({ ...form, counter_account_id: "" }).field, "counter_account_id");
  assert.equal(ruleFormBody({ ...form, priority: "1.5" }).field, "priority");
});
