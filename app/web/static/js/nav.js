// The header every signed-in page shares: where you are, who you are, sign out.
import { api } from "./api.js";
import { h } from "./dom.js";

// The views, in menu order: [path, label, key]. One line per view, so a new
// page (e.g. History) adds one line here.
export const VIEWS = [
  ["/", "Books", "books"],
  ["/accounts", "Accounts", "accounts"],
  ["/register", "Register", "register"],
  ["/expected", "Expected", "expected"],
  ["/reports", "Reports", "reports"],
  ["/budgets", "Budgets", "budgets"],
  ["/import", "Import", "import"],
  ["/statements", "Statements", "statements"],
  ["/rules", "Rules", "rules"],
  ["/history", "History", "history"],
  ["/year-end", "Year end", "year-end"],
  ["/security", "Security", "security"],
];

// On a phone the header is one short line (brand, this view's name, Menu); the
// views and the sign-out open under Menu. On a wider screen all of it shows at once.
export function renderNav(active, email) {
  const header = document.getElementById("nav");
  const link = (href, label, key) =>
    h("a", { href, class: key === active ? "active" : "", "aria-current": key === active ? "page" : false }, label);
  const signOut = h("button", { type: "button", class: "link", id: "sign-out" }, "Sign out");
  signOut.addEventListener("click", async () => {
    signOut.disabled = true;
    try {
      await api("/auth/logout", { method: "POST" });
    } finally {
      window.location.assign("/signin");
    }
  });
  const here = VIEWS.find(([, , key]) => key === active);
  const menu = h("button", { type: "button", class: "menu-toggle", id: "menu-toggle", "aria-expanded": "false", "aria-controls": "nav-views" }, "Menu");
  menu.addEventListener("click", () => {
    const open = !header.classList.contains("open");
    header.classList.toggle("open", open);
    menu.setAttribute("aria-expanded", String(open));
  });
  // (replaceChildren would write a null as the text "null": left out instead.)
  header.replaceChildren(...[
    h("span", { class: "brand" }, "Ledger"),
    here ? h("span", { class: "here" }, here[1]) : null,
    menu,
    h("nav", { "aria-label": "Views", id: "nav-views" }, VIEWS.map(([href, label, key]) => link(href, label, key))),
    h("span", { class: "who" }, email ? h("span", { id: "who", title: email }, email) : null, signOut),
  ].filter(Boolean));
}
