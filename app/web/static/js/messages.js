// What a person reads when the API refuses something: the API's own sentence
// when it is one, never raw server output (an HTML error page, a stack trace,
// JSON, an empty list "[]"). Pure, so tests/js checks it under node.

const FALLBACK = {
  0: "The server could not be reached. Check the connection and try again.",
  401: "You are signed out. Sign in again to continue.",
  403: "This action is not allowed here.",
  404: "That item no longer exists. It may have been deleted elsewhere; reload to see the current state.",
  409: "That change conflicts with the current state of the books. Nothing was changed.",
  413: "That is too much at once. Nothing was changed; try a smaller amount.",
  429: "Too many attempts. Wait a moment, then try again.",
};

// A sentence is at most 300 characters of text: no markup, no JSON, no code.
function isSentence(text) {
  if (typeof text !== "string") return false;
  const trimmed = text.trim();
  if (trimmed.length === 0 || trimmed.length > 300) return false;
  if (/^[\s[\]{}()"'`:;,.\-_]*$/.test(trimmed)) return false; // "[]", "{}", "-"
  if (/^[[{]/.test(trimmed) || /<\/?[a-z!][^>]*>/i.test(trimmed)) return false; // JSON, HTML
  if (/Traceback|\bat [\w.$]+ \(|(?:^|\s)(?:SELECT|INSERT|UPDATE|DELETE)\s/.test(trimmed)) return false;
  return true;
}

// "name must not be empty" → "Name must not be empty."
export function sentence(text) {
  const trimmed = text.trim();
  const first = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?)]$/.test(first) ? first : `${first}.`;
}

// (status, parsed body or null) → one readable sentence, never empty.
export function readableError(status, body) {
  const candidates = body && typeof body === "object" && !Array.isArray(body)
    ? [body.error_description, body.error]
    : [];
  // OAuth codes ("invalid_grant") are identifiers, not sentences.
  const text = candidates.find((c) => isSentence(c) && !/^[a-z]+(?:_[a-z]+)+$/.test(c.trim()));
  if (text) return sentence(text);
  if (FALLBACK[status]) return FALLBACK[status];
  if (status >= 500) return `The server had a problem (${status}). Nothing was changed; try again in a moment.`;
  return `The server refused the request (${status}). Nothing was changed.`;
}
