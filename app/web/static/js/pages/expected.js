// Expected (docs/web.md "Expected"; docs/schedules.md): what the schedules expect.
// Overdue and due first (who has not paid yet), then what is coming, each with post,
// skip and match in one tap; reopen for what came, was posted or skipped. A schedule
// form in words (static/js/schedule-words.js builds the rule; the API's
// /schedules/preview gives the next five dates), dues for many members at once, and
// an account's forecast drawn (static/js/forecast-chart.js) with its table.
import { api, ApiError, orSignIn } from "../api.js";
import { busy, byId, clearMessagesOnAction, h, keepDates, say, today } from "../dom.js";
import { forecastChart, forecastRows } from "../forecast-chart.js";
import { accountOptions } from "../ledger.js";
import { AmountError, centsToInput, formatCents, parseDollars } from "../money.js";
import {
  addDays, choiceOf, EVERY_MAX, memberLines, MONTHS, NTH, ordinal, ruleOf, ruleWords, WEEKDAYS, WEEKEND_WORDS, wordsOf,
} from "../schedule-words.js";
import { startPage } from "../start.js";

const SEEN = ["asset", "liability"]; // where money is seen: the bank, the cash box, a card
const STATUS_WORDS = {
  overdue: "overdue", due: "due", upcoming: "coming", met: "came", posted: "posted", skipped: "skipped",
};
const DONE_SHOWN = 50; // the newest met, posted and skipped items listed

const state = {
  style: "personal", accounts: null, schedules: [], occurrences: [],
  editing: null, // the schedule being changed (null: a new one)
  keptRule: null, // an edited schedule's rule the form cannot make, kept unless changed
  previewTimer: 0, previewAsked: "",
};

const accountName = (id) => state.accounts.byId.get(id)?.name ?? `account ${id}`;
const scheduleOf = (id) => state.schedules.find((s) => s.id === id);

// ---- the occurrences --------------------------------------------------------------

// "Dues: Ann Smith, due 2026-11-24, 50.00": which item a button acts on, for screen readers.
const about = (o) => `${o.name}, due ${o.due_on}, ${formatCents(o.amount_cents)}`;

async function act(o, body, button, out) {
  await busy(button, async () => {
    try {
      await orSignIn(api(`/schedules/${o.schedule_id}/occurrences/${o.occurs_on}`, { method: "POST", json: body }));
      await refresh();
      const done = { post: "Posted", skip: "Skipped", match: "Matched", reopen: "Reopened" }[body.action];
      say(byId("message"), `${done}: ${o.name}, due ${o.due_on}.`, "info");
    } catch (err) {
      say(out, err.message);
    }
  });
}

// The entries of the schedule's account near the due date (its window either side),
// each one tap to match. The register's own API: GET /transactions?account_id=.
async function openMatch(o, li, button) {
  const open = li.querySelector(".match-picker");
  if (open) {
    open.remove();
    button.setAttribute("aria-expanded", "false");
    return;
  }
  const schedule = scheduleOf(o.schedule_id);
  const days = schedule ? schedule.window_days : 10;
  const picker = h("div", { class: "match-picker" }, h("p", { class: "hint" }, "Looking for entries…"));
  li.append(picker);
  button.setAttribute("aria-expanded", "true");
  try {
    const found = await orSignIn(api("/transactions", {
      query: { account_id: o.account_id, from: addDays(o.due_on, -days), to: addDays(o.due_on, days) },
    }));
    const out = h("p", { role: "alert", hidden: true });
    const choices = found.map((tx) => {
      const entry = tx.entries.find((e) => e.account_id === o.account_id);
      const cents = entry ? entry.amount_cents : 0;
      const pick = h("button", { type: "button", class: "secondary match-choice", "data-transaction": tx.id,
        "aria-label": `Match ${o.name} with ${tx.description}, ${tx.occurred_on}, ${formatCents(cents)}` },
      h("span", { class: "date" }, tx.occurred_on), " ", h("span", { class: "what" }, tx.description), " ",
      h("span", { class: "num" }, formatCents(cents)));
      pick.addEventListener("click", () => act(o, { action: "match", transaction_id: tx.id }, pick, out));
      return h("li", {}, pick);
    });
    picker.replaceChildren(
      h("p", { class: "hint" }, found.length
        ? `Which entry in ${accountName(o.account_id)} paid it? Those from ${addDays(o.due_on, -days)} to ${addDays(o.due_on, days)}:`
        : `No entries in ${accountName(o.account_id)} from ${addDays(o.due_on, -days)} to ${addDays(o.due_on, days)}.`),
      h("ul", { class: "choices" }, choices), out);
  } catch (err) {
    picker.replaceChildren(h("p", { class: "message error" }, err.message));
  }
}

