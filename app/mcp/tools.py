"""The six tools an assistant may call, shaped like the MCP SDK's tool manager:
TOOLS maps a name to {title, description, inputSchema, annotations, fn}.

Each fn is the tool twin of one HTTP handler: the same validate.* parsers on the
arguments and the same services call, so both interfaces give identical figures
and identical rejections (an assistant is refused exactly as
an HTTP client is, docs/mcp.md "The six tools"). No query is written here.
fn(arguments, principal) returns plain JSON data; the JSON-RPC layer commits.
A tool's unit of work has the intent its annotations declare (writes()): a tool
marked readOnlyHint reads, on SQLite without a write transaction or the writer lock.
"""

from __future__ import annotations

from ..services.ledger import (
    accounts,
    budget_actuals,
    comparisons,
    idempotency,
    lookalikes,
    reports,
    transactions,
    validate,
)
from ..services.ledger import listing as tx_listing

# Told to the model in every report tool: figures leave reports.py already signed for reading.
_SIGNS = (
    "Amounts are integer cents (1234 means 12.34). Figures are already sign-adjusted for "
    "reading: asset and expense balances are the raw sum of their entries; liability, equity "
    "and income balances are negated, so normal balances show as positive numbers. Present "
    "them exactly as given; never flip a sign again."
)

_DATE = {
    "type": "string",
    "format": "date",
    "pattern": r"^\d{4}-\d{2}-\d{2}$",
}


def _date(text: str) -> dict:
    return {**_DATE, "description": text}


def _window_schema(required: bool) -> dict:
    schema = {
        "type": "object",
        "properties": {
            "from": _date("First day of the window, inclusive (YYYY-MM-DD)."),
            "to": _date("Last day of the window, inclusive (YYYY-MM-DD); not before 'from'."),
        },
        "additionalProperties": False,
    }
    if required:
        schema["required"] = ["from", "to"]
    return schema


# Told to the model in income_statement: how to ask "are we over budget?".
_BUDGET = (
    'To compare with a budget (plan against actual), pass budget: "approved" for the '
    "approved budget covering the window (no id needed), or a budget's id. Then 'from' must "
    "be the first day of a month and 'to' the last day of a month inside that budget's "
    "twelve months; every line also carries budget_cents (the plan for the window) and "
    "variance_cents (positive is better than plan: income above it, spending below it), and "
    "the result carries budget {id, name}, total_income_budget_cents, "
    "total_expenses_budget_cents and net_budget_cents."
)


def _statement_schema() -> dict:
    schema = _window_schema(required=True)
    schema["properties"]["budget"] = {
        "type": ["string", "integer"],
        "description": 'Optional: "approved" (the approved budget covering the window) or '
        "a budget's id, to add budget and variance figures.",
    }
    schema["properties"]["compare"] = _compare(["previous", "previous_year"])
    return schema


# Told to the model in income_statement and balance_sheet: how to ask "and last year?".
_COMPARE_STATEMENT = (
    'To see an earlier period beside this one, pass compare: "previous" (the window of the '
    "same number of days that ends the day before 'from') or \"previous_year\" (the same "
    "dates a year earlier, 29 February read as 28 February); every line then also carries "
    "previous_cents and the result previous {from, to, total_income_cents, "
    "total_expenses_cents, net_cents}. It combines with budget."
)
_COMPARE_SHEET = (
    'To see last year beside it, pass compare: "previous_year" (the same date a year '
    "earlier, 29 February read as 28 February); every line then also carries previous_cents "
    "and the result previous {as_of, total_assets_cents, total_liabilities_cents, "
    "retained_cents, total_equity_cents}."
)


def _compare(choices: list[str]) -> dict:
    return {
        "type": "string",
        "enum": choices,
        "description": "Optional: add the earlier period's figures beside these.",
    }


def list_accounts(args: dict, principal) -> list[dict]:
    return accounts.list_accounts()


def account_balances(args: dict, principal) -> list[dict]:
    start, end = validate.window(args.get("from"), args.get("to"))
    return reports.balances(start, end)


def income_statement(args: dict, principal) -> dict:
    return comparisons.income_statement(
        args.get("compare"),
        args.get("from"),
        args.get("to"),
        lambda: budget_actuals.requested_income_statement(
            args.get("from"), args.get("to"), args.get("budget"), window=validate.required_window
        ),
    )


def balance_sheet(args: dict, principal) -> dict:
    as_of = validate.required_date("as_of", args.get("as_of"))
    return comparisons.balance_sheet(args.get("compare"), as_of)


def list_transactions(args: dict, principal) -> list[dict] | dict:
    result = tx_listing.listing(validate.listing_query(args))
    if isinstance(result, tx_listing.Page):
        return result.data()
    return result.rows()


