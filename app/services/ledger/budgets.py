"""Budgets: the plan (docs/ledger.md, "Budgets"); the plan against actuals is
budget_actuals.py (its twelve months, last year's actuals, the statement against a
budget).

A budget is a named plan for twelve consecutive months, from `starts_on` (the first
day of a month) to `ends_on` (the last day of the twelfth month). Each line holds one
income or expense account's twelve monthly figures in integer cents, sign-adjusted
as reports show them (reports.sign_for): a positive figure is income expected on an
income account, spending expected on an expense account.

The rules, each in one small function below:
- names: as account names (accounts.name_key), unique after normalisation;
- split_annual: an annual figure becomes twelve months that add up to it exactly,
  q, r = divmod(annual, 12) with floor division, the first r months q + 1;
- frozen: an approved budget is never changed, re-approved or deleted (ConflictError);
  it is revised by creating a new budget based on it.

Every change is one audit event (budget.created, budget.changed, budget.approved,
budget.deleted) carrying the budget as it is after the change (as it was, for a
deletion); `ledger-service verify` replays them against the stored budgets.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import bindparam, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from ...extensions import db
from ...models import MONTH_COLUMNS, Account, Budget
from ...models import BudgetLine as Line
from ...store import dialect
from .. import clock
from ..errors import BadRequestError, ConflictError, NotFoundError
from . import accounts, audit, validate
from .budget_actuals import BUDGET_KINDS, MONTHS, actual_months, ends_on

ACTUALS = "actuals"
_MONTH_COLUMNS = [getattr(Line, name) for name in MONTH_COLUMNS]
_B = Budget.__table__

# Built once (compiled once, then served from the statement cache) and run as Core
# statements on the unit's connection.
_CLAIM_NAME = dialect.per_dialect(
    lambda insert: (
        insert(_B)
        .values(
            name=bindparam("b_name"),
            name_key=bindparam("b_key"),
            starts_on=bindparam("b_starts_on"),
        )
        .on_conflict_do_nothing(index_elements=["name_key"])
        .returning(_B.c.id)
    )
)


# --- the small rules -----------------------------------------------------------------


def split_annual(annual_cents: int) -> list[int]:
    """Twelve monthly figures summing exactly to annual_cents: q, r = divmod(annual, 12)
    (floor division, so negative figures split too); the first r months get q + 1."""
    q, r = divmod(annual_cents, MONTHS)
    return [q + 1] * r + [q] * (MONTHS - r)


# --- reading ---------------------------------------------------------------------------


def _header(budget: Budget) -> dict:
    return {
        "id": budget.id,
        "name": budget.name,
        "starts_on": budget.starts_on.isoformat(),
        "ends_on": ends_on(budget.starts_on).isoformat(),
        "approved_at": clock.iso(budget.approved_at),
        "approved_by_email": budget.approved_by_email,
    }


def _lines(budget_id: int) -> list[dict]:
    """The budget's lines, ordered as GET /accounts orders accounts (kind, then name)."""
    rows = db.session.execute(
        select(Line.account_id, Account.name, *_MONTH_COLUMNS)
        .join(Account, Account.id == Line.account_id)
        .where(Line.budget_id == budget_id)
        .order_by(Account.kind, Account.name)
    )
    return [
        {"account_id": row[0], "account_name": row[1], "months": [int(v) for v in row[2:]]}
        for row in rows
    ]


def as_dict(budget: Budget) -> dict:
    return {**_header(budget), "lines": _lines(budget.id)}


def _get(budget_id: int) -> Budget:
    budget = validate.get_row(Budget, budget_id)
    if budget is None:
        raise NotFoundError("no such budget")
    return budget


def _get_for_change(budget_id: int) -> Budget:
    """The budget, its row locked until the unit ends (PostgreSQL), and not approved."""
    _get(budget_id)
    query = select(Budget).where(Budget.id == budget_id).execution_options(populate_existing=True)
    if dialect.is_postgresql():
        query = query.with_for_update()
    budget = db.session.execute(query).scalar_one()
    if budget.approved_at is not None:
        raise ConflictError(
            f"budget {budget.id} is approved and cannot change; revise it by creating a "
            f"new budget with based_on {budget.id}"
        )
    return budget


