// The header every signed-in page shares: where you are, who you are, sign out.
import { api } from "./api.js";
import { h } from "./dom.js";

// The views, in menu order: [path, label, key]. One line per view, so a new
// page (e.g. History) adds one line here.
export const VIEWS = [
  ["/", "Books", "books"],
  ["/accounts", "Accounts", "accounts"],
  ["/register", "Register", "register"],
  ["/reports", "Reports", "reports"],
  ["/budgets", "Budgets", "budgets"],
  ["/import", "Import", "import"],
  ["/history", "History", "history"],
  ["/security", "Security", "security"],
];

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
  header.replaceChildren(
    h("span", { class: "brand" }, "Ledger"),
    h("nav", { "aria-label": "Views" }, VIEWS.map(([href, label, key]) => link(href, label, key))),
    h("span", { class: "who" }, email ? h("span", { id: "who" }, email) : null, signOut),
  );
}
