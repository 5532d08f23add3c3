"""THE shared argument parsers. HTTP routes and MCP tools both call these, so both
return the same messages for the same bad input. Each raises BadRequest."""

from __future__ import annotations

import re
from datetime import date

from ...models import ACCOUNT_KINDS
from ..errors import BadRequest

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def date_value(key: str, value) -> date:
    """A required date in YYYY-MM-DD form."""
    if isinstance(value, str) and _DATE_RE.match(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise BadRequest(f"'{key}' must be a date like 2026-01-31 (YYYY-MM-DD)")


def optional_date(key: str, value) -> date | None:
    if value is None or value == "":
        return None
    return date_value(key, value)


def required_date(key: str, value) -> date:
    """A date that must be given (the balance_sheet tool's as_of)."""
    if value is None or value == "":
        raise BadRequest(f"'{key}' is required")
    return date_value(key, value)


def window(from_, to) -> tuple[date | None, date | None]:
    """An optional inclusive date window; `to` may not precede `from`."""
    start = optional_date("from", from_)
    end = optional_date("to", to)
    if start and end and end < start:
        raise BadRequest("'to' must not be before 'from'")
    return start, end


def required_window(from_, to) -> tuple[date, date]:
    if from_ is None or from_ == "":
        raise BadRequest("'from' is required")
    if to is None or to == "":
        raise BadRequest("'to' is required")
    start, end = window(from_, to)
    assert start is not None and end is not None  # both given, so both parsed
    return start, end


def integer(key: str, value) -> int:
    """A JSON integer (not a float, bool or string) within signed 64-bit range."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"'{key}' must be an integer")
    if not INT64_MIN <= value <= INT64_MAX:
        raise BadRequest(f"'{key}' is out of range for a 64-bit integer")
    return value


def text(key: str, value, *, max_length: int | None = None) -> str:
    """A required string, trimmed, non-empty."""
    if value is None:
        raise BadRequest(f"{key} is required")
    if not isinstance(value, str):
        raise BadRequest(f"'{key}' must be a string")
    value = value.strip()
    if not value:
        raise BadRequest(f"{key} is required")
    if max_length is not None and len(value) > max_length:
        raise BadRequest(f"'{key}' must be at most {max_length} characters")
    if "\x00" in value:
        raise BadRequest(f"'{key}' must not contain NUL characters")
    return value


def kind(value) -> str:
    if value not in ACCOUNT_KINDS:
        raise BadRequest("kind must be one of: " + ", ".join(ACCOUNT_KINDS))
    return value


def entries(value) -> list[tuple[int, int]]:
    """The entries of a posting: a list of {account_id, amount_cents} objects."""
    if value is None:
        raise BadRequest("entries is required")
    if not isinstance(value, list):
        raise BadRequest("'entries' must be an array of {account_id, amount_cents}")
    parsed = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise BadRequest(f"'entries[{i}]' must be an object with account_id and amount_cents")
        if "account_id" not in item:
            raise BadRequest(f"'entries[{i}].account_id' is required")
        if "amount_cents" not in item:
            raise BadRequest(f"'entries[{i}].amount_cents' is required")
        parsed.append(
            (
                integer(f"entries[{i}].account_id", item["account_id"]),
                integer(f"entries[{i}].amount_cents", item["amount_cents"]),
            )
        )
    return parsed