def list_budgets() -> list[dict]:
    """GET /budgets: every budget without its lines, newest starts_on first, then id."""
    budgets = db.session.execute(
        select(Budget).order_by(Budget.starts_on.desc(), Budget.id.desc())
    ).scalars()
    return [_header(b) for b in budgets]


def get_budget(budget_id: int) -> dict:
    """GET /budgets/{id}: the budget with its lines, or NotFoundError."""
    return as_dict(_get(budget_id))


# --- the audit trail -------------------------------------------------------------------


def audit_object(budget: dict) -> dict:
    """A budget as its audit events carry it (and verify compares it): no account names
    and no ends_on (both follow from other fields)."""
    return {
        "budget": {
            "id": budget["id"],
            "name": budget["name"],
            "starts_on": budget["starts_on"],
            "approved_at": budget["approved_at"],
            "approved_by_email": budget["approved_by_email"],
            "lines": [
                {"account_id": line["account_id"], "months": line["months"]}
                for line in budget["lines"]
            ],
        }
    }


def _record(action: str, budget: dict) -> None:
    audit.record(action, audit_object(budget))


# --- names and dates -------------------------------------------------------------------


def _name(value) -> tuple[str, str]:
    name = validate.text("name", value, max_length=accounts.NAME_MAX)
    return name, accounts.name_key(name)


def _refuse_taken(key: str, except_id: int | None = None) -> None:
    existing = accounts.name_holder(Budget, key, except_id)
    if existing is not None:
        raise BadRequestError(f"'name': a budget named '{existing}' already exists")


def _flush_named(name: str, statement=None) -> None:
    try:
        with db.session.begin_nested():
            if statement is not None:
                db.session.execute(statement)
            db.session.flush()
    except IntegrityError as exc:  # lost a race with a concurrent write of the same name
        raise BadRequestError(f"'name': a budget named '{name}' already exists") from exc


def _starts_on(value) -> date:
    if value is None or value == "":
        raise BadRequestError("starts_on is required")
    day = validate.date_value("starts_on", value)
    if day.day != 1:
        raise BadRequestError(
            "'starts_on' must be a first day (YYYY-MM-01, like 2027-01-01): a budget plans "
            "whole months"
        )
    return day


# --- lines -----------------------------------------------------------------------------


