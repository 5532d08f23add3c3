// The rules that file bank statement lines (docs/statements.md, "Rules"; docs/web.md,
// "Rules"): every rule listed with what it matches in words, made, changed (every
// condition the API takes), previewed (POST /rules/preview: the waiting lines it
// would file now) and deleted. The words are static/js/bankfile.js's.
import { api, orSignIn } from "../api.js";
import { busy, byId, clearMessagesOnAction, h, keepDates, say } from "../dom.js";
import { accountOptions } from "../ledger.js";
import { centsToInput, formatCents } from "../money.js";
import { ruleFormBody, ruleWords } from "../bankfile.js";
import { startPage } from "../start.js";

const state = { style: "personal", accounts: null, rules: [], editing: null };
const FIELDS = {
  name: "rule-name", payee_is: "rule-payee-is", payee_contains: "rule-payee-contains",
  memo_contains: "rule-memo-contains", min: "rule-min", max: "rule-max",
  account_id: "rule-account", counter_account_id: "rule-counter",
  description: "rule-description", priority: "rule-priority",
};

function values() {
  const out = Object.fromEntries(Object.entries(FIELDS).map(([key, id]) => [key, byId(id).value]));
  return { ...out, active: byId("rule-active").checked };
}

// The form's body, or null after saying what to fix.
function formBody() {
  const built = ruleFormBody(values());
  if (built.error) {
    say(byId("message"), built.error, "error", byId(FIELDS[built.field]));
    return null;
  }
  return built.body;
}

// "3 waiting lines: 2026-03-04 · Corner Grocer · -23.45, ..." under the form or a rule.
function showPreview(answer, head, list) {
  const matches = answer.matches ?? [];
  const n = matches.length;
  head.hidden = false;
  head.textContent = n === 0
    ? "It would file no waiting line now; it applies to the lines of later statements."
    : `It would file ${n} waiting line${n === 1 ? "" : "s"} now${answer.truncated ? " (of the newest 5,000 waiting; older ones may be more)" : ""}:`;
  list.replaceChildren(...matches.slice(0, 20).map((m) => h("li", {}, ...keepDates(
    `${m.booked_on} · ${m.payee ?? "(no payee)"} · ${formatCents(m.amount_cents)} (statement ${m.statement_id}, line ${m.line_id})`))));
  if (n > 20) list.append(h("li", { class: "hint" }, `and ${n - 20} more`));
}

function fillForm(rule) {
  const c = rule?.conditions ?? {};
  byId("rule-name").value = rule?.name ?? "";
  byId("rule-payee-is").value = c.payee_is ?? "";
  byId("rule-payee-contains").value = c.payee_contains ?? "";
  byId("rule-memo-contains").value = c.memo_contains ?? "";
  byId("rule-min").value = c.min_cents === undefined || c.min_cents === null ? "" : signedInput(c.min_cents);
  byId("rule-max").value = c.max_cents === undefined || c.max_cents === null ? "" : signedInput(c.max_cents);
  byId("rule-account").value = rule?.account_id ? String(rule.account_id) : "";
  byId("rule-counter").value = rule?.counter_account_id ? String(rule.counter_account_id) : "";
  byId("rule-description").value = rule?.description ?? "";
  byId("rule-priority").value = String(rule?.priority ?? 100);
  byId("rule-active").checked = rule ? Boolean(rule.active) : true;
  byId("form-preview").hidden = true;
  byId("form-preview-list").replaceChildren();
}

const signedInput = (cents) => (cents < 0 ? `-${centsToInput(-cents)}` : centsToInput(cents));

function edit(rule) {
  state.editing = rule;
  fillForm(rule);
  byId("rule-form-title").textContent = rule ? `Change the rule “${rule.name}”` : "Make a rule";
  byId("rule-save").textContent = rule ? "Save the rule" : "Make the rule";
  byId("rule-cancel").hidden = !rule;
  if (rule) {
    byId("rule-section").scrollIntoView();
    byId("rule-name").focus();
  }
}

