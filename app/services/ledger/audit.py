"""The audit trail: one hash-chained event per change to the books (issue 19).

INTERFACE SHARED BY SEVERAL BRANCHES (being built in parallel this session; the
body below is filled in by the audit-trail branch before anything lands).

Every service function that changes the books calls record() once per change, inside
the same unit of work (database transaction) as the change itself:

    audit.record(action, obj)

action and obj (the "changed object"; JSON-able: ints, strings, bools, None, lists,
dicts; dates as "YYYY-MM-DD" strings):

  transaction.posted    {"transaction": {id, occurred_on, description,
                          entries: [{id, account_id, amount_cents}, ...]}}
  transaction.imported  same shape as transaction.posted (one event per imported txn)
  transaction.deleted   same shape: the whole transaction as it was, entries included
  account.created       {"account": {id, name, kind, archived}}
  account.renamed       {"account": {id, name, kind, archived}, "previous_name": str}
  account.archived      {"account": {id, name, kind, archived: true}}
  account.unarchived    {"account": {id, name, kind, archived: false}}
  entries.cleared       {"account_id": int, "entry_ids": [int, ...], "cleared": bool}
  entries.reconciled    {"account_id": int, "statement_date": str,
                          "closing_balance_cents": int, "entry_ids": [int, ...]}
  books.locked          {"locked_through": str | None, "previous": str | None}
  settings.changed      {"settings": {"book_style": str}}

Who, how (via) and which OAuth client are NOT passed: record() reads them from the
request context (see actor below), set by the HTTP layer, the MCP layer and the CLI.
"""

from __future__ import annotations

ACTIONS = (
    "transaction.posted",
    "transaction.imported",
    "transaction.deleted",
    "account.created",
    "account.renamed",
    "account.archived",
    "account.unarchived",
    "entries.cleared",
    "entries.reconciled",
    "books.locked",
    "settings.changed",
)


def record(action: str, obj: dict) -> None:
    """Append one event for this change, in the caller's transaction."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
