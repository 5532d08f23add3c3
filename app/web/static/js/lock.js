// The books' lock date (issue 19), self-contained: mountLock(main) adds its own card to
// the page and talks only to GET/PUT /books/lock. Nothing dated on or before the lock can
// be recorded or deleted; the API refuses it (409) and the record form shows its words.
import { api, orSignIn } from "./api.js";
import { busy, h, say } from "./dom.js";

// Add the lock card to `parent`; resolves once the current lock is shown.
export async function mountLock(parent) {
  const status = h("p", { id: "lock-status" }, "Loading the lock date…");
  const input = h("input", { id: "lock-date", type: "date" });
  const setButton = h("button", { id: "lock-submit", type: "submit" }, "Lock");
  const clearButton = h("button", { id: "lock-clear", type: "button", class: "secondary" }, "Unlock");
  const message = h("p", { id: "lock-message", role: "alert", hidden: true });
  const form = h("form", { id: "lock-form", class: "inline" },
    h("label", {}, "Locked through ", input), setButton, clearButton);
  const card = h("section", { id: "lock-section", class: "card" },
    h("h2", {}, "Lock date"),
    status,
    form,
    h("p", { class: "hint" },
      "Once the books are closed (for example after the year's audit), lock them: nothing dated on or before the lock date can be recorded or deleted, by you, a script or an assistant. Only a person signed in here can move it."),
    message);

  function show(locked) {
    status.textContent = locked
      ? `The books are locked through ${locked}.`
      : "The books are not locked: any date can be recorded.";
    input.value = locked ?? "";
    clearButton.hidden = !locked;
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
      say(message, "Choose the last day to lock.");
      return;
    }
    put(input.value, setButton);
  });
  clearButton.addEventListener("click", () => put(null, clearButton));

  parent.append(card);
  try {
    show((await orSignIn(api("/books/lock"))).locked_through);
  } catch (err) {
    say(message, `Could not load the lock date: ${err.message}`);
  }
}