def _listing_schema() -> dict:
    schema = _window_schema(required=False)
    schema["properties"].update(
        {
            "q": {
                "type": "string",
                "description": "Only transactions whose description contains this text "
                "(case-insensitive).",
            },
            "account_id": {
                "type": "integer",
                "description": "Only transactions with an entry in this account.",
            },
            "min_cents": {
                "type": "integer",
                "description": "Only transactions whose amount (the sum of their positive "
                "entries, in cents) is at least this.",
            },
            "max_cents": {
                "type": "integer",
                "description": "Only transactions whose amount is at most this.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": validate.PAGE_MAX,
                "description": "Page size. With it the result is {items, next_cursor}; "
                "without it every matching transaction comes as one list.",
            },
            "cursor": {
                "type": "string",
                "description": "The next_cursor of the previous page (same filters, with limit).",
            },
        }
    )
    return schema


def record_transaction(args: dict, principal) -> dict:
    key = idempotency.check_key(idempotency.ARGUMENT, args.get(idempotency.ARGUMENT))
    request = {k: v for k, v in args.items() if k != idempotency.ARGUMENT}
    answer = idempotency.once(
        principal.user_id,
        key,
        "tools/call record_transaction",
        request,
        200,
        _record,
        args,
        principal,
    )
    return answer.data


def _record(args: dict, principal) -> dict:
    tx_id = transactions.record_transaction(
        args.get("occurred_on"),
        args.get("description"),
        args.get("entries"),
        created_by=principal.user_id,
        replaces=args.get("replaces"),
    )
    # Valid by now: record_transaction parsed the same values.
    day = validate.date_value("occurred_on", args.get("occurred_on"))
    entries = validate.entries(args.get("entries"))
    replaced = transactions.parse_replaces(args.get("replaces"))
    result: dict = {
        "recorded": True,
        "id": tx_id,
        # The replaced transaction is deleted by now, so it is never listed.
        "possible_duplicates": lookalikes.look_alikes(day, entries, exclude_id=tx_id),
    }
    if replaced is not None:
        result["replaced"] = replaced
    return result


# Every tool carries annotations (docs/mcp.md "The six tools"): the five readers are read-only, and
# jsonrpc runs them without a write transaction (writes() below).
_READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}

RECORD_DESCRIPTION = (
    "Record one double-entry transaction in the ledger. Each entry is a signed amount in "
    "integer cents against one account: debit positive, credit negative. The entries must "
    "number at least 2 and sum to exactly 0; otherwise the call is refused and nothing is "
    "stored. Convert an amount a person typed to cents by string arithmetic, never floating "
    "point ($42.50 is 4250); more precision than one cent is an error, not something to round. "
    "Send exactly two entries, +cents and -cents:\n"
    "- money out (spending from a bank account on a cost): positive (+cents) on the expense "
    "account, negative (-cents) on the asset (bank) account;\n"
    "- money in (money received): positive (+cents) on the asset account, negative (-cents) "
    "on the income account;\n"
    "- transfer between two different accounts: positive on the destination, negative on "
    "the source.\n"
    "Example: paying $42.50 for groceries from Checking (id 1) into Groceries (id 7): "
    'entries [{"account_id": 7, "amount_cents": 4250}, {"account_id": 1, "amount_cents": -4250}]. '
    "Call list_accounts first for the account ids and kinds. Returns {recorded: true, id, "
    "possible_duplicates}: possible_duplicates lists the ids of other transactions within 3 "
    "days with exactly the same entries (newest first, at most 5); when it is not empty, tell "
    "the person, who may have recorded this already.\n"
    "Corrections: a transaction is never edited in place. To correct one (a wrong amount, "
    "date, account or description), record the whole corrected transaction with replaces = "
    "the id of the wrong one (list_transactions shows ids): the correction is stored and the "
    "original deleted in one step, both or neither, and the result adds replaced: <id>. It is "
    "refused (nothing stored) when that id does not exist, when either date is on or before "
    "the lock date, or when the original has an entry already reconciled with a bank "
    "statement and the correction changes the date or lacks an entry of that reconciled "
    "entry's account and amount (keeping them, the description and other entries may "
    "change, and the kept entry stays reconciled).\n"
    "Retries: send an idempotency_key (any new unique string, e.g. a UUID) with each new "
    "transaction. If a call times out or its answer is lost, retry with the SAME "
    "idempotency_key and the same arguments: the transaction is then recorded only once and "
    "you get the first answer again. Never reuse a key for a different transaction (that is "
    "refused). A date on or before the books' lock date is refused: tell the person."
)