function occurrenceRow(o) {
  const li = h("li", { class: `wrap occurrence ${o.status}`, "data-schedule": o.schedule_id, "data-occurs": o.occurs_on, "data-status": o.status });
  const out = h("p", { role: "alert", hidden: true });
  const button = (label, cls, onClick) => {
    const b = h("button", { type: "button", class: cls, "aria-label": `${label}: ${about(o)}` }, label);
    b.addEventListener("click", () => onClick(b));
    return b;
  };
  const actions = [];
  if (["overdue", "due", "upcoming"].includes(o.status)) {
    actions.push(
      button("Post", "post", (b) => act(o, { action: "post" }, b, out)),
      button("Skip", "secondary skip", (b) => act(o, { action: "skip" }, b, out)),
      button("Match", "secondary match", (b) => openMatch(o, li, b)),
    );
  } else {
    actions.push(button("Reopen", "secondary reopen", (b) => act(o, { action: "reopen" }, b, out)));
  }
  const counter = accountName(o.counter_account_id);
  li.append(
    h("span", { class: "name" }, o.name),
    h("span", { class: "when" }, "due ", h("span", { class: "date" }, o.due_on)),
    h("span", { class: `num amount${o.amount_cents > 0 ? " amount-pos" : ""}` }, formatCents(o.amount_cents)),
    h("span", { class: `badge status-${o.status}` }, STATUS_WORDS[o.status] ?? o.status),
    h("span", { class: "hint about" }, o.amount_cents > 0 ? `${counter} into ${accountName(o.account_id)}` : `${accountName(o.account_id)} to ${counter}`),
    h("span", { class: "row-actions" }, actions),
    out,
  );
  return li;
}

function renderList(id, emptyId, items) {
  byId(id).replaceChildren(...items.map(occurrenceRow));
  byId(emptyId).hidden = items.length > 0;
}

function renderOccurrences() {
  const rank = { overdue: 0, due: 1 };
  const waiting = state.occurrences.filter((o) => o.status in rank)
    .map((o, i) => [o, i]).sort(([a, i], [b, j]) => rank[a.status] - rank[b.status] || i - j).map(([o]) => o);
  renderList("due-list", "due-empty", waiting);
  renderList("coming-list", "coming-empty", state.occurrences.filter((o) => o.status === "upcoming"));
  const done = state.occurrences.filter((o) => ["met", "posted", "skipped"].includes(o.status)).reverse().slice(0, DONE_SHOWN);
  renderList("done-list", "done-empty", done);
}

// ---- the schedules ----------------------------------------------------------------

function scheduleRow(s) {
  const out = h("p", { role: "alert", hidden: true });
  const edit = h("button", { type: "button", class: "secondary", "aria-label": `Change ${s.name}` }, "Change");
  edit.addEventListener("click", () => startEdit(s));
  const remove = h("button", { type: "button", class: "secondary", "aria-label": `Delete ${s.name}` }, "Delete");
  remove.addEventListener("click", () => busy(remove, async () => {
    if (remove.dataset.confirm !== "yes") {
      remove.dataset.confirm = "yes";
      remove.textContent = "Delete: sure?";
      return;
    }
    try {
      await orSignIn(api(`/schedules/${s.id}`, { method: "DELETE" }));
      await refresh();
      say(byId("message"), `Deleted ${s.name}; what it posted or what met it stays in the books.`, "info");
    } catch (err) {
      say(out, err.message);
    }
  }));
  const facts = [
    `${formatCents(s.amount_cents)} ${ruleWords(s.rrule)}`,
    s.mode === "post" ? "posted on its date" : null,
    s.active ? null : "off",
  ].filter(Boolean).join(", ");
  return h("li", { class: "wrap", "data-schedule": s.id },
    h("span", { class: "name" }, s.name),
    h("span", {}, facts),
    h("span", { class: "hint" }, s.next_due_on ? ["next ", h("span", { class: "date" }, s.next_due_on)] : "nothing more due"),
    h("span", { class: "row-actions" }, edit, remove),
    out);
}

