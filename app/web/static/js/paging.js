// Cursor paging and the search filters of the transaction list and the register
// (docs/ledger.md "Listing, filters and paging"): pure state, tested under node (tests/js/paging.test.mjs).
import { AmountError, parseDollars } from "./money.js";

export const PAGE_SIZE = 50;

export class FilterError extends Error {
  constructor(message, field) {
    super(message);
    this.name = "FilterError";
    this.field = field; // which form field to mark: "min", "max", "from", "to"
  }
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

// Form text → the API's query ({q, account_id, min_cents, max_cents, from, to}),
// empty fields left out. Amount bounds are typed like amounts (parseDollars), and
// "0" is a valid lower bound.
export function searchQuery({ q = "", accountId = "", min = "", max = "", from = "", to = "" } = {}) {
  const query = {};
  if (q.trim()) query.q = q.trim();
  if (String(accountId).trim()) query.account_id = String(Number(accountId));
  const bound = (text, field) => {
    const raw = text.trim();
    if (!raw) return null;
    if (/^[$£€¥]?\s*0*(?:\.0{1,2})?$/u.test(raw) && /0/.test(raw)) return 0;
    try {
      return parseDollars(raw);
    } catch (err) {
      if (err instanceof AmountError) {
        throw new FilterError(`${field === "min" ? "Smallest" : "Largest"} amount: ${err.message}`, field);
      }
      throw err;
    }
  };
  const lo = bound(min, "min");
  const hi = bound(max, "max");
  if (lo !== null) query.min_cents = String(lo);
  if (hi !== null) query.max_cents = String(hi);
  if (lo !== null && hi !== null && lo > hi) {
    throw new FilterError("The smallest amount is larger than the largest.", "min");
  }
  for (const [key, value] of [["from", from], ["to", to]]) {
    if (!value) continue;
    if (!DAY.test(value)) throw new FilterError("Choose a full date.", key);
    query[key] = value;
  }
  if (query.from && query.to && query.from > query.to) {
    throw new FilterError("The start date is after the end date.", "from");
  }
  return query;
}

// A list that loads page after page: {items, cursor, done, query}.
export function startList(query) {
  return { query, items: [], cursor: null, done: false, loaded: 0 };
}

// The request for the next page of `list`, or null when it has all pages.
export function nextRequest(list, limit = PAGE_SIZE) {
  if (list.done) return null;
  const query = { ...list.query, limit: String(limit) };
  if (list.cursor) query.cursor = list.cursor;
  return query;
}

// A page ({items, next_cursor}) answered for nextRequest(list) → the new list.
// Items already shown (same `key`) are not shown twice.
export function addPage(list, page, key = (item) => item.id) {
  const seen = new Set(list.items.map(key));
  const fresh = page.items.filter((item) => {
    const k = key(item);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  return {
    ...list,
    items: [...list.items, ...fresh],
    cursor: page.next_cursor ?? null,
    done: page.next_cursor === null || page.next_cursor === undefined,
    loaded: list.loaded + 1,
  };
}
