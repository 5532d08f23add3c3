"""The audit trail: one hash-chained event per change to the books (issue 19).

Every service function that changes the books calls record() once per change, inside
the same unit of work (database transaction) as the change itself:

    audit.record(action, obj)

action and obj (the "changed object"; JSON-able: ints, strings, bools, None, lists,
dicts; dates as "YYYY-MM-DD" strings):

  transaction.posted    {"transaction": {id, occurred_on, description,
                          entries: [{id, account_id, amount_cents}, ...]}}; a correction
                          adds "replaces": id (and "kept_reconciled" / "kept_cleared":
                          [entry ids] when the original had reconciled / cleared
                          entries, with "kept_bank_refs": [{entry_id, bank_ref}]),
                          an adjustment "adjusts": id
  transaction.imported  same shape as transaction.posted (one event per imported txn)
  transaction.deleted   same shape: the whole transaction as it was, entries included
  account.created       {"account": {id, name, kind, archived}}
  account.renamed       {"account": {id, name, kind, archived}, "previous_name": str}
  account.archived      {"account": {id, name, kind, archived: true}}
  account.unarchived    {"account": {id, name, kind, archived: false}}
  entries.cleared       {"account_id": int, "entry_ids": [int, ...], "cleared": bool}
                          (from a statement's lines also "statement_id")
  entries.reconciled    {"account_id": int, "statement_date": str,
                          "closing_balance_cents": int, "entry_ids": [int, ...],
                          "reconciliation": {id, created_by, created_by_email, created_at}}
  books.locked          {"locked_through": str | None, "previous": str | None}
  settings.changed      {"settings": {"book_style": str}}
  books.currency_set    {"currency": str, "previous": str | None}
  budget.created        {"budget": {id, name, starts_on, approved_at, approved_by_email,
  budget.changed                    lines: [{account_id, months: [12 ints]}, ...]}}
  budget.approved       (after the change; budget.deleted: as it was)
  budget.deleted
  document.uploaded     {"document": {id, transaction_id, filename, content_type, size,
                          sha256}}  (services/ledger/documents.py)
  document.moved        the same, transaction_id the new one, plus
                          "previous_transaction_id": int | None
  document.deleted      the same: the document as it was
  statement.uploaded    {"statement": {id, account_id, format, bank_account, currency,
                          period_from, period_to, opening_balance_cents,
                          closing_balance_cents, closing_balance_on, sha256, created_at,
                          size, lines (how many)}, "lines": [every line as stored]}
                          (services/banking/statements.py)
  statement.deleted     {"statement": {...}}: the statement as it was
  statement_line.posted {"line": {statement_id, line_id, booked_on, amount_cents, payee,
  statement_line.matched        memo, bank_ref, status, transaction_id}, "entry_id": int}
  statement_line.ignored  (the line afterwards; ignored: no entry_id;
                          services/banking/trail.py)
  statement_line.undone {"line": {... status "new"}, "undone": {status,
                          transaction_id, entry_id}}: what was undone
  rule.created          {"rule": {id, name, priority, account_id, conditions,
  rule.changed                    counter_account_id, description, active}}
  rule.deleted          (after the change; rule.deleted: as it was)
  schedule.created      {"schedule": {id, name, account_id, counter_account_id,
  schedule.changed        amount_cents, rrule, starts_on, weekend, match_text,
  schedule.deleted        tolerance_cents, window_days, mode, post_from, active}}
                          (after the change; schedule.deleted: as it was;
                          services/ledger/schedules.py)
  occurrence.met        {"occurrence": {schedule_id, occurs_on, status, transaction_id}}
  occurrence.matched      (the occurrence afterwards: met by a new transaction, matched
  occurrence.skipped      by a person, skipped, reopened (status "open");
  occurrence.reopened     services/ledger/schedule_occurrences.py). A schedule's
                          posting is a transaction.posted event with "schedule":
                          {id, occurs_on}.

Who, how (via) and which OAuth client are NOT passed: record() reads them from the
context (Actor, in actor.py), set once per request by the HTTP layer (routes/support.py:
`web` for a cookie session, `api` for a bearer token), per tool call by the MCP layer
(`mcp`), and overridden by the importer (`import`). Anything that sets nothing (the
CLI, a migration) records `cli` with no user and no client.

The event (docs/ledger.md "What an event says"): {seq, at, action, user_email, via, client_id,
client_name, object} and hash = sha256_hex(previous hash + canonical JSON of the
event without hash), 64 zeros before the first. Stored columns hold exactly what was
hashed (object as canonical JSON text, at in whole seconds), so a served event
re-hashes to its stored hash. seq has no gaps: whoever appends locks the one
audit_head row. On SQLite the change appends its event itself (the writer lock admits
one writer at a time); on PostgreSQL the change writes it as pending and it is sealed
into the chain right after the commit, so concurrent changes do not queue on the
head (see writing.py). Either way an event's place follows the order of the
changes: one that depends on another starts after it committed and comes later.
Cost per event: one statement in the caller's transaction, and on PostgreSQL one
seal after the commit.

actor     Actor, set_actor, actor_for, acting: who changes the books, and how
hashing   the hash rule: canonical JSON, event_text, chain, GENESIS
objects   ACTIONS, VIAS and the objects events carry (transaction_object)
writing   record() one event per change (record_many: several in one statement),
          pending/seal on PostgreSQL, seal_here (restore)
reading   GET /audit (page, served, parse_action) and GET /audit/head (head)

This package re-exports what callers use: `audit.record(...)`, `audit.seal()`.
"""

from .actor import Actor, acting, actor_for, current_actor, set_actor
from .hashing import GENESIS, canonical, chain, event_text
from .objects import ACTIONS, VIAS, transaction_object, transaction_object_parts
from .reading import (
    EVENT_COLUMNS,
    head,
    page,
    parse_action,
    served,
)
from .writing import (
    PG_PENDING_FROM_OBJ,
    SEAL_EVERY,
    event_parts,
    pending,
    pending_texts,
    record,
    record_many,
    seal,
    seal_here,
    sql_event_params,
)

__all__ = [
    "ACTIONS",
    "EVENT_COLUMNS",
    "GENESIS",
    "PG_PENDING_FROM_OBJ",
    "SEAL_EVERY",
    "VIAS",
    "Actor",
    "acting",
    "actor_for",
    "canonical",
    "chain",
    "current_actor",
    "event_parts",
    "event_text",
    "head",
    "page",
    "parse_action",
    "pending",
    "pending_texts",
    "record",
    "record_many",
    "seal",
    "seal_here",
    "served",
    "set_actor",
    "sql_event_params",
    "transaction_object",
    "transaction_object_parts",
]