function renderSchedules() {
  byId("schedule-list").replaceChildren(...state.schedules.map(scheduleRow));
  byId("schedules-empty").hidden = state.schedules.length > 0;
}

async function refresh() {
  const [schedules, occurrences] = await Promise.all([
    orSignIn(api("/schedules")), orSignIn(api("/schedules/occurrences")),
  ]);
  state.schedules = schedules;
  state.occurrences = occurrences.items;
  if (!byId("forecast-account").value) pickForecastAccount();
  renderSchedules();
  renderOccurrences();
  await drawForecast();
}

// ---- the form ---------------------------------------------------------------------

function fillChoices() {
  const everyWords = ["", "", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
  byId("sched-every").replaceChildren(...Array.from({ length: EVERY_MAX }, (_, i) =>
    h("option", { value: i + 1 }, i === 0 ? "every one" : `every ${everyWords[i + 1]}`)));
  byId("sched-day").replaceChildren(...Array.from({ length: 31 }, (_, i) => h("option", { value: i + 1 }, ordinal(i + 1))),
    h("option", { value: -1 }, "the last day"));
  byId("sched-month").replaceChildren(...MONTHS.map((m, i) => h("option", { value: i + 1 }, m)));
  byId("sched-nth").replaceChildren(...NTH.map(([n, word]) => h("option", { value: n }, word)));
  byId("sched-weekday").replaceChildren(...WEEKDAYS.map(([code, name]) => h("option", { value: code }, name)));
  byId("sched-weekend").replaceChildren(...Object.entries(WEEKEND_WORDS).map(([value, words]) => h("option", { value }, words)));
}

function fillAccounts() {
  const open = state.accounts.open;
  const chosen = (id) => Number(byId(id).value) || null;
  byId("sched-account").replaceChildren(...accountOptions(open, { kinds: SEEN, chosen: chosen("sched-account"), style: state.style }));
  byId("sched-counter").replaceChildren(...accountOptions(open, { chosen: chosen("sched-counter"), style: state.style }));
  byId("forecast-account").replaceChildren(...accountOptions(open, { kinds: SEEN, style: state.style, empty: "Choose an account…" }));
}

function readChoice() {
  const repeat = byId("sched-repeat").value;
  return {
    repeat,
    every: Number(byId("sched-every").value),
    day: Number(byId("sched-day").value),
    month: Number(byId("sched-month").value),
    nth: Number(byId("sched-nth").value),
    weekday: byId("sched-weekday").value,
  };
}

function showChoice(choice) {
  byId("sched-repeat").value = choice.repeat;
  if (choice.every) byId("sched-every").value = String(choice.every);
  if (choice.day) byId("sched-day").value = String(choice.day);
  if (choice.month) byId("sched-month").value = String(choice.month);
  if (choice.nth) byId("sched-nth").value = String(choice.nth);
  if (choice.weekday) byId("sched-weekday").value = choice.weekday;
}

// The rule the form says now: the choices' rule, or an edited schedule's rule kept.
const currentRule = () => state.keptRule ?? ruleOf(readChoice());

function showRule() {
  const repeat = byId("sched-repeat").value;
  for (const label of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("#sched-rule label[data-for]"))) {
    label.hidden = !label.dataset.for.split(" ").includes(repeat);
  }
  // "every one" reads oddly beside "week": the first choice says it plainly.
  byId("sched-every").options[0].textContent = repeat === "week" ? "every week" : "every month";
  byId("sched-words").textContent = state.keptRule ? ruleWords(state.keptRule) : wordsOf(readChoice());
  byId("sched-post-from-label").hidden = byId("sched-mode").value !== "post";
  schedulePreview();
}

