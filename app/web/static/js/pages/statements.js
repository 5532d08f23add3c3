// A bank or card account's statements (docs/statements.md, "The statement page"):
// read the bank's file, file its lines (each with its suggested account preselected,
// all of them in one request), match or ignore, make a rule from a line, and
// reconcile with the statement's closing balance. The rules are static/js/bankfile.js.
import { api, ApiError, orSignIn } from "../api.js";
import { busy, byId, clearMessagesOnAction, formatWhen, h, keepDates, say } from "../dom.js";
import { accountOptions } from "../ledger.js";
import { formatCents } from "../money.js";
import { startPage } from "../start.js";
import { saveBlob } from "../download.js";
import { CsvError, parseSigned } from "../csv.js";
import { fillWhenIdle, lazyChoice } from "../lazy-choice.js";
import {
  ACCEPT, bulkActions, bulkWords, candidateLine, candidateWindow, candidateWords, changedLines, chosenAccount,
  conditionWords, defaultDescription, differenceWords, doneWords, heldLines, heldWords, openingCheck, periodWords,
  previewWords, reconcileState, reconciliationOf, registerClosing, ruleFromLine, STATUS, statusWord, suggestedDetail,
  summaryWords, TEXT_CONDITIONS, UNDOABLE,
} from "../bankfile.js";

const LINES_PAGE = 100; // lines drawn at a time: a 1,000-line file stays quick on a phone
const AUDIT_PAGES = 4; // the account's reconciliations are looked for in the newest 2,000
const FORMATS = { ofx: "OFX", "camt.053": "camt.053", mt940: "MT940" };
const LAST_ACCOUNT = "ledger.statements.account"; // the account the page opens next time

const state = {
  style: "personal", accounts: null, accountId: null,
  statement: null, statements: [], rules: new Map(), schedules: new Map(),
  choices: new Map(), // line_id → account id the person picked (0: none)
  descriptions: new Map(), // line_id → the description typed for its posting ("" : the default)
  offered: new Set(), // account ids the line pickers offer
  candidates: new Map(), // transaction id → register item (found / already imported lines)
  picker: null, // a <select> of the offered accounts, cloned for each line
  shown: LINES_PAGE, nodes: new Map(), pendingFile: null,
  reconciliations: [], // the account's entries.reconciled events (a statement's done or not)
};
const message = () => byId("statement-message");

// say() with each date kept on one line (a phone broke 2026-11-30 at its hyphen).
function tell(el, text, kind = "error", field = null) {
  say(el, text, kind, field);
  if (text) el.replaceChildren(...keepDates(text));
}
const account = () => state.accounts.byId.get(state.accountId);

function remember() {
  try {
    window.localStorage.setItem(LAST_ACCOUNT, String(state.accountId));
  } catch {
    // storage off (a private window): the address still carries the account
  }
  const url = new URL(window.location.href);
  url.searchParams.set("account", String(state.accountId));
  if (state.statement) url.searchParams.set("statement", String(state.statement.id));
  else url.searchParams.delete("statement");
  window.history.replaceState(null, "", url.pathname + url.search);
}

// ---- one line ----

function statusDetail(line) {
  if (line.status === "new") return suggestedDetail(line.suggestion, state.rules, state.schedules);
  if (line.status === "match" || line.status === "duplicate") {
    const item = state.candidates.get(line.transaction_id);
    const first = line.candidates?.find((c) => c.transaction_id === line.transaction_id);
    const what = item ? candidateWords(item)
      : first ? candidateWords({ ...first, amount_cents: line.amount_cents }) : `transaction ${line.transaction_id}`;
    return line.status === "match" ? `In the books as ${what}` : `Already in the books as ${what}`;
  }
  return STATUS[line.status]?.means ?? "";
}

// "Corner Grocer, 2026-03-01, -23.45": which line a button acts on, for screen readers.
const about = (line) => `${line.payee || line.memo || "the line"}, ${line.booked_on}, ${formatCents(line.amount_cents)}`;