def _amount(key: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequestError(f"'{key}' must be an integer number of cents")
    if not validate.INT64_MIN <= value <= validate.INT64_MAX:
        raise BadRequestError(f"'{key}' is out of range for a signed 64-bit integer")
    return value


def _budget_accounts() -> dict[int, str]:
    """{account id: kind} of every account."""
    return {row[0]: row[1] for row in db.session.execute(select(Account.id, Account.kind))}


def parse_lines(value) -> dict[int, list[int]]:
    """PUT's `lines`: {account_id: twelve months}, each element {account_id, months} or
    {account_id, annual_cents}; every refusal names the element and field."""
    if not isinstance(value, list):
        raise BadRequestError(
            "'lines' must be an array of {account_id, months} or {account_id, annual_cents}"
        )
    kinds = _budget_accounts()
    parsed: dict[int, list[int]] = {}
    for i, item in enumerate(value):
        where = f"lines[{i}]"
        if not isinstance(item, dict):
            raise BadRequestError(
                f"'{where}' must be an object {{account_id, months}} or {{account_id, "
                "annual_cents}"
            )
        if "account_id" not in item:
            raise BadRequestError(f"'{where}.account_id' is required")
        account_id = item["account_id"]
        if isinstance(account_id, bool) or not isinstance(account_id, int):
            raise BadRequestError(f"'{where}.account_id' must be an integer")
        if account_id not in kinds:
            raise BadRequestError(f"'{where}.account_id': no such account ({account_id})")
        if kinds[account_id] not in BUDGET_KINDS:
            raise BadRequestError(
                f"'{where}.account_id': account {account_id} is a {kinds[account_id]} "
                "account; a budget line goes on an income or expense account only"
            )
        if account_id in parsed:
            raise BadRequestError(f"'{where}.account_id': account {account_id} is listed twice")
        has_months, has_annual = "months" in item, "annual_cents" in item
        if has_months == has_annual:
            raise BadRequestError(
                f"'{where}' must have either 'months' or 'annual_cents', not both"
            )
        if has_months:
            months = item["months"]
            if not isinstance(months, list) or len(months) != MONTHS:
                raise BadRequestError(f"'{where}.months' must be an array of exactly 12 integers")
            parsed[account_id] = [
                _amount(f"{where}.months[{m}]", cents) for m, cents in enumerate(months)
            ]
        else:
            parsed[account_id] = split_annual(
                _amount(f"{where}.annual_cents", item["annual_cents"])
            )
    return parsed


def _write_lines(budget_id: int, lines: dict[int, list[int]]) -> None:
    db.session.execute(delete(Line).where(Line.budget_id == budget_id))
    if lines:
        db.session.execute(
            insert(Line),
            [
                {
                    "budget_id": budget_id,
                    "account_id": account_id,
                    **dict(zip(MONTH_COLUMNS, months, strict=True)),
                }
                for account_id, months in lines.items()
            ],
        )


def _copied_lines(budget_id: int) -> list[dict]:
    source = validate.get_row(Budget, budget_id)
    if source is None:
        raise BadRequestError(f"'based_on': no such budget ({budget_id})")
    return _lines(source.id)


def _based_on(value, starts_on: date) -> list[dict] | None:
    """The lines a new budget starting on starts_on starts with: last year's actuals,
    another budget's lines, or None when based_on is left out."""
    if value is None:
        return None
    if value == ACTUALS:
        return actual_months(starts_on)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequestError("'based_on' must be \"actuals\" or the id of another budget")
    return _copied_lines(value)


# --- changes ---------------------------------------------------------------------------


def create_budget(body: dict) -> dict:
    """POST /budgets {name, starts_on, based_on?}: a new draft budget with its lines.

    Four statements at most: the lines to start from, the budget (its name claimed by
    the unique name_key in the same INSERT), its lines, the audit event."""
    name, key = _name(body.get("name"))
    starts_on = _starts_on(body.get("starts_on"))
    lines = _based_on(body.get("based_on"), starts_on) or []
    connection = db.session.connection()
    claim = _CLAIM_NAME[dialect.name(connection)]
    budget_id = connection.execute(
        claim, {"b_name": name, "b_key": key, "b_starts_on": starts_on}
    ).scalar()
    if budget_id is None:  # the name is taken (perhaps a moment ago, by a concurrent request)
        _refuse_taken(key)
        raise BadRequestError(f"'name': a budget named '{name}' already exists")
    if lines:
        connection.execute(
            insert(Line),
            [
                {
                    "budget_id": budget_id,
                    "account_id": line["account_id"],
                    **dict(zip(MONTH_COLUMNS, line["months"], strict=True)),
                }
                for line in lines
            ],
        )
    created = {
        "id": budget_id,
        "name": name,
        "starts_on": starts_on.isoformat(),
        "ends_on": ends_on(starts_on).isoformat(),
        "approved_at": None,
        "approved_by_email": None,
        "lines": lines,
    }
    _record("budget.created", created)
    return created


def update_budget(budget_id: int, body: dict) -> dict:
    """PUT /budgets/{id} {name?, lines?}: a field left out keeps its value."""
    budget = _get_for_change(budget_id)
    values: dict = {}
    if "name" in body:
        name, key = _name(body["name"])
        if name != budget.name:
            _refuse_taken(key, except_id=budget.id)
            values = {"name": name, "name_key": key}
    lines = parse_lines(body["lines"]) if "lines" in body else None
    if values:
        _flush_named(values["name"], update(Budget).where(Budget.id == budget.id).values(**values))
        db.session.refresh(budget)
    if lines is not None:
        _write_lines(budget.id, lines)
    changed = as_dict(budget)
    _record("budget.changed", changed)
    return changed


def approve_budget(budget_id: int, email: str) -> dict:
    """POST /budgets/{id}/approve: freeze the budget, naming who approved it and when."""
    budget = _get_for_change(budget_id)
    budget.approved_at = clock.now().replace(microsecond=0)
    budget.approved_by_email = email
    db.session.flush()
    approved = as_dict(budget)
    _record("budget.approved", approved)
    return approved


def delete_budget(budget_id: int) -> None:
    """DELETE /budgets/{id}: a draft budget and its lines."""
    budget = _get_for_change(budget_id)
    gone = as_dict(budget)
    db.session.execute(delete(Line).where(Line.budget_id == budget.id))
    db.session.execute(delete(Budget).where(Budget.id == budget.id))
    _record("budget.deleted", gone)
