// The books' lock date (issue 19), self-contained: mountLock(parent) adds its own card
// and talks only to GET/PUT /books/lock. Nothing dated on or before the lock can be
// recorded, corrected or deleted; the API refuses it (409) and the forms show its words.
// It lives on the Year end page, with the financial year: closing a year is locking it.
import { api, orSignIn } from "./api.js";
import { busy, h, say, today } from "./dom.js";
import { lastYearEnd } from "./yearend.js";

// The current lock date (null: not locked).
export async function lockedThrough() {
  return (await orSignIn(api("/books/lock"))).locked_through;
}

// Add the lock card to `parent`; resolves once the current lock is shown.
// startMonth() gives the financial year's first month, for "Close the year ending ...".
/**
 * @param {Element} parent
 * @param {{startMonth?: () => number}} [options]
 */
export async function mountLock(parent, { startMonth = () => 1 } = {}) {
  const status = h("p", { id: "lock-status" }, "Loading the lock date…");
  const closeButton = h("button", { id: "close-year", type: "button" }, "Close the year");
  const input = h("input", { id: "lock-date", type: "date" });
  const setButton = h("button", { id: "lock-submit", type: "submit", class: "secondary" }, "Lock");
  const clearButton = h("button", { id: "lock-clear", type: "button", class: "secondary" }, "Unlock");
  const message = h("p", { id: "lock-message", role: "alert", hidden: true });
  const form = h("form", { id: "lock-form", class: "inline" },
    h("label", {}, "Or lock through another day ", input), setButton, clearButton);
  const card = h("section", { id: "lock-section", class: "card" },
    h("h2", {}, "Close the year"),
    status,
    h("div", { class: "actions" }, closeButton),
    h("p", { class: "hint" },
      "Once a year's books are done (audited, filed, handed over), close the year: nothing dated on or before its last day can then be recorded, corrected or deleted, by you, a script or an assistant. Only a person signed in here can move the lock, back to correct something, or clear it."),
    form,
    message);
  let current = null;

  function show(locked) {
    current = locked;
    status.textContent = locked
      ? `The books are locked through ${locked}.`
      : "The books are not locked: any date can be recorded.";
    input.value = locked ?? "";
    clearButton.hidden = !locked;
    const end = lastYearEnd(today(), startMonth());
    closeButton.textContent = `Close the year ending ${end}`;
    closeButton.dataset.day = end;
    closeButton.hidden = Boolean(locked && locked >= end);
  }

  async function put(value, button) {
    say(message, "");
    await busy(button, async () => {
      try {
        const answer = await orSignIn(api("/books/lock", { method: "PUT", json: { locked_through: value } }));
        show(answer.locked_through);
        say(message, value ? `Locked through ${value}.` : "Unlocked.", "info");
      } catch (err) {
        say(message, err.message);
      }
    });
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!input.value) {
      say(message, "Choose the last day to lock.", "error", input);
      return;
    }
    put(input.value, setButton);
  });
  clearButton.addEventListener("click", () => put(null, clearButton));
  closeButton.addEventListener("click", () => put(closeButton.dataset.day, closeButton));

  parent.append(card);
  try {
    show(await lockedThrough());
  } catch (err) {
    say(message, `Could not load the lock date: ${err.message}`);
  }
  return { refresh: () => show(current) };
}