// The line's account choice: its chosen account alone at first, the whole list when
// the browser is idle or the person reaches for it (lazy-choice.js).
function picker(line) {
  const chosen = chosenAccount(line, state.choices, state.offered);
  const select = lazyChoice(state.picker, chosen === null ? "" : String(chosen), { "aria-label": `Account for ${about(line)}` });
  fillWhenIdle([select], state.picker);
  select.addEventListener("change", () => state.choices.set(line.line_id, Number(select.value) || 0));
  // The bulk button's count follows the pickers.
  select.addEventListener("change", renderHead);
  return select;
}

function lineActions(line, node) {
  if (line.status === "new") {
    const select = picker(line);
    const post = h("button", { type: "button", class: "act-post", "aria-label": `Post ${about(line)}` }, "Post");
    post.addEventListener("click", () => {
      const accountId = chosenAccount(line, state.choices, state.offered);
      if (accountId === null) return tell(message(), "Choose the account this line goes to.", "error", select);
      busy(post, async () => {
        if (await act([posting(line, accountId)])) focusAfter(line.line_id);
      });
    });
    const ignore = ignoreButton(line);
    const parts = [select, describe(line), post, ignore];
    const who = (line.payee ?? "").trim() || (line.memo ?? "").trim(); // a rule needs words to match
    if (who) {
      const always = h("button", { type: "button", class: "secondary act-rule", "aria-label": `Always file this payee here: ${who}` }, "Always file this payee here");
      always.addEventListener("click", () => openRule(line, node, select));
      parts.push(always);
    }
    return h("div", { class: "do" }, parts);
  }
  if (line.status === "match") {
    const match = h("button", { type: "button", class: "act-match", "aria-label": `Match ${about(line)}` }, "Match");
    match.addEventListener("click", () => busy(match, async () => {
      if (await act([{ line_id: line.line_id, action: "match" }])) focusAfter(line.line_id);
    }));
    return h("div", { class: "do" }, match, ignoreButton(line));
  }
  if (UNDOABLE.has(line.status)) {
    const undo = h("button", { type: "button", class: "secondary act-undo", "aria-label": `Undo ${about(line)}` }, "Undo");
    undo.addEventListener("click", () => busy(undo, async () => {
      await act([{ line_id: line.line_id, action: "undo" }]);
    }));
    return h("div", { class: "do" }, undo);
  }
  return null;
}

// The line's post action, with its typed description (none typed: the server's
// default, the payee and the memo joined).
function posting(line, accountId) {
  const description = (state.descriptions.get(line.line_id) ?? "").trim();
  return { line_id: line.line_id, action: "post", account_id: accountId, ...(description ? { description } : {}) };
}

function describe(line) {
  const input = h("input", {
    type: "text", class: "line-desc", maxlength: "2000", placeholder: defaultDescription(line),
    "aria-label": `Description for ${about(line)} (empty: ${defaultDescription(line)})`,
  });
  input.value = state.descriptions.get(line.line_id) ?? "";
  input.addEventListener("input", () => state.descriptions.set(line.line_id, input.value));
  return input;
}

// A waiting line's candidates (entries in the books it might be), each with a
// one-tap Match; a line found in the books lists the others it might be instead.
function candidatesNode(line) {
  if (line.status !== "new" && line.status !== "match") return null;
  const list = (line.candidates ?? []).filter((c) => line.status === "new" || c.transaction_id !== line.transaction_id);
  if (list.length === 0) return null;
  const said = line.status === "new" ? "Might already be in the books as:" : "Or another entry:";
  return h("div", { class: "maybe" },
    h("p", { class: "maybe-head" }, said),
    h("ul", {}, list.map((c) => {
      const match = h("button", { type: "button", class: "secondary act-match-candidate", "data-transaction": c.transaction_id, "aria-label": `Match ${about(line)} to ${c.description}, ${c.occurred_on}` }, "Match");
      match.addEventListener("click", () => busy(match, async () => {
        if (await act([{ line_id: line.line_id, action: "match", transaction_id: c.transaction_id }])) focusAfter(line.line_id);
      }));
      return h("li", { "data-transaction": c.transaction_id }, h("span", { class: "cand" }, ...keepDates(candidateLine(c))), match);
    })));
}