function schedulePreview() {
  window.clearTimeout(state.previewTimer);
  state.previewTimer = window.setTimeout(preview, 150);
}

async function preview() {
  const rrule = currentRule();
  const query = { rrule, starts_on: byId("sched-starts").value, weekend: byId("sched-weekend").value };
  const asked = JSON.stringify(query);
  state.previewAsked = asked;
  const list = byId("sched-preview");
  const out = byId("sched-preview-message");
  try {
    const answer = await orSignIn(api("/schedules/preview", { query }));
    if (state.previewAsked !== asked) return; // a later change asked again
    say(out, "");
    list.replaceChildren(...answer.dates.map((d) => h("li", {},
      h("span", { class: "date" }, d.due_on),
      d.due_on !== d.occurs_on ? h("span", { class: "hint" }, ` (moved from ${d.occurs_on}, a weekend)`) : null)));
    if (!answer.dates.length) list.replaceChildren(h("li", { class: "hint" }, "none: the rule gives no date"));
    list.dataset.ready = "true";
  } catch (err) {
    if (state.previewAsked !== asked) return;
    list.replaceChildren();
    say(out, err.message, "error");
  }
}

// An amount the form refuses, with the field it is in (to mark and focus).
class FieldError extends Error {
  constructor(message, field) {
    super(message);
    this.field = field;
  }
}

// The form's fields as the API's schedule; a FieldError names what is wrong.
function formBody() {
  const direction = byId("sched-out").checked ? -1 : 1;
  let amount;
  try {
    amount = parseDollars(byId("sched-amount").value);
  } catch (err) {
    if (err instanceof AmountError) throw new FieldError(err.message, byId("sched-amount"));
    throw err;
  }
  const toleranceText = byId("sched-tolerance").value.trim();
  let tolerance = 0;
  if (toleranceText && !/^0*(\.0*)?$/.test(toleranceText)) {
    try {
      tolerance = parseDollars(toleranceText);
    } catch (err) {
      if (err instanceof AmountError) throw new FieldError(err.message, byId("sched-tolerance"));
      throw err;
    }
  }
  const mode = byId("sched-mode").value;
  const windowText = byId("sched-window").value.trim();
  const body = {
    name: byId("sched-name").value,
    account_id: Number(byId("sched-account").value) || null,
    counter_account_id: Number(byId("sched-counter").value) || null,
    amount_cents: direction * amount,
    rrule: currentRule(),
    starts_on: byId("sched-starts").value || today(),
    weekend: byId("sched-weekend").value,
    match_text: byId("sched-match").value.trim() || null,
    tolerance_cents: tolerance,
    window_days: windowText === "" ? 10 : Number(windowText),
    mode,
  };
  const postFrom = byId("sched-post-from").value;
  if (mode === "post" && postFrom) body.post_from = postFrom;
  return body;
}

const FIELDS = {
  name: "sched-name", account_id: "sched-account", counter_account_id: "sched-counter", amount_cents: "sched-amount",
  rrule: "sched-repeat", starts_on: "sched-starts", weekend: "sched-weekend", match_text: "sched-match",
  tolerance_cents: "sched-tolerance", window_days: "sched-window", mode: "sched-mode", post_from: "sched-post-from",
};

// The field an API refusal names ("'starts_on' must be a date"), to mark and focus.
function refusedField(err) {
  const text = err.message ?? "";
  // "'starts_on' must be a date", or "Name is required." (capitalised for the page).
  const named = /'([a-z_]+)'/.exec(text)?.[1] ?? /^([A-Za-z_]+) is required/.exec(text)?.[1]?.toLowerCase();
  const id = named ? FIELDS[named] : null;
  if (id && ["sched-match", "sched-tolerance", "sched-window", "sched-mode", "sched-post-from"].includes(id)) {
    byId("sched-more").open = true;
  }
  return id ? byId(id) : null;
}

