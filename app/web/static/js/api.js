// The one way pages talk to the API: cross-origin fetch with the session cookie.
import { API_ORIGIN } from "/config.js";
import { readableError } from "./messages.js";
import { signInPath } from "./paths.js";

export class ApiError extends Error {
  constructor(status, body, headers) {
    // Only a readable sentence reaches the page (messages.js), never raw server text.
    super(readableError(status, body));
    this.name = "ApiError";
    this.status = status;
    this.body = body && typeof body === "object" ? body : null;
    this.code = this.body && typeof this.body.error === "string" ? this.body.error : undefined;
    const retry = headers ? Number.parseInt(headers.get("Retry-After") ?? "", 10) : NaN;
    this.retryAfter = Number.isFinite(retry) ? retry : null;
  }
}

// api("/accounts"), api("/transactions", {method: "POST", json: {...}}),
// api("/transactions", {query: {from, to}}). Resolves to the parsed body (null
// when empty); rejects with ApiError for any non-2xx answer or network failure.
/**
 * @param {string} path
 * @param {{method?: string, json?: unknown, form?: FormData, query?: Record<string, any>, raw?: boolean}} [options]
 * @returns {Promise<any>} the parsed body (a Response when `raw`)
 */
export async function api(path, { method = "GET", json, form, query, raw = false } = {}) {
  const url = new URL(API_ORIGIN + path);
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(key, value);
  }
  /** @type {RequestInit & {headers: Record<string, string>}} */
  const init = { method, credentials: "include", headers: {} };
  if (json !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(json);
  }
  if (form !== undefined) init.body = form; // multipart: the browser sets the type
  let response;
  try {
    response = await fetch(url, init);
  } catch {
    throw new ApiError(0, null);
  }
  if (raw && response.ok) return response; // a download: the caller reads the body
  const text = await response.text();
  let body = null;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = null; // not JSON (a proxy's HTML page, say): never shown as it is
    }
  }
  if (!response.ok) throw new ApiError(response.status, body, response.headers);
  return body;
}

// Go to the sign-in page and come back here afterwards.
export function goSignIn() {
  window.location.replace(signInPath(window.location.pathname + window.location.search));
  return new Promise(() => {}); // the page is going away: nothing after this runs
}

// The signed-in user ({email, mfa_complete, has_passkeys, auth}), or off to sign in.
export async function requireSession() {
  try {
    return await api("/auth/me");
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return goSignIn();
    throw err;
  }
}

// Run a page action; a 401 (session ended or expired) sends the person to sign in.
export async function orSignIn(promise) {
  try {
    return await promise;
  } catch (err) {
    if (err instanceof ApiError && err.status === 401 && !err.code?.startsWith("invalid_")) {
      return goSignIn();
    }
    throw err;
  }
}
