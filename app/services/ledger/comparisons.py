"""`compare` on the income statement and the balance sheet: last period's figures beside
this one's (docs/ledger.md, "Trends and comparisons").

The statement itself is built as without `compare` (with `budget` too, when asked);
this step only adds to it: each line's `previous_cents` and a `previous` block with the
earlier statement's totals. Without `compare` the statement is returned untouched.

- income statement, compare=previous: the window of the same number of days that
  ends the day before `from`; compare=previous_year: the same dates a year earlier,
  29 February read as 28 February. `from` and `to` are then required.
- balance sheet, compare=previous_year: the same date a year earlier (29 February
  read as 28 February); `as_of` left out is today.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta

from .. import clock
from ..errors import BadRequestError
from . import reports, validate

PREVIOUS = "previous"
PREVIOUS_YEAR = "previous_year"
_STATEMENT_CHOICES = (PREVIOUS, PREVIOUS_YEAR)
_SHEET_CHOICES = (PREVIOUS_YEAR,)


def _choice(value, allowed: tuple[str, ...]) -> str | None:
    """The `compare` argument: None when absent or empty, else one of allowed."""
    if value is None or value == "":
        return None
    if value not in allowed:
        names = " or ".join(allowed)
        raise BadRequestError(f"'compare' must be {names}")
    return value


def year_before(day: date) -> date:
    """The same date a year earlier; 29 February is read as 28 February."""
    if day.month == 2 and day.day == 29:
        return date(day.year - 1, 2, 28)
    return day.replace(year=day.year - 1)


def previous_window(compare: str, start: date, end: date) -> tuple[date, date]:
    """The window a statement over [start, end] is compared with."""
    if compare == PREVIOUS:
        last = start - timedelta(days=1)
        return last - (end - start), last
    return year_before(start), year_before(end)


def _by_account(lines: list[dict]) -> dict[str, int]:
    return {line["account"]: line["cents"] for line in lines}


def _add_previous(lines: list[dict], previous: list[dict]) -> None:
    earlier = _by_account(previous)
    for line in lines:
        line["previous_cents"] = earlier.get(line["account"], 0)


def income_statement(compare, from_, to, statement: Callable[[], dict]) -> dict:
    """GET /reports/income-statement and the income_statement tool: statement() (plain,
    or against a budget) and, with `compare`, the earlier window's figures beside it."""
    choice = _choice(compare, _STATEMENT_CHOICES)
    if choice is None:
        return statement()
    start, end = validate.required_window(from_, to)
    current = statement()
    first, last = previous_window(choice, start, end)
    earlier = reports.income_statement(first, last)
    _add_previous(current["income"], earlier["income"])
    _add_previous(current["expenses"], earlier["expenses"])
    current["previous"] = {
        "from": earlier["from"],
        "to": earlier["to"],
        "total_income_cents": earlier["total_income_cents"],
        "total_expenses_cents": earlier["total_expenses_cents"],
        "net_cents": earlier["net_cents"],
    }
    return current


def balance_sheet(compare, as_of: date | None) -> dict:
    """GET /reports/balance-sheet and the balance_sheet tool: the sheet as of as_of
    (today when None) and, with compare=previous_year, the sheet a year earlier beside it."""
    choice = _choice(compare, _SHEET_CHOICES)
    if choice is None:
        return reports.balance_sheet(as_of)
    as_of = as_of or clock.today()
    current = reports.balance_sheet(as_of)
    earlier = reports.balance_sheet(year_before(as_of))
    for group in ("assets", "liabilities", "equity"):
        _add_previous(current[group], earlier[group])
    current["previous"] = {
        key: earlier[key]
        for key in (
            "as_of",
            "total_assets_cents",
            "total_liabilities_cents",
            "retained_cents",
            "total_equity_cents",
        )
    }
    return current
