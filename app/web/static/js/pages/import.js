// Bank-statement import: read a CSV file in the browser, map its columns, then a
// choice per line (docs/web.md, "Import"):
// - the other side of each line, filled in from how a similar description was
//   booked before (matching.js; a bounded number of GET /transactions requests);
// - a preview (POST /import with dry_run) of every line as it will be posted: its
//   problem, checked again when its other side changes; a possible duplicate is a transaction of the bank account with the
//   line's amount within 3 days, whatever its wording (matching.js);
// - only ticked lines are imported, and a flagged duplicate starts unticked;
// - afterwards, the statement's closing balance is offered for reconciling.
import { api, orSignIn } from "../api.js";
import { busy, byId, h, say } from "../dom.js";
import { CsvError, guessMapping, lineTransaction, parseCsv, statementLines } from "../csv.js";
import { accountOptions } from "../ledger.js";
import { closingBalance, DUPLICATE_DAYS, possibleDuplicates, repeatedLines, searchesFor, suggestions } from "../matching.js";
import { formatCents } from "../money.js";
import { fillWhenIdle, lazyChoice } from "../lazy-choice.js";
import { startPage } from "../start.js";

const MAX_BYTES = 5 * 1024 * 1024;
// The requests a preview may make to find how lines were booked before: one page of
// the bank account's own history, then at most MAX_SEARCHES word searches, a few at
// a time. Beyond that a line simply starts with the default other side.
const HISTORY_LIMIT = 500;
const MAX_SEARCHES = 20;
const SEARCH_LIMIT = 50;
const AT_ONCE = 4;

const state = {
  style: "personal", accounts: null, rows: [],
  lines: [], // [{line, occurred_on, description, cents, balance, error, counter, hint, duplicates, repeatOf, problem, include, chosen}]
  bank: null, checking: 0, imported: false,
};

/** @param {string} selector */
const radio = (selector) => /** @type {HTMLInputElement} */ (document.querySelector(selector));
const splitMode = () => radio("input[name=amount-mode]:checked").value === "split";

function columnOptions(select, chosen) {
  const header = state.rows[0] ?? [];
  const named = byId("has-header").checked;
  select.replaceChildren(h("option", { value: "-1" }, "Choose…"),
    ...header.map((cell, i) => h("option", { value: i, selected: i === chosen },
      named && cell.trim() ? cell.trim() : `Column ${i + 1}`)));
}

function showMapping() {
  const guess = byId("has-header").checked
    ? guessMapping(state.rows[0] ?? [])
    : { date: 0, description: 1, amount: 2, debit: -1, credit: -1, balance: -1 };
  columnOptions(byId("map-date"), guess.date);
  columnOptions(byId("map-description"), guess.description);
  columnOptions(byId("map-amount"), guess.amount);
  columnOptions(byId("map-debit"), guess.debit);
  columnOptions(byId("map-credit"), guess.credit);
  columnOptions(byId("map-balance"), guess.balance);
  byId("map-balance").options[0].textContent = "None";
  if (guess.amount < 0 && guess.debit >= 0 && guess.credit >= 0) {
    radio("input[name=amount-mode][value=split]").checked = true;
  }
  const sample = (state.rows[byId("has-header").checked ? 1 : 0] ?? [])[Math.max(guess.date, 0)] ?? "";
  if (/^\d{1,2}[/.-]\d{1,2}[/.-]\d{4}$/.test(sample.trim())) byId("date-format").value = "DD/MM/YYYY";
  showAmountFields();
  byId("mapping-section").hidden = false;
  byId("preview-section").hidden = true;
  byId("reconcile-offer").hidden = true;
}

function showAmountFields() {
  byId("amount-field").hidden = splitMode();
  byId("debit-field").hidden = !splitMode();
  byId("credit-field").hidden = !splitMode();
}

byId("csv-file").addEventListener("change", async (event) => {
  const out = byId("file-message");
  say(out, "");
  byId("mapping-section").hidden = true;
  byId("preview-section").hidden = true;
  byId("reconcile-offer").hidden = true;
  const file = event.currentTarget.files[0];
  if (!file) return;
  if (file.size > MAX_BYTES) return say(out, "That file is larger than 5 MB; split the statement into shorter periods.", "error", byId("csv-file"));
  try {
    state.rows = parseCsv(await file.text());
  } catch (err) {
    if (!(err instanceof CsvError)) throw err;
    return say(out, err.message, "error", byId("csv-file"));
  }
  if (state.rows.length < 2) return say(out, "The file holds no statement lines.", "error", byId("csv-file"));
  say(out, `Read ${state.rows.length} lines from ${file.name}.`, "info");
  showMapping();
});

