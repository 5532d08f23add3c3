// safeNext: where the sign-in page goes afterwards (run: node --test tests/js/).
// Only a single-slash path on the web origin is followed; the check applies to
// the string actually navigated to, after the URL parser's normalisation.
import assert from "node:assert/strict";
import { test } from "node:test";

import { safeNext } from "../../app/web/static/js/paths.js";

const origin = "http://localhost:38080";

const kept = [
  ["/", "/"],
  ["/books?x=1", "/books?x=1"],
  ["/authorize?client_id=abc&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb&state=a%20b",
    "/authorize?client_id=abc&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb&state=a%20b"],
  ["/device?user_code=ABCD-EFGH", "/device?user_code=ABCD-EFGH"],
  ["/security", "/security"],
  ["/reports?from=2026-01-01&to=2026-12-31", "/reports?from=2026-01-01&to=2026-12-31"],
  // Dot segments that stay on a single-slash path are harmless and resolved.
  ["/./books", "/books"],
  ["/a/../books?x=1", "/books?x=1"],
  // Encoded slashes stay encoded: one path segment on this origin.
  ["/%2f%2fevil.example/x", "/%2f%2fevil.example/x"],
];

for (const [next, expected] of kept) {
  test(`safeNext keeps ${JSON.stringify(next)}`, () => {
    assert.equal(safeNext(next, origin), expected);
  });
}

const refused = [
  // Normalised into a protocol-relative "//host" only after parsing.
  "/.//evil.example/x",
  "/..//evil.example/x",
  "/./..//evil.example/x",
  "/a/..//evil.example/x",
  "/%2e//evil.example/x",
  "/%2E//evil.example/x",
  "/%2e%2e//evil.example/x",
  "/.%2e//evil.example/x",
  "/./\\evil.example/x",
  "/.\\/evil.example/x",
  "/..\\\\evil.example/x",
  // Characters the URL parser strips or reads as slashes.
  "/\t/evil.example/x",
  "/\n/evil.example/x",
  "/\r\n/evil.example/x",
  "/.\t//evil.example/x",
  "/\\evil.example",
  "/\\/evil.example",
  "\\/evil.example",
  " //evil.example",
  "\t//evil.example",
  // Plainly elsewhere.
  "//evil.example/x",
  "///evil.example/x",
  "https://evil.example/",
  "http:evil.example",
  "javascript:alert(1)",
  "data:text/html,hi",
  "evil.example",
  "device",
  "",
  null,
  undefined,
  42,
];

for (const next of refused) {
  test(`safeNext refuses ${JSON.stringify(next) ?? String(next)}`, () => {
    const got = safeNext(next, origin);
    assert.equal(got, "/", `${JSON.stringify(next)} → ${JSON.stringify(got)}`);
  });
}

test("whatever safeNext returns resolves to the web origin with one leading slash", () => {
  for (const next of [...kept.map(([n]) => n), ...refused]) {
    const got = safeNext(next, origin);
    assert.ok(got.startsWith("/") && got[1] !== "/" && got[1] !== "\\", JSON.stringify(got));
    assert.equal(new URL(got, origin).origin, origin, JSON.stringify(got));
  }
});

// documentHost: the host the consent and device pages show for a client whose id
// is the URL of its metadata document; null for every other id.
import { documentHost } from "../../app/web/static/js/paths.js";

const hosts = [
  ["https://app.example/client.json", "app.example"],
  ["https://App.Example:8443/a/b?c=d", "app.example:8443"],
  ["https://127.0.0.1:4443/c.json", "127.0.0.1:4443"],
  ["https://app.example/", null],
  ["https://app.example", null],
  ["http://app.example/client.json", null],
  ["svc-cli", null],
  ["dyn_0123abcd", null],
  ["https://", null],
  ["", null],
  [null, null],
  [42, null],
];

for (const [id, expected] of hosts) {
  test(`documentHost(${JSON.stringify(id)}) is ${JSON.stringify(expected)}`, () => {
    assert.equal(documentHost(id), expected);
  });
}
