// Budgets: the list, a new budget (empty, from last year's actuals, or a copy), and
// the twelve-month grid of one budget (/budgets?budget=ID) with an annual column
// that fills the months by the server's exact split; approve, revise, delete.
// Figures are sign-adjusted as reports show them (docs/ledger.md "Budgets").
import { api, orSignIn } from "../api.js";
import { busy, byId, h, say } from "../dom.js";
import { budgetMonths, centsToCell, gridTotals, parseBudgetCents, splitAnnual, sum } from "../budget-math.js";
import { formatCents } from "../money.js";
import { words } from "../vocab.js";
import { startPage } from "../start.js";

const state = { style: "personal", accounts: null, budgets: [], budget: null, rows: [] };
const editorMessage = byId("editor-message");

const status = (b) => (b.approved_at ? `approved ${b.approved_at.slice(0, 10)}` : "draft");

function renderList() {
  const target = byId("budget-list");
  if (!state.budgets.length) {
    target.replaceChildren(h("p", { class: "hint", id: "no-budgets" }, "No budgets yet: create the first one below."));
    return;
  }
  target.replaceChildren(h("table", { class: "stack", id: "budget-table" },
    h("thead", {}, h("tr", {}, h("th", {}, "Name"), h("th", {}, "Months"), h("th", {}, "Status"))),
    h("tbody", {}, state.budgets.map((b) => h("tr", { "data-budget": b.id },
      h("td", { "data-label": "Name" }, h("a", { href: `/budgets?budget=${b.id}`, class: "account-link" }, b.name)),
      h("td", { "data-label": "Months" }, `${b.starts_on} to ${b.ends_on}`),
      h("td", { "data-label": "Status" }, h("span", {}, status(b),
        b.approved_by_email ? h("span", { class: "hint" }, ` by ${b.approved_by_email}`) : null)))))));
}

function renderBasedOn() {
  byId("budget-based-on").replaceChildren(
    h("option", { value: "" }, "Nothing (an empty plan)"),
    h("option", { value: "actuals" }, "Last year's actuals"),
    ...state.budgets.map((b) => h("option", { value: String(b.id) }, `A copy of ${b.name}`)),
  );
}

async function loadBudgets() {
  showBudgets(await orSignIn(api("/budgets")));
}

function showBudgets(budgets) {
  state.budgets = budgets;
  renderList();
  renderBasedOn();
}

// --- the grid ---------------------------------------------------------------------------

function cellInput(label, value, readonly, cls = "") {
  return h("input", { inputmode: "decimal", "aria-label": label, value, readonly, class: cls, autocomplete: "off" });
}

// One row per income and expense account (those the budget has, plus every open one).
function gridRows(budget) {
  const lines = new Map(budget.lines.map((l) => [l.account_id, l.months]));
  return state.accounts.list
    .filter((a) => (a.kind === "income" || a.kind === "expense") && (!a.archived || lines.has(a.id)))
    .map((a) => ({ account: a, months: lines.get(a.id) ?? Array(12).fill(0), had: lines.has(a.id) }));
}

// An approved budget's row: plain figures, nothing that looks editable.
function rowFigures(row) {
  const figure = (cents) => h("td", { class: "figure" }, formatCents(cents));
  return h("tr", { "data-account": row.account.id },
    h("th", { scope: "row", class: "account" }, row.account.name),
    h("td", { class: "figure year" }, formatCents(sum(row.months))),
    row.months.map(figure));
}

function rowCells(row, months, readonly) {
  if (readonly) return rowFigures(row);
  const name = row.account.name;
  row.inputs = months.map((m, i) => cellInput(`${name}, ${m.label}`, centsToCell(row.months[i]), readonly));
  row.annual = cellInput(`${name}, whole year`, centsToCell(sum(row.months)), readonly, "annual");
  const refreshAnnual = () => {
    try {
      row.annual.value = centsToCell(sum(row.inputs.map((input) => parseBudgetCents(input.value))));
      refreshTotals();
    } catch {
      row.annual.value = "";
    }
  };
  row.inputs.forEach((input) => input.addEventListener("change", refreshAnnual));
  row.annual.addEventListener("change", () => {
    say(editorMessage, "");
    try {
      const months = splitAnnual(parseBudgetCents(row.annual.value));
      row.inputs.forEach((input, i) => { input.value = centsToCell(months[i]); });
      row.annual.value = centsToCell(sum(months));
      refreshTotals();
    } catch (err) {
      say(editorMessage, `${name}: ${err.message}`, "error", row.annual);
    }
  });
  return h("tr", { "data-account": row.account.id },
    h("th", { scope: "row", class: "account" }, name),
    h("td", { class: "year" }, row.annual),
    row.inputs.map((input) => h("td", {}, input)));
}

