// Small pure helpers shared by the pages (and unit-tested with node).

// Where to go after signing in: only a path on this same origin, never another
// site (an open redirect would let a link bounce a fresh session anywhere).
export function safeNext(next, origin) {
  if (typeof next !== "string" || !next.startsWith("/") || next.startsWith("//")) return "/";
  if (next.includes("\\")) return "/";
  let url;
  try {
    url = new URL(next, origin);
  } catch {
    return "/";
  }
  if (url.origin !== origin) return "/";
  return url.pathname + url.search;
}

// The sign-in page for coming back to `here` (a path with its query) afterwards.
export function signInPath(here) {
  return "/signin?next=" + encodeURIComponent(here);
}

// A device user code as people type it → XXXX-XXXX, the way the API normalises
// it (SPEC): keep letters and digits, upper-case, dash after four of eight.
export function normaliseUserCode(text) {
  const kept = String(text ?? "").replace(/[^0-9A-Za-z]/g, "").toUpperCase();
  return kept.length === 8 ? `${kept.slice(0, 4)}-${kept.slice(4)}` : kept;
}
