// What several views share: the accounts (with the archived ones kept out of
// every picker), account choices grouped by kind, and the wording setting.
import { api, orSignIn } from "./api.js";
import { h } from "./dom.js";
import { applyVocab, KINDS, words } from "./vocab.js";

// {list, byId, open}: all accounts, by id, and the ones a picker may offer.
export async function loadAccounts() {
  const list = await orSignIn(api("/accounts"));
  return {
    list,
    byId: new Map(list.map((a) => [a.id, a])),
    open: list.filter((a) => !a.archived),
  };
}

// <option>s grouped by kind (only `kinds`, when given), after a "Choose…" one.
export function accountOptions(accounts, { kinds = null, chosen = null, style = "personal", empty = "Choose…" } = {}) {
  const w = words(style);
  const groups = KINDS.filter((kind) => !kinds || kinds.includes(kind))
    .map((kind) => [kind, accounts.filter((a) => a.kind === kind)])
    .filter(([, list]) => list.length > 0)
    .map(([kind, list]) => h("optgroup", { label: w.kinds[kind] },
      list.map((a) => h("option", { value: a.id, selected: a.id === chosen }, a.archived ? `${a.name} (archived)` : a.name))));
  return [h("option", { value: "" }, empty), ...groups];
}

// Apply the wording setting (GET /settings's answer) to the page; returns the style.
export function applyStyle(settings) {
  document.body.dataset.bookStyle = settings.book_style;
  applyVocab(document, settings.book_style);
  return settings.book_style;
}

// Read the wording setting and apply it to the page; returns the style.
export async function loadStyle() {
  return applyStyle(await orSignIn(api("/settings")));
}