function resetForm() {
  state.editing = null;
  state.keptRule = null;
  byId("form-title").textContent = "New schedule";
  byId("sched-save").textContent = "Save schedule";
  byId("sched-cancel").hidden = true;
  for (const id of ["sched-name", "sched-amount", "sched-match", "sched-tolerance", "sched-post-from"]) byId(id).value = "";
  byId("sched-window").value = "10";
  byId("sched-in").checked = true;
  byId("sched-mode").value = "expect";
  byId("sched-starts").value = today();
  showRule();
}

function startEdit(s) {
  state.editing = s;
  const choice = choiceOf(s.rrule);
  state.keptRule = choice ? null : s.rrule;
  if (choice) showChoice(choice);
  byId("form-title").textContent = `Change ${s.name}`;
  byId("sched-save").textContent = "Save the change";
  byId("sched-cancel").hidden = false;
  byId("sched-name").value = s.name;
  byId(s.amount_cents < 0 ? "sched-out" : "sched-in").checked = true;
  byId("sched-amount").value = centsToInput(Math.abs(s.amount_cents));
  byId("sched-account").value = String(s.account_id);
  byId("sched-counter").value = String(s.counter_account_id);
  byId("sched-starts").value = s.starts_on;
  byId("sched-weekend").value = s.weekend;
  byId("sched-match").value = s.match_text ?? "";
  byId("sched-tolerance").value = s.tolerance_cents ? centsToInput(s.tolerance_cents) : "";
  byId("sched-window").value = String(s.window_days);
  byId("sched-mode").value = s.mode;
  byId("sched-post-from").value = s.post_from ?? "";
  showRule();
  byId("form-section").scrollIntoView({ block: "start" });
  byId("sched-name").focus();
}

async function saveSchedule(event) {
  event.preventDefault();
  const out = byId("sched-message");
  const button = byId("sched-save");
  await busy(button, async () => {
    let body;
    try {
      body = formBody();
    } catch (err) {
      if (err instanceof FieldError) return say(out, err.message, "error", err.field);
      throw err;
    }
    try {
      const editing = state.editing;
      const saved = editing
        ? await orSignIn(api(`/schedules/${editing.id}`, { method: "PUT", json: body }))
        : await orSignIn(api("/schedules", { method: "POST", json: body }));
      resetForm();
      await refresh();
      const posted = saved.mode === "post" ? " What was due is posted." : "";
      say(out, `${editing ? "Changed" : "Saved"} ${saved.name}: ${ruleWords(saved.rrule)}.${posted}`, "info");
    } catch (err) {
      say(out, err.message, "error", refusedField(err));
    }
  });
}

// ---- dues for many members ------------------------------------------------------------

async function makeDues() {
  const out = byId("dues-message");
  const report = byId("dues-report");
  const members = memberLines(byId("dues-names").value);
  if (!members.length) {
    say(out, "Write the members' names, one per line.", "error", byId("dues-names"));
    return;
  }
  let base;
  try {
    base = formBody();
  } catch (err) {
    if (err instanceof FieldError) return say(out, `${err.message} (in the form above)`, "error", err.field);
    throw err;
  }
  report.replaceChildren();
  let made = 0;
  for (const member of members) {
    const name = `${byId("dues-prefix").value}${member}`;
    const line = h("li", { "data-member": member });
    report.append(line);
    try {
      const saved = await orSignIn(api("/schedules", { method: "POST", json: { ...base, name, match_text: member } }));
      made += 1;
      line.className = "made";
      line.append(`${member}: made ${saved.name}`);
    } catch (err) {
      line.className = "refused";
      line.append(`${member}: not made: ${err instanceof ApiError ? err.message : String(err)}`);
    }
  }
  await refresh();
  const refused = members.length - made;
  say(out, `${made} of ${members.length} schedules made${refused ? `; ${refused} refused (see below)` : ""}.`, refused ? "error" : "info");
}

// ---- the forecast ---------------------------------------------------------------------

