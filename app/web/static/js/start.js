// What a page reads before it can draw anything, asked for at once: the signed-in
// user, the wording setting and (unless told not to) the accounts, in one round of
// requests instead of one after another (docs/performance.md, "Pages: what a person
// waits for"). A 401 on any of them sends the person to sign in, as each alone would.
import { api, orSignIn, requireSession } from "./api.js";
import { applyStyle, loadAccounts } from "./ledger.js";
import { renderNav } from "./nav.js";

/**
 * The nav drawn with `name` current, the wording applied.
 * @param {string} name
 * @param {{accounts?: boolean, more?: Promise<any>[]}} [options] `more`: further reads
 *   the page needs first, asked for in the same round (their answers in `more`)
 */
export async function startPage(name, { accounts = true, more = [] } = {}) {
  const [me, settings, loaded, ...answers] = await Promise.all([
    requireSession(),
    orSignIn(api("/settings")),
    accounts ? loadAccounts() : Promise.resolve(null),
    ...more,
  ]);
  renderNav(name, me.email);
  return { me, settings, style: applyStyle(settings), accounts: loaded, more: answers };
}
