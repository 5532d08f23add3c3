// Small pure helpers shared by the pages (and unit-tested with node).

// Where to go after signing in: only a path on this same origin, never another
// site (an open redirect would let a link bounce a fresh session anywhere).
// The check runs on the FINAL string that will be navigated to, after the URL
// parser's normalisation: "/.//evil.example" or "/%2e//evil.example" become the
// path "//evil.example", which a browser reads as another host.
export function safeNext(next, origin) {
  if (typeof next !== "string" || !isSinglySlashedPath(next)) return "/";
  // Backslashes read as slashes and control characters (tab, newline, …) are
  // silently dropped by URL parsing: neither belongs in a link we made.
  if (/[\\\u0000-\u001f\u007f]/.test(next)) return "/";
  let url;
  try {
    url = new URL(next, origin);
  } catch {
    return "/";
  }
  if (url.origin !== origin) return "/";
  const target = url.pathname + url.search;
  if (!isSinglySlashedPath(target)) return "/";
  // What the browser will do with `target` itself: same origin, same place.
  let again;
  try {
    again = new URL(target, origin);
  } catch {
    return "/";
  }
  if (again.origin !== origin || again.pathname + again.search !== target) return "/";
  return target;
}

// A path with exactly one leading slash: "/" or "/x…", never "//…" or "/\\…"
// (both protocol-relative: another host).
function isSinglySlashedPath(text) {
  return text.startsWith("/") && text[1] !== "/" && text[1] !== "\\";
}

// The sign-in page for coming back to `here` (a path with its query) afterwards.
export function signInPath(here) {
  return "/signin?next=" + encodeURIComponent(here);
}

// A device user code as people type it → XXXX-XXXX, the way the API normalises
// it (docs/oauth.md "Device authorization grant"): keep letters and digits, upper-case, dash after four of eight.
export function normaliseUserCode(text) {
  const kept = String(text ?? "").replace(/[^0-9A-Za-z]/g, "").toUpperCase();
  return kept.length === 8 ? `${kept.slice(0, 4)}-${kept.slice(4)}` : kept;
}

// The host of a client id that is the https URL of a client ID metadata document
// (docs/oauth.md "Client ID metadata documents": https, a path beyond "/"), else null. The pages show it: the
// document's name is self-asserted, its host is the one thing the URL proves.
export function documentHost(clientId) {
  if (typeof clientId !== "string" || !clientId.startsWith("https://")) return null;
  let url;
  try {
    url = new URL(clientId);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" || url.pathname === "/" || url.pathname === "") return null;
  return url.host;
}
