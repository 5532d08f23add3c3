"""The event vocabulary: the action names, the ways in (via), and the objects events
carry (one shape per kind, shared by every caller; see the package docstring)."""

from __future__ import annotations

from .hashing import json_string

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
    "books.currency_set",
    "budget.created",
    "budget.changed",
    "budget.approved",
    "budget.deleted",
    "document.uploaded",
    "document.moved",
    "document.deleted",
    "statement.uploaded",
    "statement.deleted",
    "statement_line.posted",
    "statement_line.matched",
    "statement_line.ignored",
    "statement_line.undone",
    "rule.created",
    "rule.changed",
    "rule.deleted",
    "schedule.created",
    "schedule.changed",
    "schedule.deleted",
    "occurrence.met",
    "occurrence.matched",
    "occurrence.skipped",
    "occurrence.reopened",
)
VIAS = ("web", "api", "mcp", "import", "cli")


def transaction_object(
    tx_id: int,
    occurred_on,
    description: str,
    entries,
    replaces: int | None = None,
    adjusts: int | None = None,
    schedule: dict | None = None,
) -> dict:
    """{"transaction": {id, occurred_on, description, entries: [{id, account_id,
    amount_cents}]}} from (entry_id, account_id, amount_cents) rows, ordered by entry id;
    a correction's posting adds "replaces": the id of the transaction it corrects, an
    adjustment's "adjusts": the id of the transaction it adjusts, a schedule's posting
    "schedule": {id, occurs_on}, the occurrence it was posted for."""
    obj: dict = {} if adjusts is None else {"adjusts": int(adjusts)}
    obj |= {} if replaces is None else {"replaces": int(replaces)}
    obj |= {} if schedule is None else {"schedule": schedule}
    return obj | {
        "transaction": {
            "id": int(tx_id),
            "occurred_on": _iso_day(occurred_on),
            "description": description,
            "entries": [
                {"id": int(e), "account_id": int(a), "amount_cents": int(c)}
                for e, a, c in sorted(entries)
            ],
        }
    }


def _iso_day(value) -> str:
    if isinstance(value, str):
        return value[:10]
    return value.isoformat()


def transaction_object_parts(
    occurred_on,
    description: str,
    replaces: int | None = None,
    adjusts: int | None = None,
    schedule: dict | None = None,
) -> tuple[str, str]:
    """transaction_object's canonical JSON around `<entries>],"id":<id>`: what the
    database fills in for the PostgreSQL fast path."""
    # Keys sorted: "adjusts", then "replaces", then "schedule", before "transaction".
    start = "{"
    if adjusts is not None:
        start += '"adjusts":' + str(int(adjusts)) + ","
    if replaces is not None:
        start += '"replaces":' + str(int(replaces)) + ","
    if schedule is not None:
        start += (
            '"schedule":{"id":'
            + str(int(schedule["id"]))
            + ',"occurs_on":'
            + json_string(schedule["occurs_on"])
            + "},"
        )
    return (
        start + '"transaction":{"description":' + json_string(description) + ',"entries":[',
        ',"occurred_on":' + json_string(_iso_day(occurred_on)) + "}}",
    )
