// Year end: the financial year (which month it starts in) and closing the year, i.e.
// the books' lock date (lock.js). Corrections inside a closed year need the lock
// moved back first, here, by a person.
import { requireSession } from "../api.js";
import { byId, clearMessagesOnAction, h, say } from "../dom.js";
import { mountLock } from "../lock.js";
import { renderNav } from "../nav.js";
import { MONTHS, storedStart, storeStart } from "../yearend.js";

async function main() {
  const me = await requireSession();
  renderNav("year-end", me.email);
  clearMessagesOnAction(document.querySelector("main"));
  const select = byId("fy-start");
  select.replaceChildren(...MONTHS.map((name, i) => h("option", { value: i + 1 }, name)));
  select.value = String(storedStart());
  const lock = await mountLock(document.querySelector("main"), { startMonth: () => Number(select.value) });
  select.addEventListener("change", () => {
    storeStart(Number(select.value));
    lock.refresh();
    say(byId("fy-message"), `The financial year starts in ${MONTHS[Number(select.value) - 1]}.`, "info");
  });
  document.body.dataset.ready = "true";
}

main().catch((err) => say(byId("message"), err.message));