function ignoreButton(line) {
  const ignore = h("button", { type: "button", class: "secondary act-ignore", "aria-label": `Ignore ${about(line)}` }, "Ignore");
  ignore.addEventListener("click", () => busy(ignore, async () => {
    if (await act([{ line_id: line.line_id, action: "ignore" }])) focusAfter(line.line_id);
  }));
  return ignore;
}

function lineNode(line) {
  const node = h("li", { class: `line s-${line.status}`, "data-line": line.line_id, "data-status": line.status });
  const payee = line.payee || line.memo || "(no payee)";
  node.append(
    h("span", { class: "when" }, line.booked_on),
    h("span", { class: "who" },
      h("span", { class: "payee" }, payee),
      line.payee && line.memo ? h("span", { class: "memo" }, line.memo) : null),
    h("span", { class: `amt num${line.amount_cents > 0 ? " amount-pos" : ""}` }, formatCents(line.amount_cents)),
    h("span", { class: "state" },
      h("span", { class: `badge status status-${line.status}` }, statusWord(line.status)), " ",
      h("span", { class: "detail" }, ...keepDates(statusDetail(line)))),
  );
  const maybe = candidatesNode(line);
  if (maybe) node.append(maybe);
  const actions = lineActions(line, node);
  if (actions) node.append(actions);
  return node;
}

// ---- "always file this payee here" ----

function openRule(line, node, select) {
  tell(message(), "");
  node.querySelector(".rule-panel")?.remove();
  const accountId = chosenAccount(line, state.choices, state.offered);
  if (accountId === null) return tell(message(), "Choose the account first: the rule files this payee there.", "error", select);
  const counter = state.accounts.byId.get(accountId);
  // Payee conditions for a line with a payee, memo contains for one with a memo.
  const kinds = Object.entries(TEXT_CONDITIONS)
    .filter(([key]) => ((key === "memo_contains" ? line.memo : line.payee) ?? "").trim());
  const kind = h("select", { class: "rule-kind", "aria-label": "What the rule looks at" },
    kinds.map(([key, said]) => h("option", { value: key }, said[0].toUpperCase() + said.slice(1))));
  const text = h("input", { type: "text", class: "rule-text", "aria-label": "The words it looks for", maxlength: "200" });
  const fill = () => {
    text.value = ((kind.value === "memo_contains" ? line.memo : line.payee) ?? "").trim().replace(/\s+/g, " ");
  };
  fill();
  kind.addEventListener("change", fill);
  const min = h("input", { type: "text", class: "rule-min", inputmode: "decimal", "aria-label": "Amount from (optional)", placeholder: "from (optional)" });
  const max = h("input", { type: "text", class: "rule-max", inputmode: "decimal", "aria-label": "Amount to (optional)", placeholder: "to (optional)" });
  const said = h("p", { class: "rule-said" });
  const found = h("p", { class: "hint", role: "status" }, "Looking for the lines it would file…");
  const list = h("ul", { class: "preview" });
  const again = h("button", { type: "button", class: "secondary act-preview" }, "Preview");
  const make = h("button", { type: "button", class: "act-make-rule", disabled: true }, "Make the rule");
  const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
  const panel = h("div", { class: "rule-panel" },
    h("div", { class: "rule-fields" }, kind, text,
      h("span", { class: "rule-range" }, "Amount ", min, " to ", max)),
    said, found, list, h("div", { class: "actions" }, again, make, cancel));
  node.append(panel);
  let body = null;
  let asked = 0; // the newest preview asked: an older answer arriving late is dropped
  const amount = (input) => {
    try {
      return { cents: parseSigned(input.value) };
    } catch (err) {
      if (err instanceof CsvError) return { error: err.message };
      throw err;
    }
  };
  const preview = async () => {
    make.disabled = true;
    const low = amount(min);
    const high = amount(max);
    if (low.error || high.error) {
      found.textContent = "";
      return tell(message(), low.error ?? high.error, "error", low.error ? min : max);
    }
    body = ruleFromLine(line, state.accountId, counter, { kind: kind.value, text: text.value, min_cents: low.cents, max_cents: high.cents });
    if (!body) {
      found.textContent = "";
      return tell(message(), "Give the rule something to match: words or an amount.", "error", text);
    }
    said.textContent = `From now on, lines in ${account().name} whose ${conditionWords(body.conditions)} are suggested for ${counter.name}.`;
    found.textContent = "Looking for the lines it would file…";
    list.replaceChildren();
    const mine = ++asked;
    try {
      const answer = await orSignIn(api("/rules/preview", { method: "POST", json: body }));
      if (mine !== asked) return;
      const matches = answer.matches ?? [];
      found.textContent = previewWords(matches, state.statement.id);
      list.replaceChildren(...matches.slice(0, 10).map((m) => h("li", {}, ...keepDates(`${m.booked_on} · ${m.payee ?? ""} · ${formatCents(m.amount_cents)}`))));
      if (matches.length > 10) list.append(h("li", { class: "hint" }, `and ${matches.length - 10} more`));
      make.disabled = false;
      make.focus();
    } catch (err) {
      if (mine !== asked) return;
      found.textContent = "";
      tell(message(), err.message);
    }
  };
  for (const field of [kind, text, min, max]) field.addEventListener("change", () => preview());
  again.addEventListener("click", () => busy(again, preview));
  cancel.addEventListener("click", () => panel.remove());
  make.addEventListener("click", () => busy(make, async () => {
    try {
      const rule = await orSignIn(api("/rules", { method: "POST", json: body }));
      state.rules.set(rule.id, rule);
      panel.remove();
      await reloadStatement();
      const now = state.statement.lines.filter((l) => l.status === "new" && l.suggestion?.rule_id === rule.id).length;
      tell(message(), `Made the rule “${rule.name}”: ${now} waiting line${now === 1 ? "" : "s"} of this statement now suggested for ${counter.name}.`, "info");
    } catch (err) {
      tell(message(), err.message);
    }
  }));
  preview();
}

