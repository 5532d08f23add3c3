// Sign-in: password (half-session), then the passkey ceremony; first-time users
// enrol their first passkey, which completes the sign-in.
import { api, ApiError } from "../api.js";
import { busy, byId, say } from "../dom.js";
import { safeNext } from "../paths.js";
import { ceremonyMessage, enrolPasskey, passkeysSupported, signInWithPasskey } from "../webauthn.js";

const message = byId("message");
const loginForm = byId("login");
const loginButton = byId("login-submit");
const next = safeNext(new URLSearchParams(window.location.search).get("next") ?? "/", window.location.origin);

function done() {
  sessionStorage.removeItem("device-failures"); // a new session has a fresh attempt budget
  window.location.assign(next);
}

function waitText(seconds) {
  if (seconds >= 120) return `${Math.ceil(seconds / 60)} minutes`;
  return seconds === 1 ? "1 second" : `${seconds} seconds`;
}

let countdown = null;
let locked = false; // while throttled, the button stays off even after the request ends
function throttled(seconds) {
  locked = true;
  clearInterval(countdown);
  let left = seconds;
  const show = () =>
    say(message, `Too many failed sign-in attempts. Wait ${waitText(left)}, then try again.`);
  loginButton.disabled = true;
  show();
  countdown = setInterval(() => {
    left -= 1;
    if (left <= 0) {
      clearInterval(countdown);
      locked = false;
      loginButton.disabled = false;
      say(message, "You can try again now.", "info");
    } else {
      show();
    }
  }, 1000);
}

function showStep(id) {
  loginForm.hidden = true;
  for (const step of ["passkey-step", "enrol-step"]) byId(step).hidden = step !== id;
}

async function ceremony(button, run) {
  say(message, "");
  await busy(button, async () => {
    try {
      await run();
      done();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        // The half-session lasts 10 minutes: start again from the password.
        loginForm.hidden = false;
        byId("passkey-step").hidden = byId("enrol-step").hidden = true;
        say(message, "The sign-in took too long. Enter your password again.");
      } else if (err instanceof ApiError) {
        say(message, `The passkey was not accepted: ${err.message}`);
      } else if (run === signInWithPasskey && err && err.name === "NotAllowedError") {
        say(message, `${ceremonyMessage(err)} If this device holds no passkey for your account, sign in on one that does.`);
      } else {
        say(message, ceremonyMessage(err));
      }
    }
  });
}

loginForm.addEventListener("submit", (event) => {
  event.preventDefault();
  say(message, "");
  loginButton.disabled = true;
  (async () => {
    let result;
    try {
      result = await api("/auth/login", {
        method: "POST",
        json: { email: byId("email").value.trim(), password: byId("password").value },
      });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        say(message, "Wrong email or password.");
      } else if (err instanceof ApiError && err.status === 429) {
        byId("password").value = "";
        if (err.retryAfter) throttled(err.retryAfter);
        else say(message, `Too many failed sign-in attempts. ${err.message}`);
      } else {
        say(message, err.message);
      }
      return;
    }
    byId("password").value = "";
    if (!passkeysSupported()) {
      say(message, "This browser cannot use passkeys, which every sign-in needs. Use a current browser.");
      return;
    }
    if (result.has_passkeys) {
      showStep("passkey-step");
      await ceremony(byId("passkey-signin"), signInWithPasskey);
    } else {
      showStep("enrol-step");
      byId("passkey-name").focus();
    }
  })()
    .catch((err) => say(message, err.message))
    .finally(() => {
      loginButton.disabled = locked;
    });
});

byId("passkey-signin").addEventListener("click", (event) =>
  ceremony(event.currentTarget, signInWithPasskey),
);
byId("enrol-passkey").addEventListener("click", (event) =>
  ceremony(event.currentTarget, () => enrolPasskey(byId("passkey-name").value.trim())),
);

// The form's button is disabled in the page until this script has taken over the
// submit: a click or Enter before then would send the form natively, the password in
// the address (docs/web.md, "Sign-in").
loginButton.disabled = false;
document.body.dataset.ready = "true";

// Already fully signed in (e.g. sent here from a bookmark): go straight on.
api("/auth/me").then(
  (me) => {
    if (me && me.mfa_complete) window.location.replace(next);
  },
  () => {},
);