byId("has-header").addEventListener("change", showMapping);
for (const radio of document.querySelectorAll("input[name=amount-mode]")) radio.addEventListener("change", showAmountFields);

function mapping() {
  const n = (id) => Number(byId(id).value);
  return {
    date: n("map-date"), description: n("map-description"), amount: n("map-amount"),
    debit: n("map-debit"), credit: n("map-credit"), balance: n("map-balance"), split: splitMode(),
    dateFormat: byId("date-format").value, hasHeader: byId("has-header").checked,
  };
}

// --- how similar lines were booked before --------------------------------------

// Run `jobs` (functions returning promises) at most AT_ONCE at a time.
async function inTurn(jobs) {
  const results = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, jobs.length) }, worker));
  return results;
}

// Fill each line's `counter` from the books: the bank account's recent history first
// (one request), then a word search for the lines still without one. A search that
// fails only leaves its lines on the default.
async function suggestCounters(lines, bank) {
  const usable = new Set(state.accounts.open.filter((a) => a.id !== Number(bank)).map((a) => a.id));
  const recent = await orSignIn(api("/transactions", { query: { limit: String(HISTORY_LIMIT), account_id: bank } }));
  let found = suggestions(lines, recent.items, bank, usable);
  const words = searchesFor(lines, found, MAX_SEARCHES);
  const pages = await inTurn(words.map((q) => () =>
    orSignIn(api("/transactions", { query: { limit: String(SEARCH_LIMIT), q } })).catch(() => ({ items: [] }))));
  const more = pages.flatMap((page) => page.items);
  if (more.length) {
    const rest = suggestions(lines, more, bank, usable);
    found = new Map([...rest, ...found]);
  }
  return found;
}

// --- the preview: every line as it will be posted ----------------------------------

const ready = (line) => !line.error && line.counter;

// The bank account's transactions around the lines (one request for the lines' dates,
// DUPLICATE_DAYS either side): Map id → transaction, newest first, against which each
// line's possible duplicates are found (matching.js). A failed read leaves the
// server's look-alikes only.
async function bankTransactions(lines) {
  const days = lines.map((line) => line.occurred_on).filter(Boolean).sort();
  if (!days.length) return new Map();
  const shift = (day, n) => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86400000).toISOString().slice(0, 10);
  const found = await orSignIn(api("/transactions", {
    query: { account_id: state.bank, from: shift(days[0], -DUPLICATE_DAYS), to: shift(days.at(-1), DUPLICATE_DAYS) },
  })).catch(() => []);
  return new Map((Array.isArray(found) ? found : []).map((tx) => [tx.id, tx]));
}

// POST /import dry_run with every line that has its other side: each answer row
// gives that line's problem; its possible duplicates are the bank account's
// transactions of its amount within 3 days, whatever their wording and other side,
// unless another bank reference tells them apart (matching.js). A newly flagged duplicate is unticked unless the person ticked it after
// it was flagged.
async function check() {
  const sent = state.lines.filter(ready);
  const asked = ++state.checking;
  // The preview and the bank account's transactions are asked for at once.
  const [answer, booked] = await Promise.all([
    sent.length
      ? orSignIn(api("/import", {
        method: "POST",
        json: { transactions: sent.map((line) => lineTransaction(line, state.bank, line.counter)), dry_run: true },
      }))
      : { rows: [] },
    bankTransactions(sent),
  ]);
  if (asked !== state.checking) return; // a later check is on its way
  const rows = answer.rows ?? [];
  for (const line of state.lines) {
    line.problem = null;
    if (!line.error && !line.counter) line.problem = "Choose the other side.";
  }
  sent.forEach((line, i) => {
    const row = rows[i] ?? {};
    line.problem = row.error ? row.error.replace(/^row \d+: /, "") : null;
    const was = line.duplicates.join();
    line.duplicates = possibleDuplicates(line, state.bank, booked, row.possible_duplicates);
    if (line.duplicates.join() !== was && !line.chosen) line.include = line.duplicates.length === 0 && line.repeatOf === null;
  });
  renderPreview();
}

