// Bank-statement import: read a CSV file in the browser, map its columns, preview
// (POST /import with dry_run: possible duplicates and refusals per line), then
// import every line or none (the same call without dry_run).
import { api, orSignIn, requireSession } from "../api.js";
import { busy, byId, h, say } from "../dom.js";
import { CsvError, guessMapping, lineTransaction, parseCsv, statementLines } from "../csv.js";
import { accountOptions, loadAccounts, loadStyle } from "../ledger.js";
import { formatCents } from "../money.js";
import { renderNav } from "../nav.js";

const state = { style: "personal", accounts: null, rows: [], lines: [], preview: null, sending: null };
const MAX_BYTES = 5 * 1024 * 1024;

const splitMode = () => document.querySelector("input[name=amount-mode]:checked").value === "split";

function columnOptions(select, chosen) {
  const header = state.rows[0] ?? [];
  const named = byId("has-header").checked;
  select.replaceChildren(h("option", { value: "-1" }, "Choose…"),
    ...header.map((cell, i) => h("option", { value: i, selected: i === chosen },
      named && cell.trim() ? cell.trim() : `Column ${i + 1}`)));
}

function showMapping() {
  const guess = byId("has-header").checked ? guessMapping(state.rows[0] ?? []) : { date: 0, description: 1, amount: 2, debit: -1, credit: -1 };
  columnOptions(byId("map-date"), guess.date);
  columnOptions(byId("map-description"), guess.description);
  columnOptions(byId("map-amount"), guess.amount);
  columnOptions(byId("map-debit"), guess.debit);
  columnOptions(byId("map-credit"), guess.credit);
  if (guess.amount < 0 && guess.debit >= 0 && guess.credit >= 0) {
    document.querySelector("input[name=amount-mode][value=split]").checked = true;
  }
  const sample = (state.rows[byId("has-header").checked ? 1 : 0] ?? [])[Math.max(guess.date, 0)] ?? "";
  if (/^\d{1,2}[/.-]\d{1,2}[/.-]\d{4}$/.test(sample.trim())) byId("date-format").value = "DD/MM/YYYY";
  showAmountFields();
  byId("mapping-section").hidden = false;
  byId("preview-section").hidden = true;
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
    debit: n("map-debit"), credit: n("map-credit"), split: splitMode(),
    dateFormat: byId("date-format").value, hasHeader: byId("has-header").checked,
  };
}

function renderPreview() {
  const result = state.preview;
  const byLine = new Map();
  (result?.rows ?? []).forEach((row, i) => byLine.set(state.sending[i], row));
  let bad = 0;
  let dupes = 0;
  const rows = state.lines.map((line) => {
    const server = byLine.get(line.line);
    const problem = line.error ?? server?.error ?? null;
    const duplicates = server?.possible_duplicates ?? [];
    if (problem) bad += 1;
    else if (duplicates.length) dupes += 1;
    const check = problem
      ? h("span", { class: "flag" }, problem.replace(/^row \d+: /, ""))
      : duplicates.length
        ? h("span", { class: "flag" }, `Possible duplicate of a transaction already in the books (#${duplicates.join(", #")})`)
        : h("span", {}, "OK");
    return h("tr", { "data-line": line.line, class: problem ? "invalid" : duplicates.length ? "duplicate" : "" },
      h("td", { "data-label": "Line" }, String(line.line)),
      h("td", { "data-label": "Date" }, line.occurred_on ?? ""),
      h("td", { "data-label": "Description" }, h("span", {}, line.description)),
      h("td", { class: "num", "data-label": "Amount" }, line.cents === null ? "" : formatCents(line.cents)),
      h("td", { "data-label": "Check" }, check));
  });
  byId("preview-table").querySelector("tbody").replaceChildren(...rows);
  const good = state.lines.length - bad;
  const parts = [`${state.lines.length} lines: ${good} ready to import`];
  if (dupes) parts.push(`${dupes} of them possible duplicate${dupes === 1 ? "" : "s"} (check before importing)`);
  if (bad) parts.push(`${bad} with a problem`);
  byId("preview-summary").textContent = `${parts.join(", ")}.`;
  byId("import-submit").disabled = bad > 0 || good === 0;
  byId("import-submit").textContent = `Import ${good} transaction${good === 1 ? "" : "s"}`;
  byId("preview-section").hidden = false;
}

function transactions() {
  const bank = byId("import-bank").value;
  const counter = byId("import-counter").value;
  const ready = state.lines.filter((line) => !line.error);
  state.sending = ready.map((line) => line.line);
  return ready.map((line) => lineTransaction(line, bank, counter));
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
  if (!byId("import-bank").value) return say(out, "Choose the bank account.", "error", byId("import-bank"));
  if (!byId("import-counter").value) return say(out, "Choose the account for the other side.", "error", byId("import-counter"));
  if (byId("import-bank").value === byId("import-counter").value) return say(out, "The two accounts must differ.", "error", byId("import-counter"));
  state.lines = statementLines(state.rows, m);
  state.preview = null;
  busy(event.currentTarget, async () => {
    const body = transactions();
    if (body.length > 0) {
      try {
        state.preview = await orSignIn(api("/import", { method: "POST", json: { transactions: body, dry_run: true } }));
      } catch (err) {
        return say(out, err.message);
      }
    }
    renderPreview();
  });
});

byId("import-submit").addEventListener("click", (event) => {
  const out = byId("import-message");
  say(out, "");
  busy(event.currentTarget, async () => {
    try {
      const result = await orSignIn(api("/import", { method: "POST", json: { transactions: transactions(), dry_run: false } }));
      say(out, `Imported ${result.imported} transaction${result.imported === 1 ? "" : "s"}. They are on the Books page and in the account's register.`, "info");
      byId("import-submit").disabled = true;
    } catch (err) {
      say(out, `Nothing was imported. ${err.message}`);
    }
  }).finally(() => {
    if (/^Imported/.test(out.textContent)) byId("import-submit").disabled = true;
  });
});

async function main() {
  const me = await requireSession();
  renderNav("import", me.email);
  state.style = await loadStyle();
  state.accounts = await loadAccounts();
  const open = state.accounts.open;
  byId("import-bank").replaceChildren(...accountOptions(open, { kinds: ["asset", "liability"], style: state.style }));
  byId("import-counter").replaceChildren(...accountOptions(open, { style: state.style }));
  document.body.dataset.ready = "true";
}

main().catch((err) => say(byId("message"), err.message));
