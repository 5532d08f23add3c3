// The header every signed-in page shares: where you are, who you are, sign out.
import { api } from "./api.js";
import { h } from "./dom.js";

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
    h("nav", {}, link("/", "Books", "books"), link("/history", "History", "history"), link("/security", "Security", "security")),
    h("span", { class: "who" }, email ? h("span", { id: "who" }, email) : null, signOut),
  );
}