// The other-side choice with every open account but the bank, built once per drawing
// and copied for each line (a thousand lines each building its forty options took
// most of the preview's drawing).
function counterTemplate() {
  const others = state.accounts.open.filter((a) => a.id !== Number(state.bank));
  return h("select", { class: "line-counter" }, ...accountOptions(others, { style: state.style }));
}

function counterSelect(line, template) {
  const select = lazyChoice(template, line.counter ? String(Number(line.counter)) : "", {
    "aria-label": `Other side of line ${line.line}: ${line.description}`,
  });
  select.addEventListener("change", () => {
    line.counter = select.value;
    line.hint = null;
    line.chosen = false; // a new other side is a new line: checked afresh
    line.include = line.repeatOf === null;
    line.duplicates = [];
    check().catch((err) => say(byId("import-message"), err.message));
  });
  return select;
}

function renderPreview() {
  const template = counterTemplate();
  let bad = 0;
  let dupes = 0;
  let ticked = 0;
  const rows = state.lines.map((line) => {
    const problem = line.error ?? line.problem;
    const usable = !problem;
    const flagged = line.duplicates.length > 0 || line.repeatOf !== null;
    if (problem) bad += 1;
    else if (flagged) dupes += 1;
    if (usable && line.include) ticked += 1;
    const box = h("input", {
      type: "checkbox", class: "line-include", checked: usable && line.include, disabled: !usable,
      "aria-label": `Import line ${line.line}: ${line.description}`,
    });
    box.addEventListener("change", () => {
      line.include = box.checked;
      line.chosen = true;
      renderPreview();
    });
    const check = problem
      ? h("span", { class: "flag" }, problem)
      : line.duplicates.length
        ? h("span", { class: "flag" }, `Possible duplicate of a transaction already in the books (#${line.duplicates.join(", #")})${line.include ? ": will be imported as well" : ": left out"}`)
        : line.repeatOf !== null
          ? h("span", { class: "flag" }, `The same as line ${line.repeatOf} of this file${line.include ? ": will be imported as well" : ": left out"}`)
          : h("span", {}, "OK");
    const counter = line.error ? h("span", {}, "") : h("span", { class: "line-side" }, counterSelect(line, template),
      line.hint ? h("span", { class: "hint" }, `as “${line.hint}”`) : null);
    return h("tr", { "data-line": line.line, class: problem ? "invalid" : flagged ? "duplicate" : "" },
      h("td", { "data-label": "Import" }, box),
      h("td", { "data-label": "Line" }, String(line.line)),
      h("td", { class: "date", "data-label": "Date" }, line.occurred_on ?? ""),
      h("td", { "data-label": "Description" }, h("span", {}, line.description)),
      h("td", { class: "num", "data-label": "Amount" }, line.cents === null ? "" : formatCents(line.cents)),
      h("td", { "data-label": "Other side" }, counter),
      h("td", { "data-label": "Check" }, check));
  });
  byId("preview-table").querySelector("tbody").replaceChildren(...rows);
  fillWhenIdle(Array.from(byId("preview-table").querySelectorAll("select.line-counter")), template);
  const n = state.lines.length;
  const parts = [`${n} line${n === 1 ? "" : "s"}: ${ticked} ticked to import`];
  if (dupes) parts.push(`${dupes} possible duplicate${dupes === 1 ? "" : "s"} (left out unless ticked)`);
  if (bad) parts.push(`${bad} with a problem (left out)`);
  byId("preview-summary").textContent = `${parts.join(", ")}.`;
  const submit = byId("import-submit");
  submit.disabled = ticked === 0 || state.imported;
  submit.textContent = `Import ${ticked} transaction${ticked === 1 ? "" : "s"}`;
  byId("preview-section").hidden = false;
}