// A row's months as typed (unreadable cells count 0 until saved, which refuses them).
function rowMonths(row) {
  if (!row.inputs) return row.months;
  return row.inputs.map((input) => {
    try {
      return parseBudgetCents(input.value);
    } catch {
      return 0;
    }
  });
}

// The totals rows: each kind per month and for the year, and the planned surplus.
function refreshTotals() {
  const totals = gridTotals(state.rows.map((r) => ({ kind: r.account.kind, months: rowMonths(r) })));
  for (const [key, figures] of Object.entries(totals)) {
    const row = byId(`total-${key}`);
    if (!row) continue;
    row.querySelectorAll("td").forEach((cell, i) => { cell.textContent = formatCents(figures[(i + 12) % 13]); });
  }
}

// A totals row: the label, then the year and the twelve months (filled by refreshTotals).
const totalsRow = (key, label, cls = "total") => h("tr", { class: cls, id: `total-${key}` },
  h("th", { scope: "row", class: "account" }, label),
  Array.from({ length: 13 }, (_, i) => h("td", { class: i === 0 ? "figure year" : "figure" })));

function renderGrid(budget) {
  const w = words(state.style);
  const months = budgetMonths(budget.starts_on);
  const readonly = Boolean(budget.approved_at);
  state.rows = gridRows(budget);
  const group = (kind, label) => {
    const rows = state.rows.filter((r) => r.account.kind === kind);
    if (!rows.length) return [];
    return [
      h("tr", { class: "group" }, h("th", { class: "account", colspan: 1 }, label), h("td", { colspan: 13 })),
      ...rows.map((row) => rowCells(row, months, readonly)),
      totalsRow(kind, `Total ${label.toLowerCase()}`),
    ];
  };
  const table = h("table", { class: `budget-grid${readonly ? " approved" : ""}`, id: "budget-grid" },
    h("thead", {}, h("tr", {}, h("th", { class: "account" }, "Account"), h("th", { scope: "col", class: "year" }, "Year"),
      months.map((m) => h("th", { scope: "col" }, m.label)))),
    h("tbody", {}, group("income", w.income), group("expense", w.expenses),
      totalsRow("surplus", state.style === "club" ? "Planned surplus (deficit)" : "Planned left over", "surplus")));
  byId("budget-grid-box").replaceChildren(state.rows.length ? table
    : h("p", { class: "hint" }, "There are no income or expense accounts yet: create them on the Accounts page."));
  refreshTotals();
}

function resetApprove() {
  const button = byId("budget-approve");
  delete button.dataset.confirm;
  button.textContent = "Approve";
  byId("budget-approve-keep").hidden = true;
}

function renderEditor(budget) {
  state.budget = budget;
  resetApprove();
  const approved = Boolean(budget.approved_at);
  byId("budget-editor").hidden = false;
  byId("editor-title").textContent = `${budget.name}: ${budget.starts_on} to ${budget.ends_on}`;
  byId("editor-status").textContent = approved
    ? `Approved ${budget.approved_at.slice(0, 10)} by ${budget.approved_by_email}` : "Draft";
  byId("editor-name").value = budget.name;
  byId("editor-name-label").hidden = approved;
  byId("editor-hint").hidden = approved;
  byId("budget-save").hidden = approved;
  byId("budget-approve").hidden = approved;
  byId("budget-delete").hidden = approved;
  byId("budget-revise").hidden = !approved;
  renderGrid(budget);
}

// The grid → PUT's lines: every row with a figure, and every row the budget had.
function collectLines() {
  const lines = [];
  for (const row of state.rows) {
    const months = row.inputs.map((input, i) => {
      try {
        return parseBudgetCents(input.value);
      } catch (err) {
        const label = input.getAttribute("aria-label");
        say(editorMessage, `${label}: ${err.message}`, "error", input);
        throw Object.assign(err, { shown: true });
      }
    });
    if (row.had || months.some((m) => m !== 0)) lines.push({ account_id: row.account.id, months });
  }
  return lines;
}

async function save() {
  say(editorMessage, "");
  say(byId("new-budget-message"), "");
  let lines;
  try {
    lines = collectLines();
  } catch (err) {
    if (!err.shown) say(editorMessage, err.message);
    return;
  }
  const name = byId("editor-name").value.trim();
  if (!name) return say(editorMessage, "Give the budget a name.", "error", byId("editor-name"));
  try {
    const saved = await orSignIn(api(`/budgets/${state.budget.id}`, { method: "PUT", json: { name, lines } }));
    renderEditor(saved);
    await loadBudgets();
    say(editorMessage, `Saved “${saved.name}”.`, "info");
  } catch (err) {
    say(editorMessage, err.message);
  }
}

