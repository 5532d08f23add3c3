// Consent for an OAuth client: GET /oauth/authorize sends people here with the
// request's query; approval answers POST /oauth/authorize/approve with that same
// query plus `approve`, then follows the redirect the API returns.
import { api, ApiError, orSignIn } from "../api.js";
import { byId, say } from "../dom.js";
import { renderNav } from "../nav.js";
import { documentHost } from "../paths.js";

const message = byId("message");
const params = Object.fromEntries(new URLSearchParams(window.location.search));

async function decide(approve) {
  say(message, "");
  const buttons = [byId("approve"), byId("deny")];
  for (const b of buttons) b.disabled = true;
  try {
    const { redirect } = await orSignIn(
      api("/oauth/authorize/approve", { method: "POST", json: { ...params, approve } }),
    );
    // The API answers with the redirect URI of this request; check before leaving.
    if (!returnsTo(redirect, params.redirect_uri)) {
      throw new Error("The server returned an unexpected address; nothing was opened.");
    }
    say(message, approve ? "Approved. Returning to the application…" : "Denied. Returning to the application…", "info");
    window.location.assign(redirect); // the buttons stay off: one decision per request
  } catch (err) {
    say(message, err.message);
    for (const b of buttons) b.disabled = false;
  }
}

function returnsTo(redirect, redirectUri) {
  return typeof redirect === "string"
    && [`${redirectUri}?`, `${redirectUri}&`].some((prefix) => redirect.startsWith(prefix));
}

async function main() {
  if (!params.client_id || !params.redirect_uri) {
    say(message, "This page is opened by an application asking for access, and this link is incomplete. Start the connection again from the application.");
    return;
  }
  let client;
  try {
    client = await orSignIn(api("/oauth/client_info", { query: { client_id: params.client_id } }));
  } catch (err) {
    if (err instanceof ApiError && err.code === "invalid_client") {
      say(message, "No application with this id is registered. Start the connection again from the application.");
    } else {
      say(message, err.message);
    }
    return;
  }
  api("/auth/me").then((me) => renderNav("", me.email), () => renderNav("", ""));
  byId("client-name").textContent = client.name;
  byId("client-id").textContent = client.id;
  byId("client-redirect").textContent = params.redirect_uri;
  byId("first-use-warning").hidden = !(client.dynamic && client.first_use);
  // A client named by the URL of its metadata document: the host is what the id
  // proves, the name is only what that host claims.
  const host = documentHost(client.id);
  if (host) {
    byId("client-host").textContent = host;
    byId("client-claimed-name").textContent = client.name;
    byId("client-origin").hidden = false;
    byId("first-use-lead").textContent =
      `This application is described by a document on ${host} and has never been approved before.`;
    byId("first-use-detail").textContent =
      `Its name is whatever ${host} chooses to say and proves nothing else.`;
  }
  byId("consent").hidden = false;
  byId("approve").addEventListener("click", () => decide(true));
  byId("deny").addEventListener("click", () => decide(false));
}

main();