// ---- the statement ----

function renderHead() {
  const s = state.statement;
  if (!s) return;
  const bulk = bulkActions(s.lines, state.choices, state.offered);
  const post = byId("post-suggested");
  post.textContent = bulkWords(bulk);
  post.disabled = bulk.lines.length === 0;
  byId("statement-counts").textContent = summaryWords(s.lines);
  const ready = reconcileState(s, reconciliationOf(state.reconciliations, state.accountId, s, account().kind));
  const rec = byId("reconcile");
  const at = s.closing_balance_on && s.closing_balance_cents !== null
    ? ` to ${s.closing_balance_on} at ${formatCents(s.closing_balance_cents)}` : "";
  rec.replaceChildren(...keepDates(`${ready.done ? "Reconciled" : "Reconcile"}${at}`));
  rec.disabled = !ready.ready;
  byId("statement-section").dataset.reconciled = String(ready.done);
  byId("reconcile-hint").replaceChildren(...keepDates(ready.reason));
}

function renderFacts() {
  const s = state.statement;
  const period = periodWords(s);
  byId("statement-title").replaceChildren(...keepDates(`${account().name}: statement${period ? ` ${period}` : ""}`));
  const facts = [
    `${FORMATS[s.format] ?? s.format} file`,
    s.bank_account ? `account ${s.bank_account}` : null,
    s.currency,
    s.opening_balance_cents !== null ? `opening balance ${formatCents(s.opening_balance_cents)}` : null,
    s.closing_balance_cents !== null ? `closing balance ${formatCents(s.closing_balance_cents)}${s.closing_balance_on ? ` on ${s.closing_balance_on}` : ""}` : "no closing balance",
  ].filter(Boolean);
  byId("statement-facts").replaceChildren(...keepDates(`${facts.join(", ")}.`));
  // The statement's opening balance against the account's last reconciliation before it.
  const check = openingCheck(s, state.reconciliations, state.accountId, account().kind);
  const opening = byId("statement-opening");
  opening.hidden = !check;
  opening.replaceChildren(...keepDates(check ? check.words : ""));
  opening.dataset.agree = check ? String(check.agree) : "";
  opening.className = `facts opening${check?.agree === false ? " message error" : ""}`;
}