async function approve(button) {
  say(editorMessage, "");
  say(byId("new-budget-message"), "");
  // Approving freezes the budget for good: asked once more, in place.
  if (button.dataset.confirm !== "yes") {
    button.dataset.confirm = "yes";
    button.textContent = "Approve: it can never change again. Sure?";
    byId("budget-approve-keep").hidden = false;
    return;
  }
  try {
    const approved = await orSignIn(api(`/budgets/${state.budget.id}/approve`, { method: "POST" }));
    renderEditor(approved);
    await loadBudgets();
    say(editorMessage, `Approved “${approved.name}”: it is now frozen. Revise it to plan changes.`, "info");
  } catch (err) {
    say(editorMessage, err.message);
  }
}

async function revise() {
  say(editorMessage, "");
  const source = state.budget;
  for (let n = 1; n <= 20; n += 1) {
    const name = n === 1 ? `${source.name} (revised)` : `${source.name} (revision ${n})`;
    try {
      const made = await orSignIn(api("/budgets", {
        method: "POST", json: { name, starts_on: source.starts_on, based_on: source.id },
      }));
      window.history.pushState(null, "", `/budgets?budget=${made.id}`);
      renderEditor(made);
      await loadBudgets();
      return say(editorMessage, `“${made.name}” is a draft copy of “${source.name}”: change it, then approve it.`, "info");
    } catch (err) {
      if (!/already exists/.test(err.body?.error ?? "")) return say(editorMessage, err.message);
    }
  }
  return say(editorMessage, "Give one of the revisions another name first.");
}

async function remove(button) {
  if (button.dataset.confirm !== "yes") {
    button.dataset.confirm = "yes";
    button.textContent = "Delete: are you sure?";
    return;
  }
  try {
    await orSignIn(api(`/budgets/${state.budget.id}`, { method: "DELETE" }));
    window.location.assign("/budgets");
  } catch (err) {
    say(editorMessage, err.message);
  }
}

byId("budget-save").addEventListener("click", (e) => busy(e.currentTarget, save));
byId("budget-approve").addEventListener("click", (e) => busy(e.currentTarget, () => approve(byId("budget-approve"))));
byId("budget-approve-keep").addEventListener("click", () => resetApprove());
byId("budget-revise").addEventListener("click", (e) => busy(e.currentTarget, revise));
byId("budget-delete").addEventListener("click", (e) => busy(e.currentTarget, () => remove(byId("budget-delete"))));

byId("new-budget").addEventListener("submit", (event) => {
  event.preventDefault();
  const out = byId("new-budget-message");
  say(out, "");
  const name = byId("budget-name").value.trim();
  const month = byId("budget-start").value; // YYYY-MM
  if (!name) return say(out, "Give the budget a name.", "error", byId("budget-name"));
  if (!/^\d{4}-\d{2}$/.test(month)) return say(out, "Choose the first month.", "error", byId("budget-start"));
  const choice = byId("budget-based-on").value;
  const json = { name, starts_on: `${month}-01` };
  if (choice === "actuals") json.based_on = "actuals";
  else if (choice) json.based_on = Number(choice);
  busy(byId("budget-create"), async () => {
    try {
      const made = await orSignIn(api("/budgets", { method: "POST", json }));
      window.history.pushState(null, "", `/budgets?budget=${made.id}`);
      renderEditor(made);
      await loadBudgets();
      byId("budget-name").value = "";
      say(out, `Created “${made.name}”.`, "info");
      byId("budget-editor").scrollIntoView({ block: "start" });
    } catch (err) {
      say(out, err.message, "error", /starts_on/.test(err.message) ? byId("budget-start") : null);
    }
  });
});

async function main() {
  const chosen = new URLSearchParams(window.location.search).get("budget");
  // The budget in the address is asked for in the same round as the rest; a refusal
  // is said once the page is drawn.
  const opening = chosen && /^\d+$/.test(chosen)
    ? orSignIn(api(`/budgets/${chosen}`)).then((budget) => ({ budget, err: null }), (err) => ({ budget: null, err }))
    : null;
  const start = await startPage("budgets", { more: [orSignIn(api("/budgets"))] });
  state.style = start.style;
  state.accounts = start.accounts;
  showBudgets(start.more[0]);
  // A new budget: this January when no budget covers this year yet, else next January.
  const year = new Date().getFullYear();
  const covered = state.budgets.some((b) => b.starts_on <= `${year}-12-31` && b.ends_on >= `${year}-01-01`);
  byId("budget-start").value = `${covered ? year + 1 : year}-01`;
  const opened = await opening;
  if (opened?.err) say(byId("message"), opened.err.message);
  else if (opened) renderEditor(opened.budget);
  document.body.dataset.ready = "true";
}

main().catch((err) => say(byId("message"), err.message));