TOOLS: dict[str, dict] = {
    "list_accounts": {
        "title": "List accounts",
        "description": (
            "Every account in the ledger with its id, name, kind (asset, liability, equity, "
            "income or expense) and archived flag, ordered by kind then name. Use the ids with "
            "record_transaction; an archived account takes no new entries."
        ),
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
        "annotations": _READ_ONLY,
        "fn": list_accounts,
    },
    "account_balances": {
        "title": "Account balances",
        "description": (
            "The balance of every account as {account, cents}, over an optional inclusive "
            "window (from, to); with neither it is the all-time balance. Accounts without "
            "activity show 0. " + _SIGNS
        ),
        "inputSchema": _window_schema(required=False),
        "annotations": _READ_ONLY,
        "fn": account_balances,
    },
    "income_statement": {
        "title": "Income statement",
        "description": (
            "Income and expenses over the inclusive window from..to (both required; 'to' may "
            "not be before 'from'): lines per account, total_income_cents, "
            "total_expenses_cents and net_cents = income minus expenses (positive is a "
            "surplus). " + _SIGNS + " " + _BUDGET + " " + _COMPARE_STATEMENT
        ),
        "inputSchema": _statement_schema(),
        "annotations": _READ_ONLY,
        "fn": income_statement,
    },
    "balance_sheet": {
        "title": "Balance sheet",
        "description": (
            "Snapshot of all activity up to and including as_of: assets, liabilities and "
            "equity lines with totals, and retained_cents (all-time income minus expenses, "
            "never closed into an equity account). total_assets_cents = "
            "total_liabilities_cents + total_equity_cents. " + _SIGNS + " " + _COMPARE_SHEET
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "as_of": _date("The snapshot date, inclusive (YYYY-MM-DD)."),
                "compare": _compare(["previous_year"]),
            },
            "required": ["as_of"],
            "additionalProperties": False,
        },
        "annotations": _READ_ONLY,
        "fn": balance_sheet,
    },
    "list_transactions": {
        "title": "List transactions",
        "description": (
            "Transactions with their entries, newest first, over an optional inclusive window "
            "(from, to), optionally filtered (all filters combine with AND): q (text in the "
            "description, case-insensitive), account_id, min_cents/max_cents (the amount: "
            "the sum of the positive entries). On a big ledger pass limit (1-500): the "
            "result is then {items, next_cursor}; call again with cursor=next_cursor and the "
            "same filters for the next page, until next_cursor is null; each item then "
            "carries document_count (receipts attached; 0: no voucher yet) and "
            "reconciled_account_ids (accounts whose entry a bank reconciliation fixed). "
            "Entry amounts are "
            "the raw signed cents as stored: debit positive, credit negative; each "
            "transaction's entries sum to 0."
        ),
        "inputSchema": _listing_schema(),
        "annotations": _READ_ONLY,
        "fn": list_transactions,
    },
    "record_transaction": {
        "title": "Record a transaction",
        "description": RECORD_DESCRIPTION,
        "inputSchema": {
            "type": "object",
            "properties": {
                "occurred_on": _date("The day the money moved (YYYY-MM-DD)."),
                "description": {
                    "type": "string",
                    "minLength": 1,
                    "description": "What the transaction was, e.g. 'Groceries at the market'.",
                },
                "entries": {
                    "type": "array",
                    "minItems": 2,
                    "description": "Signed entries, debit positive, credit negative, sum 0.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "account_id": {"type": "integer", "description": "An account id."},
                            "amount_cents": {
                                "type": "integer",
                                "description": "Signed integer cents: debit +, credit -.",
                            },
                        },
                        "required": ["account_id", "amount_cents"],
                        "additionalProperties": False,
                    },
                },
                "replaces": {
                    "type": "integer",
                    "minimum": 1,
                    "description": (
                        "Optional: the id of a transaction this one corrects. That "
                        "transaction is deleted in the same step; both happen or neither."
                    ),
                },
                "idempotency_key": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": idempotency.MAX_LENGTH,
                    "pattern": "^[ -~]+$",
                    "description": (
                        "Optional, 1 to 255 printable ASCII characters: a new unique key per "
                        "transaction; reuse the same key (and arguments) when you retry."
                    ),
                },
            },
            "required": ["occurred_on", "description", "entries"],
            "additionalProperties": False,
        },
        "annotations": {
            "readOnlyHint": False,
            "destructiveHint": False,
            "idempotentHint": False,
            "openWorldHint": False,
        },
        "fn": record_transaction,
    },
}


def writes(tool: dict) -> bool:
    """The tool's unit of work writes unless its annotations declare it read-only."""
    return not tool.get("annotations", {}).get("readOnlyHint", False)


def listing() -> list[dict]:
    """The tools/list entries: everything but the function."""
    return [
        {"name": name, **{k: v for k, v in tool.items() if k != "fn"}}
        for name, tool in TOOLS.items()
    ]
