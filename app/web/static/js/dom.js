// A tiny element builder. Text always goes in as text (never as HTML), so names
// chosen by others (a client's self-asserted name, an account) cannot inject markup.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.className = value;
    } else if (value === true) {
      el.setAttribute(key, "");
    } else if (value !== false && value !== null && value !== undefined) {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

// An SVG element with these attributes (and text, as text): the charts' builder.
const SVG_NS = "http://www.w3.org/2000/svg";
export function svg(tag, attrs, text) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

// The page's element with this id. Which kind of element an id names (an input, a
// select, a <details>, a form) is declared in the page's HTML (app/web/pages), which the
// type checker does not read: the element is typed `any`, and each page uses it as the
// kind its HTML declares (tests/web/test_web_views.py drives every page in a browser).
/** @type {(id: string) => any} */
export const byId = (id) => document.getElementById(id);

// Show (or clear, with "") a message in an element with role="alert" or "status".
// An error also takes the focus (or gives it to `field`, marked aria-invalid and
// described by the message), so keyboard and screen-reader users land on it.
// Clearing the message clears the marks it put on fields.
export function say(el, text, kind = "error", field = null) {
  if (!el.id) el.id = `message-${Math.random().toString(36).slice(2, 9)}`;
  for (const marked of document.querySelectorAll(`[data-error-of="${el.id}"]`)) {
    marked.removeAttribute("aria-invalid");
    marked.removeAttribute("data-error-of");
    const rest = (marked.getAttribute("aria-describedby") ?? "").split(/\s+/).filter((id) => id && id !== el.id);
    if (rest.length) marked.setAttribute("aria-describedby", rest.join(" "));
    else marked.removeAttribute("aria-describedby");
  }
  el.textContent = text;
  el.className = `message ${kind}`;
  el.hidden = !text;
  if (!text || kind !== "error") return;
  el.setAttribute("role", "alert");
  if (field) {
    field.setAttribute("aria-invalid", "true");
    field.setAttribute("data-error-of", el.id);
    const ids = new Set((field.getAttribute("aria-describedby") ?? "").split(/\s+/).filter(Boolean));
    ids.add(el.id);
    field.setAttribute("aria-describedby", [...ids].join(" "));
    field.focus();
  } else {
    el.tabIndex = -1;
    if (document.activeElement !== el) el.focus({ preventScroll: false });
  }
}

export function today() {
  const d = new Date();
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

// Text with each date in it (2026-03-01) kept on one line: the dates as span.date,
// which never wraps (app.css), the rest as text. The text itself is unchanged.
export function keepDates(text) {
  return String(text ?? "").split(/(\d{4}-\d\d-\d\d)/).filter((part) => part !== "")
    .map((part) => (/^\d{4}-\d\d-\d\d$/.test(part) ? h("span", { class: "date" }, part) : part));
}

export function formatWhen(iso) {
  if (!iso) return "never";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

// Disable a button while an action runs, so a double click never posts twice.
export async function busy(button, action) {
  button.disabled = true;
  try {
    return await action();
  } finally {
    button.disabled = false;
  }
}

// A page's messages answer the action that showed them: once the person does
// something else (presses another button, submits another form), they go. Call
// once per page; `keep` names messages that stay (e.g. one saying why the page
// cannot work at all). Runs before the action's own handler, which then says its
// own message.
/**
 * @param {ParentNode} [root]
 * @param {string[]} [keep]
 */
export function clearMessagesOnAction(root = document, keep = []) {
  const clear = (event) => {
    const target = event.target instanceof Element ? event.target : null;
    if (!target) return;
    if (event.type === "click" && !target.closest("button, summary, a")) return;
    for (const el of root.querySelectorAll(".message:not([hidden])")) {
      if (keep.includes(el.id) || el.contains(target)) continue;
      say(el, "");
    }
  };
  root.addEventListener("click", clear, true);
  root.addEventListener("submit", clear, true);
}
