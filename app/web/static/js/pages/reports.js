// Reports: the income statement for a period and the balance sheet as of a day,
// each downloadable as CSV (built here from the report the API gave, figures
// unchanged), and the export of the books (GET /export) as a file.
import { api, orSignIn, requireSession } from "../api.js";
import { busy, byId, say, today } from "../dom.js";
import { balanceSheetRows, incomeStatementRows, saveBlob, toCsv } from "../download.js";
import { loadStyle } from "../ledger.js";
import { renderNav } from "../nav.js";
import { renderBalanceSheet, renderIncomeStatement } from "../reports.js";
import { mountAuditPack } from "../documents.js";

const EXTENSIONS = { csv: "csv", hledger: "journal", beancount: "beancount" };
const state = { style: "personal", income: null, balance: null };

async function loadIncomeStatement() {
  say(byId("is-message"), "");
  const from = byId("is-from").value;
  const to = byId("is-to").value;
  if (!from || !to) return say(byId("is-message"), "Choose both dates.", "error", byId(from ? "is-to" : "is-from"));
  try {
    state.income = await orSignIn(api("/reports/income-statement", { query: { from, to } }));
    renderIncomeStatement(byId("income-statement"), byId("is-chart"), state.income, state.style);
    byId("is-csv").disabled = false;
  } catch (err) {
    say(byId("is-message"), err.message, "error", /from/.test(err.message) ? byId("is-from") : null);
  }
}

async function loadBalanceSheet() {
  say(byId("bs-message"), "");
  const asOf = byId("bs-as-of").value;
  if (!asOf) return say(byId("bs-message"), "Choose the date.", "error", byId("bs-as-of"));
  try {
    state.balance = await orSignIn(api("/reports/balance-sheet", { query: { as_of: asOf } }));
    renderBalanceSheet(byId("balance-sheet"), byId("bs-chart"), state.balance, state.style);
    byId("bs-csv").disabled = false;
  } catch (err) {
    say(byId("bs-message"), err.message);
  }
}

byId("is-form").addEventListener("submit", (e) => { e.preventDefault(); loadIncomeStatement(); });
byId("bs-form").addEventListener("submit", (e) => { e.preventDefault(); loadBalanceSheet(); });
byId("is-csv").addEventListener("click", () => {
  const r = state.income;
  saveBlob(new Blob([toCsv(incomeStatementRows(r))], { type: "text/csv" }), `income-statement-${r.from}-${r.to}.csv`);
});
byId("bs-csv").addEventListener("click", () => {
  const r = state.balance;
  saveBlob(new Blob([toCsv(balanceSheetRows(r))], { type: "text/csv" }), `balance-sheet-${r.as_of}.csv`);
});

// The export comes from the API with the session cookie, so a plain link would
// not do (another origin): fetch it, then hand the bytes over as a file.
byId("export-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const out = byId("export-message");
  say(out, "");
  busy(byId("export-submit"), async () => {
    const format = byId("export-format").value;
    try {
      const response = await orSignIn(api("/export", {
        raw: true,
        query: { format, from: byId("export-from").value, to: byId("export-to").value },
      }));
      const blob = await response.blob();
      // Named as the API names it (ledger-DAY.ext); CORS does not expose its header.
      const name = `ledger-${today()}.${EXTENSIONS[format]}`;
      saveBlob(blob, name);
      say(out, `Downloaded ${name}.`, "info");
    } catch (err) {
      say(out, err.message);
    }
  });
});

async function main() {
  const me = await requireSession();
  renderNav("reports", me.email);
  mountAuditPack(byId("export-section"));
  state.style = await loadStyle();
  const now = today();
  byId("is-from").value = `${now.slice(0, 4)}-01-01`;
  byId("is-to").value = now;
  byId("bs-as-of").value = now;
  await Promise.all([loadIncomeStatement(), loadBalanceSheet()]);
  document.body.dataset.ready = "true";
}

main().catch((err) => say(byId("message"), err.message));
