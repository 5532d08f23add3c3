// History: the audit trail (GET /audit), newest first, a page at a time, filtered by
// the kind of change (?action=...), or the history of one transaction
// (?transaction=<id>: its posting, its corrections and the transactions they
// replaced, its deletion). Each event says what changed, who changed it, how (via)
// and with which application (the OAuth client's name, and for a third-party client
// its id or its document's host: clients.js), as the API recorded it. A
// correction (a posting with `replaces`, then the original's deletion) reads as one
// line: "60.98 → 61.00". Each action's phrase, and each entry's amount signed as the
// reports sign it, come from history-words.js.
import { api, orSignIn, requireSession } from "../api.js";
import { clientLabel } from "../clients.js";
import { busy, byId, clearMessagesOnAction, h, keepDates, say } from "../dom.js";
import { formatSize } from "../documents.js";
import { ACTION_WORDS, actionWords, reportCents } from "../history-words.js";
import { formatCents } from "../money.js";
import { renderNav } from "../nav.js";

const VIA = {
  web: "in the web app",
  api: "with a token",
  mcp: "by an assistant (MCP)",
  import: "by an import",
  cli: "on the command line",
};

const params = new URLSearchParams(window.location.search);
const limit = params.get("limit") || "50";
const state = { cursor: null, accounts: new Map(), deletions: new Map() };
const SCAN_PAGES = 20; // one transaction's history: at most 20 pages of 500 changes read
const message = byId("history-message");

function account(id) {
  const name = state.accounts.get(id)?.name;
  return name ? name : `account ${id}`;
}

