// clientLabel: History names a third-party client with its id or its document's host
// beside its self-chosen name (run: node --test tests/js/).
import assert from "node:assert/strict";
import { test } from "node:test";

import { clientLabel } from "../../app/web/static/js/clients.js";

test("first-party clients are shown by name", () => {
  assert.equal(clientLabel("svc-cli", "Ledger command line"), "Ledger command line");
  assert.equal(clientLabel("svc-desktop", "Ledger desktop"), "Ledger desktop");
});

test("a registered client shows its id beside its name", () => {
  const id = "dyn_0123456789abcdef0123456789abcdef";
  assert.equal(clientLabel(id, "Ledger command line copy"), `Ledger command line copy (${id})`);
});

test("a metadata document client shows the document's host beside its name", () => {
  assert.equal(
    clientLabel("https://assistant.example:8443/clients/a.json", "Assistant"),
    "Assistant (assistant.example:8443)",
  );
  assert.equal(clientLabel("https://app.example/c.json", null), "https://app.example/c.json (app.example)");
});

test("no client: nothing to show", () => {
  assert.equal(clientLabel(null, null), null);
  assert.equal(clientLabel(undefined, undefined), null);
});
