// History: the audit trail (GET /audit), newest first, a page at a time, filtered by
// the kind of change. Each event says what changed, who changed it, how (via) and
// with which application (the OAuth client's name), as the API recorded it.
import { api, orSignIn, requireSession } from "../api.js";
import { busy, byId, formatWhen, h, say } from "../dom.js";
import { formatCents } from "../money.js";
import { renderNav } from "../nav.js";

const ACTIONS = {
  "transaction.posted": "Transaction recorded",
  "transaction.imported": "Transaction imported",
  "transaction.deleted": "Transaction deleted",
  "account.created": "Account created",
  "account.renamed": "Account renamed",
  "account.archived": "Account archived",
  "account.unarchived": "Account restored",
  "entries.cleared": "Entries cleared",
  "entries.reconciled": "Account reconciled",
  "books.locked": "Lock date set",
  "settings.changed": "Settings changed",
  "budget.created": "Budget created",
  "budget.changed": "Budget changed",
  "budget.approved": "Budget approved",
  "budget.deleted": "Budget deleted",
};
const VIA = {
  web: "in the web app",
  api: "with a token",
  mcp: "by an assistant (MCP)",
  import: "by an import",
  cli: "on the command line",
};

const params = new URLSearchParams(window.location.search);
const limit = params.get("limit") || "50";
const state = { cursor: null, accounts: new Map() };
const message = byId("history-message");

function account(id) {
  const name = state.accounts.get(id);
  return name ? name : `account ${id}`;
}

// One line saying what the event changed, from its object (shapes: docs/ledger.md).
function summary(event) {
  const o = event.object || {};
  if (o.transaction) {
    const tx = o.transaction;
    const moved = tx.entries.filter((e) => e.amount_cents > 0).reduce((s, e) => s + e.amount_cents, 0);
    return [
      h("span", { class: "event-what" }, `${tx.occurred_on} · ${tx.description} · ${formatCents(moved)}`),
      h("ul", { class: "event-entries" },
        ...tx.entries.map((e) => h("li", {}, `${account(e.account_id)}: ${formatCents(e.amount_cents)}`))),
    ];
  }
  if (o.account) {
    const a = o.account;
    const before = o.previous_name ? ` (was ${o.previous_name})` : "";
    return h("span", { class: "event-what" }, `${a.name}${before} · ${a.kind}${a.archived ? " · archived" : ""}`);
  }
  if (o.budget) {
    const b = o.budget;
    return h("span", { class: "event-what" },
      `${b.name} · from ${b.starts_on} · ${b.lines.length} lines${b.approved_by_email ? ` · approved by ${b.approved_by_email}` : ""}`);
  }
  if (o.settings) return h("span", { class: "event-what" }, `Book style: ${o.settings.book_style}`);
  if ("locked_through" in o) {
    return h("span", { class: "event-what" },
      o.locked_through ? `Locked through ${o.locked_through}` : "Lock removed");
  }
  if (o.entry_ids) {
    const what = event.action === "entries.reconciled"
      ? `statement ${o.statement_date}, closing balance ${formatCents(o.closing_balance_cents)}`
      : (o.cleared ? "marked cleared" : "marked not cleared");
    return h("span", { class: "event-what" },
      `${account(o.account_id)}: ${o.entry_ids.length} entries ${what}`);
  }
  return null;
}

function row(event) {
  const who = [
    event.user_email || "no signed-in person",
    VIA[event.via] || event.via,
    event.client_name ? `using ${event.client_name}` : null,
  ].filter(Boolean).join(" · ");
  return h("li", { "data-seq": event.seq, "data-action": event.action },
    h("span", { class: "event-head" },
      h("span", { class: "event-action" }, ACTIONS[event.action] || event.action),
      h("span", { class: "hint" }, `#${event.seq} · ${formatWhen(event.at)}`)),
    h("span", { class: "event-who hint" }, who),
    summary(event));
}

async function loadPage(reset) {
  say(message, "");
  if (reset) state.cursor = null;
  const action = byId("history-action").value;
  try {
    const page = await orSignIn(api("/audit", { query: { limit, action, cursor: state.cursor } }));
    const list = byId("events");
    if (reset) list.replaceChildren();
    list.append(...page.items.map(row));
    state.cursor = page.next_cursor;
    byId("history-more").hidden = !page.next_cursor;
    byId("history-empty").hidden = list.children.length > 0;
  } catch (err) {
    say(message, err.message);
  }
}

async function start() {
  const me = await requireSession();
  renderNav("history", me.email);
  const select = byId("history-action");
  select.append(...Object.entries(ACTIONS).map(([value, label]) => h("option", { value }, label)));
  try {
    const accounts = await orSignIn(api("/accounts"));
    state.accounts = new Map(accounts.map((a) => [a.id, a.name]));
    const head = await orSignIn(api("/audit/head"));
    byId("history-head").textContent = head.seq
      ? `Newest change #${head.seq}, fingerprint ${head.hash.slice(0, 16)}…`
      : "";
  } catch (err) {
    say(message, err.message);
  }
  byId("history-filter").addEventListener("submit", (event) => {
    event.preventDefault();
    loadPage(true);
  });
  byId("history-more").addEventListener("click", () => busy(byId("history-more"), () => loadPage(false)));
  await loadPage(true);
  document.body.dataset.ready = "true";
}

start();