// Until one is chosen: the account the schedules use most (the bank, as a rule).
function pickForecastAccount() {
  const uses = new Map();
  for (const s of state.schedules) uses.set(s.account_id, (uses.get(s.account_id) ?? 0) + 1);
  const most = [...uses.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  const select = byId("forecast-account");
  if (most && [...select.options].some((o) => o.value === String(most))) select.value = String(most);
}

async function drawForecast() {
  const box = byId("forecast-box");
  const out = byId("forecast-message");
  const accountId = Number(byId("forecast-account").value);
  if (!accountId) {
    box.replaceChildren(h("p", { class: "hint" }, "Choose an account to see its forecast."));
    return;
  }
  let forecast;
  try {
    forecast = await orSignIn(api("/reports/forecast", { query: { account_id: accountId } }));
  } catch (err) {
    box.replaceChildren();
    say(out, err instanceof ApiError && err.status === 404
      ? "This server does not give forecasts yet." : err.message);
    return;
  }
  say(out, "");
  const name = accountName(accountId);
  const rows = forecastRows(forecast);
  const table = h("table", { class: "stack forecast-table", id: "forecast-table" },
    h("caption", {}, `${name}: `, ...keepDates(`${forecast.from} to ${forecast.to}`)),
    h("thead", {}, h("tr", {}, h("th", {}, "Date"), h("th", {}, "What"), h("th", { class: "num" }, "Amount"), h("th", { class: "num" }, "Balance"))),
    h("tbody", {}, rows.map((r) => h("tr", { class: r.on === forecast.lowest.on && r.balance_cents === forecast.lowest.balance_cents ? "lowest" : "" },
      h("td", { "data-label": "Date" }, r.on),
      h("td", { "data-label": "What" }, r.what),
      h("td", { "data-label": "Amount", class: "num" }, r.amount_cents === null ? "" : formatCents(r.amount_cents)),
      h("td", { "data-label": "Balance", class: "num" }, formatCents(r.balance_cents))))));
  box.replaceChildren(
    h("p", { class: "summary" },
      h("span", {}, "Today ", h("strong", {}, formatCents(forecast.balance_cents))),
      h("span", {}, "Lowest ", h("strong", { id: "forecast-lowest" }, formatCents(forecast.lowest.balance_cents)), " on ", h("span", { class: "date" }, forecast.lowest.on)),
      h("span", {}, "At the end ", h("strong", {}, formatCents(forecast.end_balance_cents)))),
    forecastChart(forecast, `${name}: the balance from ${forecast.from} to ${forecast.to}`),
    table);
}

// ---- the page ---------------------------------------------------------------------------

function wire() {
  clearMessagesOnAction(document);
  for (const id of ["sched-repeat", "sched-every", "sched-day", "sched-month", "sched-nth", "sched-weekday"]) {
    byId(id).addEventListener("change", () => {
      state.keptRule = null; // the person chose a rule in words: it replaces one kept
      showRule();
    });
  }
  for (const id of ["sched-starts", "sched-weekend", "sched-mode"]) byId(id).addEventListener("change", showRule);
  byId("sched-starts").addEventListener("input", schedulePreview);
  byId("schedule-form").addEventListener("submit", saveSchedule);
  byId("sched-cancel").addEventListener("click", () => {
    resetForm();
    say(byId("sched-message"), "");
  });
  byId("dues-create").addEventListener("click", () => busy(byId("dues-create"), makeDues));
  byId("forecast-account").addEventListener("change", () => drawForecast().catch((err) => say(byId("forecast-message"), err.message)));
}

async function main() {
  const start = await startPage("expected");
  state.style = start.style;
  state.accounts = start.accounts;
  fillChoices();
  fillAccounts();
  wire();
  resetForm();
  const asked = Number(new URLSearchParams(window.location.search).get("account"));
  if (asked && state.accounts.byId.has(asked)) byId("forecast-account").value = String(asked);
  await refresh();
  document.body.dataset.ready = "true";
}

main().catch((err) => say(byId("message"), err.message));