function ruleItem(rule) {
  const head = h("p", { class: "hint", role: "status", hidden: true });
  const list = h("ul", { class: "preview" });
  const change = h("button", { type: "button", class: "secondary act-edit", "aria-label": `Change the rule ${rule.name}` }, "Edit");
  change.addEventListener("click", () => edit(rule));
  const preview = h("button", { type: "button", class: "secondary act-preview", "aria-label": `Preview the rule ${rule.name}` }, "Preview");
  preview.addEventListener("click", () => busy(preview, async () => {
    try {
      const { name, counter_account_id, account_id, conditions, priority, description, active } = rule;
      showPreview(await orSignIn(api("/rules/preview", { method: "POST", json: { name, counter_account_id, account_id, conditions, priority, description, active } })), head, list);
    } catch (err) {
      say(byId("list-message"), err.message);
    }
  }));
  const actions = h("span", { class: "row-actions" });
  const remove = h("button", { type: "button", class: "secondary act-delete", "aria-label": `Delete the rule ${rule.name}` }, "Delete");
  const restore = () => actions.replaceChildren(change, preview, remove);
  remove.addEventListener("click", () => {
    const yes = h("button", { type: "button", class: "danger" }, "Delete it");
    const keep = h("button", { type: "button", class: "secondary" }, "Keep");
    keep.addEventListener("click", restore);
    yes.addEventListener("click", () => busy(yes, async () => {
      try {
        await orSignIn(api(`/rules/${rule.id}`, { method: "DELETE" }));
        if (state.editing?.id === rule.id) edit(null);
        await loadRules();
        say(byId("list-message"), `Deleted the rule “${rule.name}”; the lines it filed stay where they are.`, "info");
      } catch (err) {
        say(byId("list-message"), err.message);
      }
    }));
    actions.replaceChildren(h("span", { class: "confirm" }, "Delete this rule?"), yes, keep);
  });
  restore();
  return h("li", { class: "wrap rule", "data-rule": rule.id },
    h("span", { class: "name" }, rule.name),
    h("span", { class: "said" }, ruleWords(rule, state.accounts.byId)),
    actions, head, list);
}

function renderRules() {
  const n = state.rules.length;
  byId("rules-title").textContent = `Rules (${n})`;
  byId("rules").replaceChildren(...state.rules.map(ruleItem));
  if (n === 0) byId("rules").append(h("li", { class: "hint" }, "No rule yet: make one above, or from a line on the Statements page (Always file this payee here)."));
}

async function loadRules() {
  state.rules = await orSignIn(api("/rules"));
  renderRules();
}

byId("rule-preview").addEventListener("click", (event) => {
  const body = formBody();
  if (!body) return;
  busy(event.currentTarget, async () => {
    try {
      showPreview(await orSignIn(api("/rules/preview", { method: "POST", json: body })), byId("form-preview"), byId("form-preview-list"));
    } catch (err) {
      say(byId("message"), err.message);
    }
  });
});

byId("rule-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const body = formBody();
  if (!body) return;
  const editing = state.editing;
  busy(byId("rule-save"), async () => {
    try {
      const rule = await orSignIn(api(editing ? `/rules/${editing.id}` : "/rules", { method: editing ? "PUT" : "POST", json: body }));
      edit(null);
      await loadRules();
      say(byId("message"), `${editing ? "Saved" : "Made"} the rule “${rule.name}”: waiting lines take it at once.`, "info");
    } catch (err) {
      say(byId("message"), err.message);
    }
  });
});

byId("rule-cancel").addEventListener("click", () => edit(null));

async function main() {
  const start = await startPage("rules");
  clearMessagesOnAction(document.querySelector("main"));
  state.style = start.style;
  state.accounts = start.accounts;
  const open = state.accounts.open;
  byId("rule-account").replaceChildren(...accountOptions(open, { kinds: ["asset", "liability"], style: state.style, empty: "Any bank or card account" }));
  byId("rule-counter").replaceChildren(...accountOptions(open, { style: state.style, empty: "Choose an account…" }));
  await loadRules();
  const wanted = Number(new URLSearchParams(window.location.search).get("rule"));
  const rule = state.rules.find((r) => r.id === wanted);
  if (rule) edit(rule);
  document.body.dataset.ready = "true";
}

main().catch((err) => say(byId("message"), err.message));
