"""THE shared argument parsers. HTTP routes and MCP tools both call these, so both
return the same messages for the same bad input. Each raises BadRequestError; but
row_by_id, the row a path id names, raises NotFoundError. id_in_range and get_row: the
one bound on an INTEGER id column's ids (accounts, budgets, rules)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import overload

from ...extensions import db
from ...models import ACCOUNT_KINDS
from ..errors import BadRequestError, NotFoundError

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
ID_MAX = 2**31 - 1  # the largest id of an INTEGER id column (accounts, budgets, rules)
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# Books hold dates of years 1900 to 2200: a year typed as 0202 or 20260 is a typo,
# refused on every path (HTTP, MCP, import) by this one parser.
FIRST_YEAR = 1900
LAST_YEAR = 2200


def date_value(key: str, value) -> date:
    """A required date in YYYY-MM-DD form, in the years FIRST_YEAR to LAST_YEAR."""
    if isinstance(value, str) and _DATE_RE.match(value):
        try:
            day = date.fromisoformat(value)
        except ValueError:
            pass
        else:
            check_year(key, day)
            return day
    raise BadRequestError(f"'{key}' must be a date like 2026-01-31 (YYYY-MM-DD)")


def check_year(key: str, day: date) -> None:
    """The year rule alone, for parsers that read other date spellings (import files)."""
    if not FIRST_YEAR <= day.year <= LAST_YEAR:
        raise BadRequestError(
            f"'{key}' must be a date in the years {FIRST_YEAR} to {LAST_YEAR};"
            f" got {day.isoformat()}"
        )


def optional_date(key: str, value) -> date | None:
    if value is None or value == "":
        return None
    return date_value(key, value)


def required_date(key: str, value) -> date:
    """A date that must be given (the balance_sheet tool's as_of)."""
    if value is None or value == "":
        raise BadRequestError(f"'{key}' is required")
    return date_value(key, value)


def window(from_, to) -> tuple[date | None, date | None]:
    """An optional inclusive date window; `to` may not precede `from`."""
    start = optional_date("from", from_)
    end = optional_date("to", to)
    if start and end and end < start:
        raise BadRequestError("'to' must not be before 'from'")
    return start, end


def required_window(from_, to) -> tuple[date, date]:
    if from_ is None or from_ == "":
        raise BadRequestError("'from' is required")
    if to is None or to == "":
        raise BadRequestError("'to' is required")
    start, end = window(from_, to)
    assert start is not None and end is not None  # both given, so both parsed
    return start, end


def integer(key: str, value) -> int:
    """A JSON integer (not a float, bool or string) within signed 64-bit range."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequestError(f"'{key}' must be an integer")
    if not INT64_MIN <= value <= INT64_MAX:
        raise BadRequestError(f"'{key}' is out of range for a 64-bit integer")
    return value


def text(key: str, value, *, max_length: int | None = None) -> str:
    """A required string, trimmed, non-empty."""
    if value is None:
        raise BadRequestError(f"{key} is required")
    if not isinstance(value, str):
        raise BadRequestError(f"'{key}' must be a string")
    value = value.strip()
    if not value:
        raise BadRequestError(f"{key} is required")
    if max_length is not None and len(value) > max_length:
        raise BadRequestError(f"'{key}' must be at most {max_length} characters")
    if "\x00" in value:
        raise BadRequestError(f"'{key}' must not contain NUL characters")
    return value


def kind(value) -> str:
    if value not in ACCOUNT_KINDS:
        raise BadRequestError("kind must be one of: " + ", ".join(ACCOUNT_KINDS))
    return value


def entries(value) -> list[tuple[int, int]]:
    """The entries of a posting: a list of {account_id, amount_cents} objects."""
    if value is None:
        raise BadRequestError("entries is required")
    if not isinstance(value, list):
        raise BadRequestError("'entries' must be an array of {account_id, amount_cents}")
    parsed = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise BadRequestError(
                f"'entries[{i}]' must be an object with account_id and amount_cents"
            )
        if "account_id" not in item:
            raise BadRequestError(f"'entries[{i}].account_id' is required")
        if "amount_cents" not in item:
            raise BadRequestError(f"'entries[{i}].amount_cents' is required")
        parsed.append(
            (
                integer(f"entries[{i}].account_id", item["account_id"]),
                integer(f"entries[{i}].amount_cents", item["amount_cents"]),
            )
        )
    return parsed


_INTEGER_TEXT = re.compile(r"^-?[0-9]{1,19}$")


def query_integer(key: str, value) -> int | None:
    """An optional integer argument: a JSON integer (MCP) or its decimal text (a query string).

    Absent is None; present but empty (`?limit=`) is not an integer: 400 naming it."""
    if value is None:
        return None
    if isinstance(value, str):
        if not _INTEGER_TEXT.match(value):
            raise BadRequestError(f"'{key}' must be an integer")
        value = int(value)
    return integer(key, value)


def query_text(key: str, value, *, max_length: int) -> str | None:
    """An optional search text; None when absent or blank."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequestError(f"'{key}' must be a string")
    value = value.strip()
    if not value:
        return None
    if len(value) > max_length:
        raise BadRequestError(f"'{key}' must be at most {max_length} characters")
    if "\x00" in value:
        raise BadRequestError(f"'{key}' must not contain NUL characters")
    return value


PAGE_MAX = 500
PAGE_DEFAULT = 100  # GET /audit, GET /documents and a register without a limit


@overload
def page_limit(value, *, default: int) -> int: ...
@overload
def page_limit(value, *, default: None = None) -> int | None: ...
def page_limit(value, *, default: int | None = None) -> int | None:
    """`limit`, every pager's: `default` when absent (None: the transaction listing
    unpaged), else 1..PAGE_MAX; present but empty (`?limit=`) is 400 naming it."""
    limit = query_integer("limit", value)
    if limit is None:
        return default
    if not 1 <= limit <= PAGE_MAX:
        raise BadRequestError(f"'limit' must be between 1 and {PAGE_MAX}")
    return limit


def boolean(key: str, value) -> bool:
    if not isinstance(value, bool):
        raise BadRequestError(f"'{key}' must be true or false")
    return value


def id_list(key: str, value, *, max_items: int) -> list[int]:
    """A JSON array of integer ids (duplicates dropped, order kept)."""
    if not isinstance(value, list):
        raise BadRequestError(f"'{key}' must be an array of integers")
    if len(value) > max_items:
        raise BadRequestError(f"'{key}' may hold at most {max_items} ids")
    ids = [integer(f"{key}[{i}]", item) for i, item in enumerate(value)]
    return list(dict.fromkeys(ids))


Q_MAX = 200
CURSOR_MAX = 512


@dataclass(frozen=True)
class ListingQuery:
    """The arguments of a transaction listing (GET /transactions, list_transactions)."""

    start: date | None = None
    end: date | None = None
    q: str | None = None
    account_id: int | None = None
    min_cents: int | None = None
    max_cents: int | None = None
    limit: int | None = None
    cursor: str | None = None

    def filtered(self) -> bool:
        """Anything beyond the accepted date window (docs/ledger.md "Dates")?"""
        return any(v is not None for v in (self.q, self.account_id, self.min_cents, self.max_cents))


def cursor_text(value) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > CURSOR_MAX:
        raise BadRequestError("'cursor' is not a cursor this service issued")
    return value


def listing_query(args) -> ListingQuery:
    """Parse a listing's arguments from a mapping (query string or MCP arguments)."""
    start, end = window(args.get("from"), args.get("to"))
    min_cents = query_integer("min_cents", args.get("min_cents"))
    max_cents = query_integer("max_cents", args.get("max_cents"))
    if min_cents is not None and max_cents is not None and max_cents < min_cents:
        raise BadRequestError("'max_cents' must not be below 'min_cents'")
    return ListingQuery(
        start=start,
        end=end,
        q=query_text("q", args.get("q"), max_length=Q_MAX),
        account_id=query_integer("account_id", args.get("account_id")),
        min_cents=min_cents,
        max_cents=max_cents,
        limit=page_limit(args.get("limit")),
        cursor=cursor_text(args.get("cursor")),
    )


def id_in_range(row_id: int) -> bool:
    """Whether row_id can name a row of an INTEGER id column (1..ID_MAX). One beyond
    names nothing: it is answered as unknown without asking the database."""
    return 0 < row_id <= ID_MAX


def get_row(model, row_id: int):
    """model's row whose (INTEGER) id is row_id; None when there is none, and for an id
    out of range (id_in_range)."""
    return db.session.get(model, row_id) if id_in_range(row_id) else None


def row_by_id(query, model, row_id: int, missing: str, *, for_update: bool = False):
    """The row of query (a select over model) whose id is row_id: NotFoundError(missing)
    when the id is outside BIGINT or names no row. for_update: locked FOR UPDATE OF
    model (PostgreSQL; SQLite has no row locks and leaves the clause out), so two
    requests acting on one row run one after the other."""
    if not INT64_MIN <= row_id <= INT64_MAX:
        raise NotFoundError(missing)
    query = query.where(model.id == row_id)
    if for_update:
        query = query.with_for_update(of=model)
    row = db.session.execute(query).first()
    if row is None:
        raise NotFoundError(missing)
    return row
