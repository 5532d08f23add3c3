// A choice among many alike (one per line of a long list: the import preview, a bank
// statement's waiting lines) is drawn with its chosen option alone; the whole list is
// copied in from a template when the browser is next idle, or at once when the person
// reaches for the choice (pointer, keyboard focus). A thousand lines are then shown
// without first copying forty thousand options (docs/web.md, Speed).
import { h } from "./dom.js";

const FILL_CHUNK = 100;
const optionsByValue = new WeakMap();
/** @type {[HTMLSelectElement, HTMLSelectElement][]} */
const pending = []; // [select, its template], filled in order
let scheduled = false;

function optionsOf(template) {
  if (!optionsByValue.has(template)) {
    optionsByValue.set(template, new Map(Array.from(template.querySelectorAll("option")).map((o) => [o.value, o])));
  }
  return optionsByValue.get(template);
}

function fill(select, template) {
  if (select.dataset.filled) return;
  const value = select.value;
  select.replaceChildren(...Array.from(template.cloneNode(true).childNodes));
  select.value = value;
  if (select.selectedIndex < 0) select.selectedIndex = 0;
  select.dataset.filled = "true";
}

const later = (fn) => (typeof window.requestIdleCallback === "function"
  ? window.requestIdleCallback(fn, { timeout: 200 })
  : setTimeout(fn, 0));

/**
 * A <select> like `template` (its class, its options) showing `value`, or the first
 * option ("Choose…") when `value` is not offered, as a full copy would.
 * @param {HTMLSelectElement} template
 * @param {string} value
 * @param {Record<string, any>} [attrs]
 * @returns {HTMLSelectElement}
 */
export function lazyChoice(template, value, attrs = {}) {
  const shown = (value && optionsOf(template).get(value)) || template.querySelector("option");
  const select = /** @type {HTMLSelectElement} */ (h("select", { class: template.className, ...attrs }, shown ? shown.cloneNode(true) : null));
  for (const type of ["pointerdown", "focus"]) select.addEventListener(type, () => fill(select, template));
  return select;
}

/**
 * Fill `selects` (made by lazyChoice from `template`) a chunk at a time while the
 * browser is idle, after those asked for before; one no longer on the page is skipped.
 * @param {HTMLSelectElement[]} selects
 * @param {HTMLSelectElement} template
 */
export function fillWhenIdle(selects, template) {
  for (const select of selects) pending.push([select, template]);
  if (scheduled) return;
  scheduled = true;
  const step = () => {
    for (const [select, from] of pending.splice(0, FILL_CHUNK)) if (select.isConnected) fill(select, from);
    if (pending.length) later(step);
    else scheduled = false;
  };
  later(step);
}