function renderLines() {
  const s = state.statement;
  const shown = s.lines.slice(0, state.shown);
  state.nodes = new Map();
  const fragment = document.createDocumentFragment();
  for (const line of shown) {
    const node = lineNode(line);
    state.nodes.set(line.line_id, node);
    fragment.append(node);
  }
  byId("lines").replaceChildren(fragment);
  renderMore();
}

function renderMore() {
  const total = state.statement.lines.length;
  const n = Math.min(state.shown, total);
  byId("lines-more").hidden = n >= total;
  byId("lines-more").textContent = `Show ${Math.min(LINES_PAGE, total - n)} more lines`;
  byId("lines-count").textContent = n >= total ? "" : `Showing lines 1 to ${n} of ${total}.`;
}

function renderStatement() {
  byId("statement-section").hidden = !state.statement;
  if (!state.statement) return;
  state.shown = LINES_PAGE;
  renderFacts();
  renderHead();
  renderLines();
}

// A newer answer for the same statement: redraw only the lines that changed.
function apply(statement) {
  const before = state.statement;
  state.statement = statement;
  if (!before || before.id !== statement.id) return renderStatement();
  for (const id of changedLines(before.lines, statement.lines)) {
    const old = state.nodes.get(id);
    if (!old) continue;
    const node = lineNode(statement.lines.find((l) => l.line_id === id));
    old.replaceWith(node);
    state.nodes.set(id, node);
  }
  renderHead();
}

// After one line is done, the keyboard goes on to the next line waiting (or Reconcile).
function focusAfter(lineId) {
  const next = state.statement.lines.find((l) => l.line_id > lineId && (l.status === "new" || l.status === "match"));
  const control = next && state.nodes.get(next.line_id)?.querySelector("select, button");
  if (control) control.focus();
  else if (!byId("reconcile").disabled) byId("reconcile").focus();
}

async function act(lines) {
  tell(message(), "");
  try {
    apply(await orSignIn(api(`/statements/${state.statement.id}/lines`, { method: "POST", json: { lines } })));
    await loadCandidates();
    return true;
  } catch (err) {
    tell(message(), err.message);
    return false;
  }
}

async function reloadStatement() {
  apply(await orSignIn(api(`/statements/${state.statement.id}`)));
}

// The transactions the found and already-imported lines stand for, from the
// account's register around their dates, so each shows its date, description, amount.
async function loadCandidates() {
  const s = state.statement;
  const window_ = candidateWindow(s.lines.filter((l) => !state.candidates.has(l.transaction_id)));
  if (!window_) return;
  let cursor = null;
  for (let page = 0; page < 10; page += 1) {
    const answer = await orSignIn(api(`/accounts/${state.accountId}/register`, {
      query: { ...window_, limit: "500", ...(cursor ? { cursor } : {}) },
    }));
    for (const item of answer.items) if (!state.candidates.has(item.transaction_id)) state.candidates.set(item.transaction_id, item);
    cursor = answer.next_cursor;
    if (!cursor) break;
  }
  if (state.statement !== s) return;
  for (const line of s.lines) {
    if ((line.status !== "match" && line.status !== "duplicate") || !state.nodes.has(line.line_id)) continue;
    const detail = state.nodes.get(line.line_id).querySelector(".detail");
    if (detail) detail.replaceChildren(...keepDates(statusDetail(line)));
  }
}

async function openStatement(id) {
  tell(message(), "");
  state.choices = new Map();
  state.descriptions = new Map();
  state.statement = null;
  apply(await orSignIn(asked(`statement ${id}`, () => api(`/statements/${id}`))));
  remember();
  renderList();
  await loadCandidates();
}

