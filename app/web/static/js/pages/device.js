// Device flow: the human types the code a device shows, sees which client asks,
// and approves or denies. Every failed lookup or decision spends one of the
// session's 10 attempts (docs/oauth.md "Device authorization grant"); at 10 the API answers 429 until a new sign-in.
import { api, ApiError, orSignIn } from "../api.js";
import { busy, byId, say } from "../dom.js";
import { renderNav } from "../nav.js";
import { documentHost, normaliseUserCode } from "../paths.js";

const BUDGET = 10;
const message = byId("message");
const attempts = byId("attempts");
const input = byId("user-code");
let current = null; // the code being decided
let spent = false; // the API refused with 429: no more lookups in this session

// Failures seen by this tab since sign-in; the server's count is authoritative
// (429), this only tells people plainly how much is left.
const failures = () => Number(sessionStorage.getItem("device-failures") ?? "0");
function spendAttempt() {
  sessionStorage.setItem("device-failures", String(failures() + 1));
  showBudget();
}
function showBudget() {
  const left = Math.max(BUDGET - failures(), 0);
  attempts.textContent = failures() === 0
    ? `Each wrong or expired code uses one of ${BUDGET} attempts for this sign-in.`
    : `${left} of ${BUDGET} attempts left for this sign-in.`;
  attempts.className = left <= 3 ? "hint warning-text" : "hint";
}
function exhausted() {
  spent = true;
  sessionStorage.setItem("device-failures", String(BUDGET));
  showBudget();
  byId("device-request").hidden = true;
  say(message, "All 10 attempts for this sign-in are used up, so no more codes can be checked. Sign out and sign in again to try more codes.");
}

function failure(err) {
  if (err instanceof ApiError && err.status === 429) return exhausted();
  if (err instanceof ApiError && err.code === "invalid_grant") {
    spendAttempt();
    return say(message, "No pending request matches that code: it may be mistyped, already used or expired. Check the code on the device.");
  }
  say(message, err.message);
}

async function lookUp(code) {
  say(message, "");
  byId("device-request").hidden = true;
  try {
    const info = await orSignIn(api("/oauth/device_info", { query: { user_code: code } }));
    current = code;
    byId("device-client-name").textContent = info.client.name;
    byId("device-first-use-warning").hidden = !(info.client.dynamic && info.client.first_use);
    showDocumentHost(documentHost(info.client.id), info.client.name);
    byId("device-code-shown").textContent = code;
    const minutes = Math.max(Math.ceil(info.expires_in / 60), 1);
    byId("device-expires").textContent = minutes === 1 ? "about a minute" : `${minutes} minutes`;
    byId("device-request").hidden = false;
  } catch (err) {
    failure(err);
  }
}

// A client named by the URL of its metadata document: show the host (what the id
// proves) beside the name (what that host claims). Reset for every lookup.
function showDocumentHost(host, name) {
  byId("device-client-origin").hidden = !host;
  byId("device-client-host").textContent = host ?? "";
  byId("device-client-claimed-name").textContent = host ? name : "";
  byId("device-first-use-lead").textContent = host
    ? `This application is described by a document on ${host} and has never been approved before.`
    : "This application registered itself and has never been approved before.";
  byId("device-first-use-detail").textContent = host
    ? `Its name is whatever ${host} chooses to say and proves nothing else.`
    : "Its name proves nothing.";
}

async function decide(approve) {
  say(message, "");
  try {
    await orSignIn(api("/oauth/device/approve", { method: "POST", json: { user_code: current, approve } }));
    byId("device-request").hidden = true;
    byId("code-form").hidden = true;
    say(message, approve
      ? "Approved. The device is connected; you can return to it now."
      : "Denied. The device was not given access.", "info");
  } catch (err) {
    failure(err);
  }
}

byId("code-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const code = normaliseUserCode(input.value);
  input.value = code;
  if (!/^[A-Z0-9]{4}-[A-Z0-9]{4}$/.test(code)) {
    say(message, "A code has 8 letters and digits, like WDJB-MJHT.");
    return;
  }
  busy(byId("lookup"), () => lookUp(code)).then(() => {
    byId("lookup").disabled = spent;
  });
});
byId("device-approve").addEventListener("click", (e) => busy(e.currentTarget, () => decide(true)));
byId("device-deny").addEventListener("click", (e) => busy(e.currentTarget, () => decide(false)));
// Disabled in the page until the submit above is ours (as on the sign-in page).
byId("lookup").disabled = false;

async function main() {
  const me = await orSignIn(api("/auth/me"));
  renderNav("", me.email);
  showBudget();
  const given = new URLSearchParams(window.location.search).get("user_code");
  if (given) {
    input.value = normaliseUserCode(given);
    byId("code-form").requestSubmit();
  }
}

main().catch((err) => say(message, err.message));
