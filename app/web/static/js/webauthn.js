// Passkey ceremonies over the API's JSON options (docs/auth.md "Passkey ceremonies"): begin
// returns webauthn.options_to_json output, finish takes credential.toJSON().
// Browsers with the native JSON helpers use them; others get the same
// conversion done here (base64url <-> ArrayBuffer).
import { api } from "./api.js";

const toBuffer = (b64url) => {
  const b64 = b64url.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(b64url.length / 4) * 4, "=");
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
};
const toB64url = (buffer) =>
  btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const withIds = (list) => (list ?? []).map((c) => ({ ...c, id: toBuffer(c.id) }));

function creationOptions(json) {
  if (PublicKeyCredential.parseCreationOptionsFromJSON) {
    return PublicKeyCredential.parseCreationOptionsFromJSON(json);
  }
  return {
    ...json,
    challenge: toBuffer(json.challenge),
    user: { ...json.user, id: toBuffer(json.user.id) },
    excludeCredentials: withIds(json.excludeCredentials),
  };
}

function requestOptions(json) {
  if (PublicKeyCredential.parseRequestOptionsFromJSON) {
    return PublicKeyCredential.parseRequestOptionsFromJSON(json);
  }
  return { ...json, challenge: toBuffer(json.challenge), allowCredentials: withIds(json.allowCredentials) };
}

function credentialJSON(cred) {
  if (typeof cred.toJSON === "function") return cred.toJSON();
  const r = cred.response;
  const response = { clientDataJSON: toB64url(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = toB64url(r.attestationObject);
    response.transports = r.getTransports ? r.getTransports() : [];
  } else {
    response.authenticatorData = toB64url(r.authenticatorData);
    response.signature = toB64url(r.signature);
    if (r.userHandle) response.userHandle = toB64url(r.userHandle);
  }
  return {
    id: cred.id,
    rawId: toB64url(cred.rawId),
    type: cred.type,
    response,
    clientExtensionResults: cred.getClientExtensionResults(),
    authenticatorAttachment: cred.authenticatorAttachment ?? undefined,
  };
}

export function passkeysSupported() {
  return typeof window.PublicKeyCredential === "function" && !!navigator.credentials;
}

// Enrol a passkey for the signed-in (or first-time, half-signed-in) user.
export async function enrolPasskey(name) {
  const options = await api("/auth/webauthn/register/begin", { method: "POST" });
  const credential = await navigator.credentials.create({ publicKey: creationOptions(options) });
  const body = credentialJSON(credential);
  if (name) body.name = name;
  return api("/auth/webauthn/register/finish", { method: "POST", json: body });
}

// Complete sign-in with an enrolled passkey.
export async function signInWithPasskey() {
  const options = await api("/auth/webauthn/auth/begin", { method: "POST" });
  const credential = await navigator.credentials.get({ publicKey: requestOptions(options) });
  return api("/auth/webauthn/auth/finish", { method: "POST", json: credentialJSON(credential) });
}

// A browser-side ceremony failure → words for people (API errors keep their own).
export function ceremonyMessage(err) {
  switch (err && err.name) {
    case "NotAllowedError":
    case "AbortError":
      return "The passkey request was cancelled or timed out. Nothing was changed; try again when you are ready.";
    case "InvalidStateError":
      return "This device already holds a passkey for your account.";
    case "SecurityError":
      return "This browser refused the passkey for this site's address (it must be the configured WEB_ORIGIN).";
    case "NotSupportedError":
      return "This browser or device cannot create that kind of passkey.";
    default:
      return err && err.message ? err.message : "The passkey step failed.";
  }
}