// The head's two buttons are enabled by renderHead, after busy() has let go of them.
byId("post-suggested").addEventListener("click", async (event) => {
  const bulk = bulkActions(state.statement.lines, state.choices, state.offered);
  if (bulk.lines.length === 0) return;
  // A description typed on a line goes with its posting.
  const lines = bulk.lines.map((one) => (one.action === "post" ? posting({ line_id: one.line_id }, one.account_id) : one));
  await busy(event.currentTarget, async () => {
    if (await act(lines)) {
      const held = heldWords(heldLines(state.statement.lines));
      tell(message(), `${doneWords(bulk.post, bulk.match)}${held ? ` ${held}` : ""}`, "info");
    }
  });
  renderHead();
});

byId("reconcile").addEventListener("click", async (event) => {
  const s = state.statement;
  tell(message(), "");
  await busy(event.currentTarget, async () => {
    try {
      const done = await orSignIn(api(`/statements/${s.id}/reconcile`, { method: "POST" }));
      state.reconciliations.unshift({ action: "entries.reconciled", object: { account_id: state.accountId, statement_date: done.statement_date, closing_balance_cents: done.closing_balance_cents } });
      const n = Array.isArray(done.entries) ? done.entries.length : done.entries;
      renderList();
      // A card's statement shows its debt negative; the register counts it positive (the answer's figure).
      const books = done.closing_balance_cents !== s.closing_balance_cents ? ` on the statement, a balance of ${formatCents(done.closing_balance_cents)} in the books` : "";
      tell(message(), `Reconciled ${account().name} to ${s.closing_balance_on} at ${formatCents(s.closing_balance_cents)}${books}${Number.isSafeInteger(n) ? `: ${n} entr${n === 1 ? "y" : "ies"} now locked` : ""}.`, "info");
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && Number.isSafeInteger(err.body?.difference_cents)) {
        tell(message(), differenceWords(s, account().name, err.body.difference_cents));
        const closing = registerClosing(s, account().kind);
        message().append(" ", h("a", { href: `/register?account=${state.accountId}&statement_date=${s.closing_balance_on}&closing=${closing}`, class: "account-link" }, "Open the register"));
      } else {
        tell(message(), err.message);
      }
    }
  });
  renderHead();
});

byId("lines-more").addEventListener("click", () => {
  const s = state.statement;
  const from = state.shown;
  state.shown += LINES_PAGE;
  const fragment = document.createDocumentFragment();
  for (const line of s.lines.slice(from, state.shown)) {
    const node = lineNode(line);
    state.nodes.set(line.line_id, node);
    fragment.append(node);
  }
  byId("lines").append(fragment);
  renderMore();
});

// ---- reading a file ----

async function upload(file, bankAccount = "") {
  const out = byId("upload-message");
  tell(out, "");
  const form = new FormData();
  form.append("file", file, file.name || "statement");
  if (bankAccount) form.append("bank_account", bankAccount);
  try {
    const statement = await orSignIn(api(`/accounts/${state.accountId}/statements`, { method: "POST", form }));
    state.pendingFile = null;
    byId("bank-account-label").hidden = true;
    byId("upload-again").hidden = true;
    byId("stmt-file").value = "";
    state.choices = new Map();
    state.descriptions = new Map();
    state.statement = null;
    apply(statement);
    remember();
    await loadList();
    tell(out, `Read ${statement.lines.length} line${statement.lines.length === 1 ? "" : "s"} from ${file.name || "the file"}.`, "info");
    await loadCandidates();
  } catch (err) {
    if (err instanceof ApiError && err.status === 400 && Array.isArray(err.body?.bank_accounts)) {
      state.pendingFile = file;
      byId("bank-account").replaceChildren(...err.body.bank_accounts.map((id) => h("option", { value: id }, id)));
      byId("bank-account-label").hidden = false;
      byId("upload-again").hidden = false;
      tell(out, `This file holds statements of ${err.body.bank_accounts.length} bank accounts: choose the one that is ${account().name}.`, "error", byId("bank-account"));
    } else {
      tell(out, err.message, "error", byId("stmt-file"));
    }
  }
}

