// Search filters → query, and the cursor paging state (static/js/paging.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { addPage, FilterError, nextRequest, searchQuery, startList } from "../../app/web/static/js/paging.js";

test("empty fields are left out of the query", () => {
  assert.deepEqual(searchQuery({}), {});
  assert.deepEqual(searchQuery({ q: "  ", accountId: "", min: " ", max: "" }), {});
});

test("text, account, amounts in cents and dates", () => {
  assert.deepEqual(
    searchQuery({ q: " Coffee ", accountId: "7", min: "$1,234.5", max: "2000", from: "2026-01-01", to: "2026-12-31" }),
    { q: "Coffee", account_id: "7", min_cents: "123450", max_cents: "200000", from: "2026-01-01", to: "2026-12-31" },
  );
  assert.deepEqual(searchQuery({ min: "0" }), { min_cents: "0" });
  assert.deepEqual(searchQuery({ min: "0.00", max: "0.07" }), { min_cents: "0", max_cents: "7" });
});

test("refused bounds name their field and are never rounded", () => {
  for (const [fields, field, pattern] of [
    [{ max: "4.505" }, "max", /Largest amount: .*two decimal places/],
    [{ min: "-5" }, "min", /Smallest amount: .*without a sign/],
    [{ min: "1,23" }, "min", /Commas/],
    [{ min: "10", max: "9.99" }, "min", /smallest amount is larger/],
    [{ from: "2026-02-01", to: "2026-01-31" }, "from", /start date is after/],
    [{ to: "2026-1-5" }, "to", /full date/],
  ]) {
    assert.throws(() => searchQuery(fields), (err) => err instanceof FilterError && err.field === field && pattern.test(err.message));
  }
});

test("pages follow next_cursor until it is null, never showing an item twice", () => {
  let list = startList({ q: "x" });
  assert.deepEqual(nextRequest(list), { q: "x", limit: "50" });
  list = addPage(list, { items: [{ id: 9 }, { id: 8 }], next_cursor: "c1" });
  assert.deepEqual(nextRequest(list, 2), { q: "x", limit: "2", cursor: "c1" });
  assert.equal(list.done, false);
  list = addPage(list, { items: [{ id: 8 }, { id: 7 }], next_cursor: null });
  assert.deepEqual(list.items.map((i) => i.id), [9, 8, 7]);
  assert.equal(list.done, true);
  assert.equal(nextRequest(list), null);
  assert.equal(list.loaded, 2);
  const entries = addPage(startList({}), { items: [{ entry_id: 1 }, { entry_id: 1 }], next_cursor: null }, (i) => i.entry_id);
  assert.equal(entries.items.length, 1);
});