byId("preview").addEventListener("click", (event) => {
  const out = byId("mapping-message");
  say(out, "");
  say(byId("import-message"), "");
  const m = mapping();
  for (const [key, id, label] of [["date", "map-date", "date"], ["description", "map-description", "description"]]) {
    if (m[key] < 0) return say(out, `Choose the ${label} column.`, "error", byId(id));
  }
  if (!m.split && m.amount < 0) return say(out, "Choose the amount column.", "error", byId("map-amount"));
  if (m.split && (m.debit < 0 || m.credit < 0)) return say(out, "Choose the debit and the credit column.", "error", byId(m.debit < 0 ? "map-debit" : "map-credit"));
  const bank = byId("import-bank").value;
  if (!bank) return say(out, "Choose the bank account.", "error", byId("import-bank"));
  const fallback = byId("import-counter").value;
  if (fallback === bank) return say(out, "The other side must be another account than the bank account.", "error", byId("import-counter"));
  state.bank = bank;
  state.imported = false;
  byId("reconcile-offer").hidden = true;
  const lines = statementLines(state.rows, m);
  busy(event.currentTarget, async () => {
    try {
      const found = await suggestCounters(lines, bank);
      const repeats = repeatedLines(lines);
      state.lines = lines.map((line, i) => ({
        ...line,
        counter: found.get(i) ? String(found.get(i).account_id) : fallback,
        hint: found.get(i)?.from.description ?? null,
        duplicates: [], repeatOf: repeats.get(i) ?? null, problem: null, include: !repeats.has(i), chosen: false,
      }));
      const missing = state.lines.filter((line) => !line.error && !line.counter).length;
      if (missing) {
        say(out, `${missing} line${missing === 1 ? " has" : "s have"} nothing like it in the books: choose the other side for ${missing === 1 ? "it" : "them"} below, or one for every such line here.`, "info");
      }
      await check();
    } catch (err) {
      return say(out, err.message);
    }
  });
});

byId("import-submit").addEventListener("click", (event) => {
  const out = byId("import-message");
  say(out, "");
  const chosen = state.lines.filter((line) => ready(line) && !line.problem && line.include);
  if (chosen.length === 0) return say(out, "Tick the lines to import.");
  busy(event.currentTarget, async () => {
    try {
      const result = await orSignIn(api("/import", {
        method: "POST",
        json: { transactions: chosen.map((line) => lineTransaction(line, state.bank, line.counter)), dry_run: false },
      }));
      state.imported = true;
      const left = state.lines.length - chosen.length;
      say(out, `Imported ${result.imported} transaction${result.imported === 1 ? "" : "s"}${left ? `; ${left} line${left === 1 ? "" : "s"} left out` : ""}. They are on the Books page and in the account's register.`, "info");
      offerReconciliation();
    } catch (err) {
      say(out, `Nothing was imported. ${err.message}`);
    }
  }).finally(() => {
    if (state.imported) byId("import-submit").disabled = true;
  });
});

// The statement's end, offered for reconciling on the register page (statement-first).
function offerReconciliation() {
  const closing = closingBalance(state.lines.filter((line) => !line.error));
  if (!closing) return;
  const account = state.accounts.byId.get(Number(state.bank));
  const link = new URLSearchParams({ account: state.bank, statement_date: closing.statement_date });
  if (closing.closing_balance_cents !== null) link.set("closing", String(closing.closing_balance_cents));
  byId("reconcile-link").href = `/register?${link}`;
  byId("reconcile-link").textContent = `Reconcile ${account?.name ?? "the account"} to ${closing.statement_date}`;
  byId("reconcile-offer-text").textContent = closing.closing_balance_cents !== null
    ? `The statement ends on ${closing.statement_date} with a balance of ${formatCents(closing.closing_balance_cents)}. Reconcile it now: the register opens at that date with that balance filled in.`
    : `The statement ends on ${closing.statement_date}. Reconcile it now: the register opens at that date; type the statement's closing balance there.`;
  byId("reconcile-offer").hidden = false;
}

async function main() {
  const start = await startPage("import");
  state.style = start.style;
  state.accounts = start.accounts;
  const open = state.accounts.open;
  byId("import-bank").replaceChildren(...accountOptions(open, { kinds: ["asset", "liability"], style: state.style }));
  byId("import-counter").replaceChildren(...accountOptions(open, { style: state.style, empty: "None: choose per line" }));
  document.body.dataset.ready = "true";
}

main().catch((err) => say(byId("message"), err.message));