byId("stmt-file").setAttribute("accept", ACCEPT);
byId("stmt-file").addEventListener("change", (event) => {
  const file = event.currentTarget.files?.[0];
  if (file) busy(event.currentTarget, () => upload(file));
});
byId("upload-form").addEventListener("submit", (event) => {
  event.preventDefault();
  if (state.pendingFile) busy(byId("upload-again"), () => upload(state.pendingFile, byId("bank-account").value));
});

// ---- the account's statements ----

function statementItem(s) {
  const period = periodWords(s) || `read ${formatWhen(s.created_at)}`;
  const open = h("a", { href: `/statements?account=${state.accountId}&statement=${s.id}`, class: "account-link open-statement", "aria-current": state.statement?.id === s.id ? "true" : false }, period);
  open.addEventListener("click", (event) => {
    event.preventDefault();
    openStatement(s.id).catch((err) => tell(byId("list-message"), err.message));
  });
  const done = reconciliationOf(state.reconciliations, state.accountId, s, account().kind);
  const facts = [FORMATS[s.format] ?? s.format, s.bank_account, s.closing_balance_cents !== null ? `closing ${formatCents(s.closing_balance_cents)}` : null, done ? "reconciled" : null].filter(Boolean).join(", ");
  const download = h("button", { type: "button", class: "secondary" }, "Download the file");
  download.addEventListener("click", () => busy(download, async () => {
    try {
      const response = await orSignIn(api(`/statements/${s.id}/file`, { raw: true }));
      saveBlob(await response.blob(), `statement-${s.id}.${s.format === "camt.053" ? "xml" : s.format === "ofx" ? "ofx" : "sta"}`);
    } catch (err) {
      tell(byId("list-message"), err.message);
    }
  }));
  const actions = h("span", { class: "row-actions" });
  const remove = h("button", { type: "button", class: "secondary" }, "Delete");
  const restore = () => actions.replaceChildren(download, remove);
  remove.addEventListener("click", () => {
    const yes = h("button", { type: "button", class: "danger" }, "Delete it");
    const keep = h("button", { type: "button", class: "secondary" }, "Keep");
    keep.addEventListener("click", restore);
    yes.addEventListener("click", () => busy(yes, async () => {
      try {
        await orSignIn(api(`/statements/${s.id}`, { method: "DELETE" }));
        if (state.statement?.id === s.id) {
          state.statement = null;
          renderStatement();
          remember();
        }
        await loadList();
        tell(byId("list-message"), "Deleted the statement; what it posted or matched stays in the books.", "info");
      } catch (err) {
        tell(byId("list-message"), err.message);
      }
    }));
    actions.replaceChildren(h("span", { class: "confirm" }, "Delete this statement? Its postings stay."), yes, keep);
  });
  restore();
  return h("li", { class: "wrap", "data-statement": s.id },
    h("span", { class: "name" }, open), h("span", { class: "hint" }, facts), actions);
}

function renderList() {
  byId("list-title").textContent = `Statements of ${account().name}`;
  byId("statements").replaceChildren(...state.statements.map(statementItem));
  if (state.statements.length === 0) byId("statements").append(h("li", { class: "hint" }, "None read yet."));
  byId("list-section").hidden = false;
}

// Answers asked for before they are needed, so that they travel together: the account's
// reconciliations, its statement list and the statement to open (the longest answer)
// leave with the page's first requests. Each is taken once, by the code that would
// have asked; a failure is told there, as if it had asked then.
const earlyAnswers = new Map();
function early(key, request) {
  if (earlyAnswers.has(key)) return;
  const answer = request();
  answer.catch(() => {}); // told when taken (or never: not taken)
  earlyAnswers.set(key, answer);
}
function asked(key, request) {
  const answer = earlyAnswers.get(key);
  earlyAnswers.delete(key);
  return answer ?? request();
}

