// Security settings: passkeys (add, delete; the last one is refused by the API),
// connections (revoke), password change.
import { api, ApiError, orSignIn, requireSession } from "../api.js";
import { busy, byId, formatWhen, h, say } from "../dom.js";
import { renderNav } from "../nav.js";
import { ceremonyMessage, enrolPasskey } from "../webauthn.js";

const passkeyMessage = byId("passkey-message");
const connectionMessage = byId("connection-message");
const passwordMessage = byId("password-message");

// A row's destructive button asks once more, in place, before acting.
function confirmInPlace(cell, question, action) {
  const original = [...cell.childNodes];
  const yes = h("button", { type: "button", class: "danger" }, "Yes");
  const no = h("button", { type: "button", class: "secondary" }, "Keep");
  no.addEventListener("click", () => cell.replaceChildren(...original));
  yes.addEventListener("click", () => busy(yes, action));
  cell.replaceChildren(h("span", { class: "confirm" }, question), yes, no);
}

async function loadPasskeys() {
  const list = await orSignIn(api("/auth/passkeys"));
  byId("passkeys").replaceChildren(
    ...list.map((key) => {
      const actions = h("span", { class: "row-actions" });
      const del = h("button", { type: "button", class: "secondary" }, "Delete");
      del.addEventListener("click", () =>
        confirmInPlace(actions, `Delete “${key.name}”?`, () => deletePasskey(key)),
      );
      actions.append(del);
      return h("li", { "data-id": key.id, class: "wrap" },
        h("span", { class: "name" }, key.name || "Passkey"),
        h("span", { class: "hint" }, `added ${formatWhen(key.created_at)} · last used ${formatWhen(key.last_used_at)}`),
        actions);
    }),
  );
}

async function deletePasskey(key) {
  say(passkeyMessage, "");
  let outcome = [`Deleted “${key.name}”.`, "info"];
  try {
    await orSignIn(api(`/auth/passkeys/${encodeURIComponent(key.id)}`, { method: "DELETE" }));
  } catch (err) {
    outcome = [err instanceof ApiError && err.status === 409
      ? "This is your last passkey, and every sign-in needs one. Add another passkey before deleting this one."
      : err.message];
  }
  await loadPasskeys(); // the list first, then the message: what it says is on screen
  say(passkeyMessage, ...outcome);
}

byId("add-passkey").addEventListener("submit", (event) => {
  event.preventDefault();
  say(passkeyMessage, "");
  busy(byId("add-passkey-submit"), async () => {
    const name = byId("new-passkey-name").value.trim();
    let outcome = ["Passkey added.", "info"];
    try {
      await enrolPasskey(name);
      byId("new-passkey-name").value = "";
    } catch (err) {
      outcome = [err instanceof ApiError ? err.message : ceremonyMessage(err)];
    }
    await loadPasskeys();
    say(passkeyMessage, ...outcome);
  });
});

// GET /auth/tokens `source` in words.
const SOURCES = { app: "connected application", device: "device", script: "script token" };

async function loadConnections() {
  const rows = await orSignIn(api("/auth/tokens"));
  const body = byId("connections").querySelector("tbody");
  if (rows.length === 0) {
    body.replaceChildren(h("tr", {}, h("td", { colspan: 7, class: "hint" }, "No connections.")));
    return;
  }
  body.replaceChildren(
    ...rows.map((row) => {
      const actions = h("td", { class: "row-actions" });
      const revoke = h("button", { type: "button", class: "secondary" }, "Revoke");
      revoke.addEventListener("click", () =>
        confirmInPlace(actions, "Revoke access?", () => revokeConnection(row)),
      );
      actions.append(revoke);
      return h("tr", { "data-id": row.id },
        h("td", { "data-label": "Application" }, h("span", {}, row.client_name)),
        h("td", { "data-label": "Kind", class: "source" }, SOURCES[row.source] ?? (row.kind === "refresh" ? SOURCES.app : SOURCES.script)),
        h("td", { "data-label": "Label" }, h("span", {}, row.label || "—")),
        h("td", { "data-label": "Connected" }, formatWhen(row.created_at)),
        h("td", { "data-label": "Last used" }, formatWhen(row.last_used_at)),
        h("td", { "data-label": "Expires" }, formatWhen(row.expires_at)),
        actions);
    }),
  );
}

async function revokeConnection(row) {
  say(connectionMessage, "");
  let outcome = [`Revoked ${row.client_name} (${row.label}).`, "info"];
  try {
    await orSignIn(api(`/auth/tokens/${encodeURIComponent(row.id)}`, { method: "DELETE" }));
  } catch (err) {
    outcome = [err instanceof ApiError && err.status === 404
      ? "That connection had already ended."
      : err.message];
  }
  await loadConnections();
  say(connectionMessage, ...outcome);
}

byId("password-form").addEventListener("submit", (event) => {
  event.preventDefault();
  say(passwordMessage, "");
  const current = byId("current-password").value;
  const fresh = byId("new-password").value;
  if (fresh.length < 8) return say(passwordMessage, "The new password needs at least 8 characters.");
  if (fresh !== byId("repeat-password").value) {
    return say(passwordMessage, "The two new passwords differ.");
  }
  busy(byId("password-submit"), async () => {
    try {
      await api("/auth/password", { method: "POST", json: { current_password: current, new_password: fresh } });
    } catch (err) {
      say(passwordMessage, err.message);
      return;
    }
    say(passwordMessage, "Password changed. You were signed out everywhere; sign in again with the new password.", "info");
    setTimeout(() => window.location.assign("/signin"), 2500);
  });
});

async function main() {
  const me = await requireSession();
  renderNav("security", me.email);
  await Promise.all([loadPasskeys(), loadConnections()]);
  document.body.dataset.ready = "true";
}

main().catch((err) => say(connectionMessage, err.message));