// "2026-03-04 14:05", local time: the pages' one date format, with the time of day.
function formatWhen(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso ?? "";
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

const moved = (tx) => tx.entries.filter((e) => e.amount_cents > 0).reduce((s, e) => s + e.amount_cents, 0);
const changed = (before, after) => (before === after ? after : `${before} → ${after}`);

function entryList(tx) {
  return h("ul", { class: "event-entries" },
    ...tx.entries.map((e) => h("li", {},
      `${account(e.account_id)}: ${formatCents(reportCents(e.amount_cents, state.accounts.get(e.account_id)?.kind))}`)));
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

// "transaction 41 (2026-11-03 · Hall hire)". The API has no GET /transactions/{id}:
// the date and description come from the trail itself (the transaction's own events),
// read after the page is drawn (nameTransactions), at most NAME_PAGES pages of 500.
const NAME_PAGES = 4;
const txNames = new Map(); // transaction id → "2026-11-03 · Hall hire"
function transactionName(txId) {
  const known = txNames.get(txId);
  return h("span", { class: "tx-name", "data-tx-name": txId }, known ? `transaction ${txId} (${known})` : `transaction ${txId}`);
}

function learnNames(events) {
  for (const event of events) {
    const tx = event.object?.transaction;
    if (tx && !txNames.has(tx.id)) txNames.set(tx.id, `${tx.occurred_on} · ${tx.description}`);
  }
}

async function nameTransactions(list) {
  const spans = () => [...list.querySelectorAll("[data-tx-name]")];
  const missing = () => spans().filter((el) => !txNames.has(Number(el.getAttribute("data-tx-name"))));
  let cursor = null;
  for (let n = 0; n < NAME_PAGES && missing().length; n += 1) {
    const page = await orSignIn(api("/audit", { query: { limit: 500, cursor } }));
    learnNames(page.items);
    cursor = page.next_cursor;
    if (!cursor) break;
  }
  for (const el of spans()) {
    const id = Number(el.getAttribute("data-tx-name"));
    if (txNames.has(id)) el.textContent = `transaction ${id} (${txNames.get(id)})`;
  }
}

// What a receipt event changed: the file, and the transaction(s) it belongs to.
function documentSummary(event) {
  const d = event.object.document;
  const file = `${d.filename} (${formatSize(d.size)})`;
  const where = event.action === "document.moved" && event.object.previous_transaction_id
    ? ["moved from ", transactionName(event.object.previous_transaction_id), " to ", transactionName(d.transaction_id)]
    : [event.action === "document.deleted" ? "removed from " : "attached to ", transactionName(d.transaction_id)];
  return [
    h("span", { class: "event-what" }, `${file} · `, ...where),
    h("span", { class: "event-link hint" }, historyLink(d.transaction_id)),
  ];
}

function historyLink(txId) {
  return h("a", { class: "tx-history", href: `/history?transaction=${txId}` }, "its history");
}

// One line saying what the event changed, from its object (shapes: docs/ledger.md).
// `original`: for a correction, the deleted transaction it replaced (when known).
function summary(event, original = null) {
  const o = event.object || {};
  if (o.transaction) {
    const tx = o.transaction;
    let what = `${tx.occurred_on} · ${tx.description} · ${formatCents(moved(tx))}`;
    if (original) {
      what = [
        changed(original.occurred_on, tx.occurred_on),
        changed(original.description, tx.description),
        changed(formatCents(moved(original)), formatCents(moved(tx))),
      ].join(" · ");
    } else if (o.replaces) {
      what += ` · replaces transaction ${o.replaces}`;
    }
    return [
      h("span", { class: "event-what" }, keepDates(what)),
      entryList(tx),
      h("span", { class: "event-link hint" }, `Transaction ${tx.id} · `, historyLink(tx.id)),
      // An adjustment (docs/ledger.md, "Corrections of reconciled transactions").
      o.adjusts ? h("span", { class: "event-adjusts hint" }, "Adjusts ",
        h("a", { href: `/history?transaction=${o.adjusts}` }, `transaction ${o.adjusts}`)) : null,
    ];
  }
  if (o.document) return documentSummary(event);
  if (o.line) { // a bank statement's line: what the bank said, and where it went
    const l = o.line;
    const said = [l.booked_on, l.payee, formatCents(l.amount_cents), l.bank_ref ? `ref ${l.bank_ref}` : null]
      .filter(Boolean).join(" · ");
    return [
      h("span", { class: "event-what" }, `Statement ${l.statement_id}, line ${l.line_id}: ${said}`),
      l.transaction_id ? h("span", { class: "event-link hint" }, "Now ", transactionName(l.transaction_id), " · ",
        historyLink(l.transaction_id)) : null,
      // An undo: what the line had been, and the transaction it let go of.
      o.undone ? h("span", { class: "event-undone hint" }, `Was ${o.undone.status}`,
        o.undone.transaction_id ? [" as ", transactionName(o.undone.transaction_id), " · ",
          historyLink(o.undone.transaction_id)] : null) : null,
    ];
  }
  if (o.statement) {
    const st = o.statement;
    return h("span", { class: "event-what" },
      `Statement ${st.id} of ${account(st.account_id)} · ${st.format} · ${plural(st.lines, "line", "lines")}`);
  }
  if (o.rule) return h("span", { class: "event-what" }, `${o.rule.name} → ${account(o.rule.counter_account_id)}`);
  if (o.account) {
    const a = o.account;
    const before = o.previous_name ? ` (was ${o.previous_name})` : "";
    return h("span", { class: "event-what" }, `${a.name}${before} · ${a.kind}${a.archived ? " · archived" : ""}`);
  }
  if (o.budget) {
    const b = o.budget;
    return h("span", { class: "event-what" },
      `${b.name} · from ${b.starts_on} · ${plural(b.lines.length, "line", "lines")}${b.approved_by_email ? ` · approved by ${b.approved_by_email}` : ""}`);
  }
  if (o.settings) return h("span", { class: "event-what" }, `Book style: ${o.settings.book_style}`);
  if (event.action === "books.currency_set") {
    return h("span", { class: "event-what" },
      o.previous ? `Currency ${o.previous} → ${o.currency}` : `Currency ${o.currency}`);
  }
  if ("locked_through" in o) {
    return h("span", { class: "event-what" },
      o.locked_through ? `Locked through ${o.locked_through}` : "Lock removed");
  }
  if (o.entry_ids) {
    const what = event.action === "entries.reconciled"
      ? `statement ${o.statement_date}, closing balance ${formatCents(o.closing_balance_cents)}`
      : (o.cleared ? "marked cleared" : "marked not cleared");
    return h("span", { class: "event-what" },
      `${account(o.account_id)}: ${plural(o.entry_ids.length, "entry", "entries")} ${what}`);
  }
  return null;
}

function row(event, original = null) {
  const who = [
    event.user_email || "no signed-in person",
    VIA[event.via] || event.via,
    event.client_name ? `using ${clientLabel(event.client_id, event.client_name)}` : null,
  ].filter(Boolean).join(" · ");
  const corrected = Boolean(event.object?.replaces);
  const seqs = original ? `#${event.seq} and #${original.seq}` : `#${event.seq}`;
  return h("li", { "data-seq": event.seq, "data-action": event.action, class: corrected ? "correction" : "" },
    h("span", { class: "event-head" },
      h("span", { class: "event-action" }, corrected ? "Transaction corrected"
        : event.object?.adjusts ? "Adjustment recorded" : actionWords(event.action)),
      h("span", { class: "hint" }, keepDates(`${seqs} · ${formatWhen(event.at)}`))),
    h("span", { class: "event-who hint" }, who),
    summary(event, original?.object?.transaction ?? null));
}

// Append events (newest first) to the list. A correction's posting is drawn together
// with the deletion of the transaction it replaced (the next newer event, perhaps on
// the page before): one line instead of two.
function appendEvents(list, events) {
  learnNames(events);
  for (const event of events) {
    const o = event.object || {};
    if (event.action === "transaction.deleted" && o.transaction) {
      const li = row(event);
      state.deletions.set(o.transaction.id, { event, li });
      list.append(li);
      continue;
    }
    const deletion = o.replaces ? state.deletions.get(o.replaces) : null;
    if (deletion) {
      state.deletions.delete(o.replaces);
      deletion.li.replaceWith(row(event, deletion.event));
      continue;
    }
    list.append(row(event));
  }
}

async function loadPage(reset) {
  say(message, "");
  if (reset) {
    state.cursor = null;
    state.deletions = new Map();
  }
  const action = byId("history-action").value;
  try {
    const page = await orSignIn(api("/audit", { query: { limit, action, cursor: state.cursor } }));
    const list = byId("events");
    if (reset) list.replaceChildren();
    appendEvents(list, page.items);
    await nameTransactions(list);
    state.cursor = page.next_cursor;
    byId("history-more").hidden = !page.next_cursor;
    byId("history-empty").hidden = list.children.length > 0;
  } catch (err) {
    say(message, err.message);
  }
}

async function start() {
  // The accounts and the trail's head are asked for with the session, in one round.
  const first = Promise.all([orSignIn(api("/accounts")), orSignIn(api("/audit/head"))]);
  first.catch(() => {}); // said below, once the page is drawn
  const me = await requireSession();
  renderNav("history", me.email);
  clearMessagesOnAction(document.querySelector("main"));
  const select = byId("history-action");
  select.append(...Object.entries(ACTION_WORDS).map(([value, label]) => h("option", { value }, label)));
  try {
    const [accounts, head] = await first;
    state.accounts = new Map(accounts.map((a) => [a.id, a]));
    byId("history-head").textContent = head.seq
      ? `Newest change #${head.seq}, fingerprint ${head.hash.slice(0, 16)}…`
      : "";
  } catch (err) {
    say(message, err.message);
  }
  byId("history-filter").addEventListener("submit", (event) => {
    event.preventDefault();
    // The filter is part of the address, so a reload or a shared link shows the same.
    const url = new URL(window.location.href);
    url.searchParams.delete("transaction");
    if (select.value) url.searchParams.set("action", select.value);
    else url.searchParams.delete("action");
    window.history.replaceState(null, "", url);
    byId("history-one").hidden = true;
    loadPage(true);
  });
  byId("history-more").addEventListener("click", () => busy(byId("history-more"), () => loadPage(false)));
  const wanted = params.get("action");
  if (wanted && Object.hasOwn(ACTION_WORDS, wanted)) select.value = wanted;
  const one = Number(params.get("transaction"));
  if (Number.isSafeInteger(one) && one > 0) await loadTransaction(one);
  else await loadPage(true);
  document.body.dataset.ready = "true";
}

// The history of one transaction: read the trail newest first, following each
// correction back to the transaction it replaced, until the first posting of the
// chain (at most SCAN_PAGES pages), with the adjustments made to any of them.
async function loadTransaction(txId) {
  byId("history-one").hidden = false;
  byId("history-one-title").textContent = `The history of transaction ${txId}`;
  const wanted = new Set([txId]);
  const chain = new Set([txId]); // every id the transaction has had
  const adjustments = []; // postings with `adjusts`, kept if they adjust one of `chain`
  const found = [];
  let cursor = null;
  let pages = 0;
  let complete = false;
  try {
    do {
      const page = await orSignIn(api("/audit", { query: { limit: 500, cursor } }));
      for (const event of page.items) {
        const tx = event.object?.transaction;
        if (tx && event.object.adjusts && !wanted.has(tx.id)) adjustments.push(event);
        if (!tx || !wanted.has(tx.id)) continue;
        found.push(event);
        if (event.action !== "transaction.deleted") {
          wanted.delete(tx.id); // its posting: the oldest event of this transaction
          if (event.object.replaces) wanted.add(event.object.replaces);
          if (event.object.replaces) chain.add(event.object.replaces);
        }
      }
      complete = wanted.size === 0 || !page.next_cursor;
      cursor = page.next_cursor;
      pages += 1;
    } while (!complete && pages < SCAN_PAGES);
  } catch (err) {
    say(message, err.message);
  }
  found.push(...adjustments.filter((event) => chain.has(event.object.adjusts)));
  found.sort((a, b) => b.seq - a.seq);
  const list = byId("events");
  list.replaceChildren();
  state.deletions = new Map();
  appendEvents(list, found);
  await nameTransactions(list).catch((err) => say(message, err.message));
  byId("history-more").hidden = true;
  byId("history-empty").hidden = found.length > 0;
  if (!complete) say(message, `Only the newest ${pages * 500} changes were searched.`, "info");
}

start();
