// Accounts by kind with their balances: create, rename, archive / unarchive,
// and a link to each account's register.
import { api, orSignIn } from "../api.js";
import { busy, byId, clearMessagesOnAction, h, say } from "../dom.js";
import { loadAccounts } from "../ledger.js";
import { formatCents } from "../money.js";
import { KINDS, words } from "../vocab.js";
import { startPage } from "../start.js";

const state = { style: "personal", accounts: null, cents: new Map() };
const message = byId("account-message");

function renameForm(account, cell, restore) {
  const input = h("input", { value: account.name, maxlength: 100, "aria-label": `New name for ${account.name}`, class: "rename-input" });
  const save = h("button", { type: "submit" }, "Save");
  const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
  const form = h("form", { class: "inline rename", novalidate: true }, input, save, cancel);
  cancel.addEventListener("click", () => { say(message, ""); restore(); });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    say(message, "");
    const name = input.value.trim();
    if (!name) return say(message, "Give the account a name.", "error", input);
    busy(save, async () => {
      try {
        const saved = await orSignIn(api(`/accounts/${account.id}`, { method: "PUT", json: { name } }));
        await refresh();
        say(message, `Renamed “${account.name}” to “${saved.name}”.`, "info");
      } catch (err) {
        say(message, err.message, "error", input);
      }
    });
  });
  cell.replaceChildren(form);
  input.focus();
  input.select();
}

async function setArchived(account, archived) {
  say(message, "");
  try {
    await orSignIn(api(`/accounts/${account.id}`, { method: "PUT", json: { archived } }));
    await refresh();
    say(message, archived
      ? `Archived “${account.name}”: it keeps its history and is no longer offered for new entries.`
      : `“${account.name}” is open again.`, "info");
  } catch (err) {
    say(message, err.message);
  }
}

function accountRow(account) {
  const nameCell = h("td", { "data-label": "Account" });
  const actions = h("td", { class: "row-actions" });
  const show = () => {
    // (replaceChildren would write a null as the text "null": only what is there.)
    nameCell.replaceChildren(...[
      h("a", { href: `/register?account=${account.id}`, class: "account-link" }, account.name),
      account.archived ? h("span", { class: "badge" }, "archived") : null,
    ].filter(Boolean));
    const rename = h("button", { type: "button", class: "secondary" }, "Rename");
    rename.addEventListener("click", () => renameForm(account, nameCell, show));
    const archive = h("button", { type: "button", class: "secondary" }, account.archived ? "Unarchive" : "Archive");
    archive.addEventListener("click", () => busy(archive, () => setArchived(account, !account.archived)));
    actions.replaceChildren(rename, archive);
    if (!account.archived && (account.kind === "asset" || account.kind === "liability")) {
      actions.append(h("a", { href: `/statements?account=${account.id}`, class: "account-link statements-link" }, "Statements"));
    }
  };
  show();
  return h("tr", { "data-account": account.name, "data-id": account.id, class: account.archived ? "archived" : "" },
    nameCell,
    h("td", { class: "num", "data-label": "Balance" }, formatCents(state.cents.get(account.name) ?? 0)),
    actions);
}

function render() {
  const w = words(state.style);
  const showArchived = byId("show-archived").checked;
  const shown = state.accounts.list.filter((a) => showArchived || !a.archived);
  byId("account-groups").replaceChildren(
    // A heading of its own above each kind's table (a caption collapses with the
    // table when a phone stacks its rows).
    ...KINDS.filter((kind) => shown.some((a) => a.kind === kind)).map((kind) =>
      h("section", { class: "account-group", "data-kind": kind, "aria-labelledby": `kind-${kind}` },
        h("h3", { id: `kind-${kind}`, class: "kind-heading" }, w.kinds[kind]),
        h("table", { class: "report accounts stack", "aria-labelledby": `kind-${kind}` },
          h("thead", {}, h("tr", {}, h("th", {}, "Account"), h("th", { class: "num" }, "Balance"), h("th", {}, h("span", { class: "sr-only" }, "Actions")))),
          h("tbody", {}, shown.filter((a) => a.kind === kind).map(accountRow))))),
  );
  if (state.accounts.list.length === 0) {
    byId("account-groups").append(h("p", { class: "hint" }, "No accounts yet: create the first one below (for example a bank account of kind asset)."));
  }
  const hidden = state.accounts.list.length - shown.length;
  byId("show-archived").parentElement.hidden = hidden === 0 && !showArchived;
}

async function refresh() {
  const [accounts, balances] = await Promise.all([loadAccounts(), orSignIn(api("/reports/balances"))]);
  state.accounts = accounts;
  state.cents = new Map(balances.map((line) => [line.account, line.cents]));
  render();
}

byId("show-archived").addEventListener("change", render);

byId("new-account").addEventListener("submit", (event) => {
  event.preventDefault();
  const out = byId("new-account-message");
  say(out, "");
  busy(byId("account-submit"), async () => {
    const name = byId("account-name").value.trim();
    if (!name) return say(out, "Give the account a name.", "error", byId("account-name"));
    try {
      const created = await orSignIn(api("/accounts", { method: "POST", json: { name, kind: byId("account-kind").value } }));
      byId("account-name").value = "";
      await refresh();
      say(out, `Created ${created.name}.`, "info");
    } catch (err) {
      say(out, err.message, "error", byId("account-name"));
    }
  });
});

async function main() {
  const start = await startPage("accounts", { accounts: false });
  clearMessagesOnAction(document.querySelector("main"));
  state.style = start.style;
  const w = words(state.style);
  byId("account-kind").replaceChildren(...KINDS.map((kind) => h("option", { value: kind }, `${kind} (${w.kinds[kind]})`)));
  await refresh();
  document.body.dataset.ready = "true";
}

main().catch((err) => say(byId("message"), err.message));