// The account's reconciliations, from the trail (the API has no list of them; the
// register reads its last one the same way): which of its statements are done.
async function loadReconciliations(accountId) {
  const found = [];
  let cursor = null;
  for (let n = 0; n < AUDIT_PAGES; n += 1) {
    const ask = () => api("/audit", { query: { action: "entries.reconciled", limit: 500, cursor } });
    const page = await orSignIn(cursor ? ask() : asked("reconciliations", ask));
    found.push(...page.items.filter((e) => e.object?.account_id === accountId));
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  if (state.accountId === accountId) state.reconciliations = found;
}

function statementList(id) {
  return orSignIn(asked(`list ${id}`, () => api("/statements", { query: { account_id: id } })));
}

async function loadList() {
  state.statements = await statementList(state.accountId);
  renderList();
}

// ---- the account ----

async function openAccount(id, statementId = null) {
  state.accountId = id;
  state.statement = null;
  state.candidates = new Map();
  state.reconciliations = [];
  tell(byId("message"), "");
  const others = state.accounts.open.filter((a) => a.id !== id);
  state.offered = new Set(others.map((a) => a.id));
  state.picker = h("select", { class: "line-account" }, accountOptions(others, { style: state.style, empty: "Choose an account…" }));
  byId("stmt-title").textContent = `Bank statements: ${account().name}`;
  const back = byId("stmt-register");
  back.href = `/register?account=${id}`;
  back.textContent = `${account().name}'s register`;
  back.hidden = false;
  byId("upload-section").hidden = false;
  renderStatement();
  remember();
  if (statementId) early(`statement ${statementId}`, () => api(`/statements/${statementId}`));
  // The list says which statements are reconciled: drawn once both are in.
  [, state.statements] = await Promise.all([loadReconciliations(id), statementList(id)]);
  renderList();
  const wanted = statementId ?? state.statements[0]?.id ?? null;
  if (wanted) await openStatement(wanted);
}

byId("stmt-account").addEventListener("change", (event) => {
  const id = Number(event.currentTarget.value);
  if (id) openAccount(id).catch((err) => tell(byId("message"), err.message));
});

async function main() {
  const params = new URLSearchParams(window.location.search);
  const named = Number(params.get("account")) || null;
  // The account's reads go out in the first round too (taken by openAccount).
  early("reconciliations", () => api("/audit", { query: { action: "entries.reconciled", limit: 500 } }));
  if (named) {
    early(`list ${named}`, () => api("/statements", { query: { account_id: named } }));
    const statementId = Number(params.get("statement")) || null;
    if (statementId) early(`statement ${statementId}`, () => api(`/statements/${statementId}`));
  }
  const { style, accounts, more: [rules, schedules] } = await startPage("statements", {
    more: [
      orSignIn(api("/rules")),
      // The schedules name the expected items a line meets; without them a line says less.
      orSignIn(api("/schedules")).catch(() => []),
    ],
  });
  clearMessagesOnAction(document.querySelector("main"));
  state.style = style;
  state.accounts = accounts;
  state.rules = new Map(rules.map((rule) => [rule.id, rule]));
  state.schedules = new Map((Array.isArray(schedules) ? schedules : []).map((one) => [one.id, one]));
  const banks = accounts.open.filter((a) => a.kind === "asset" || a.kind === "liability");
  // The account in the address, else the one the page had open last time (its menu
  // link has none), else the only bank or card account.
  let wanted = named;
  if (!wanted) {
    try {
      const last = Number(window.localStorage.getItem(LAST_ACCOUNT));
      if (banks.some((a) => a.id === last)) wanted = last;
    } catch {
      // storage off: no memory
    }
  }
  if (!wanted && banks.length === 1) wanted = banks[0].id;
  byId("stmt-account").replaceChildren(...accountOptions(banks, { kinds: ["asset", "liability"], chosen: wanted, style: state.style }));
  if (wanted && banks.some((a) => a.id === wanted)) {
    try {
      await openAccount(wanted, Number(params.get("statement")) || null);
    } catch (err) {
      tell(byId("message"), err instanceof ApiError && err.status === 404 ? "That statement does not exist (any more)." : err.message);
    }
  } else if (banks.length === 0) {
    tell(byId("message"), "No bank or card account yet: create one (an asset or a liability) under Accounts first.", "info");
  }
  earlyAnswers.clear(); // any not taken (another account opened) would be stale later
  document.body.dataset.ready = "true";
}

main().catch((err) => tell(byId("message"), err.message));
