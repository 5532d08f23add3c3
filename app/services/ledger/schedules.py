"""Schedules (docs/schedules.md): an amount expected between two accounts on the dates
of a recurrence rule (schedule_rules.py), created, read, changed and deleted here.

The rules, each checked by one small function below:
- names: as account names (accounts.name_key), unique after normalisation;
- `account_id` an open asset or liability account, `counter_account_id` any other open
  account; `amount_cents` non-zero within 64 bits, signed as the entry on `account_id`;
- `mode` `post` takes `post_from` (default: today, when the schedule is created or
  turned to `post`); `expect` has none.

Every change is one audit event (schedule.created, schedule.changed, schedule.deleted)
carrying the schedule as it is after the change (as it was, for a deletion), without
`created_at` and `next_due_on` (computed).

The occurrences (listing, actions, meeting, posting) are schedule_occurrences.py; this
module calls it after a schedule is created or changed, so existing transactions meet
the schedule's open occurrences and, in mode `post`, what is still open and due is
posted before the answer.
"""

from __future__ import annotations

from datetime import date, timedelta
from itertools import islice

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from ...extensions import db
from ...models import MODES, WEEKENDS, Account, Schedule, ScheduleOccurrence
from ...store import dialect
from .. import clock
from ..errors import BadRequestError, NotFoundError
from . import accounts, audit, schedule_meeting, schedule_posting, schedule_rules, validate
from .schedule_rules import Recurrence

NAME_MAX = 200
MATCH_TEXT_MAX = 200
WINDOW_MAX = 366
WINDOW_DEFAULT = 10
SEEN_KINDS = ("asset", "liability")  # where the money is seen: the bank, the cash box, a card
FIELDS = (
    "name",
    "account_id",
    "counter_account_id",
    "amount_cents",
    "rrule",
    "starts_on",
    "weekend",
    "match_text",
    "tolerance_cents",
    "window_days",
    "mode",
    "post_from",
    "active",
)
_READ_ONLY = ("id", "created_at", "next_due_on")  # sent back unchanged by a client: ignored
PREVIEW_COUNT = 5  # dates a preview shows (the schedule form's "next five dates")
NEXT_DUE_SCAN = 10_000  # rule dates looked at for next_due_on at most


# --- reading ---------------------------------------------------------------------------


def recurrence(row) -> Recurrence:
    """The schedule's rule, counted from its starts_on, with its weekend rule."""
    return schedule_rules.of(row)


def due_on_of(row, occurs_on: date) -> date:
    """The day an occurrence of the schedule is due (its weekend rule applied)."""
    return schedule_rules.due_on(occurs_on, row.weekend)


def closed(schedule_id: int) -> dict[date, str]:
    """The stored statuses of one schedule's occurrences (met, posted, skipped, open)."""
    rows = db.session.execute(
        select(ScheduleOccurrence.occurs_on, ScheduleOccurrence.status).where(
            ScheduleOccurrence.schedule_id == schedule_id
        )
    )
    return {r.occurs_on: r.status for r in rows}


def closed_from(today: date) -> dict[int, dict[date, str]]:
    """The stored statuses of every schedule's occurrences that may be due today or
    later (occurs_on from SHIFT_MAX days before today), by schedule: one query."""
    rows = db.session.execute(
        select(
            ScheduleOccurrence.schedule_id,
            ScheduleOccurrence.occurs_on,
            ScheduleOccurrence.status,
        ).where(ScheduleOccurrence.occurs_on >= today - timedelta(schedule_rules.SHIFT_MAX))
    )
    found: dict[int, dict[date, str]] = {}
    for schedule_id, occurs_on, status in rows:
        found.setdefault(schedule_id, {})[occurs_on] = status
    return found


def next_due_on(row, today: date, done: dict[date, str] | None = None) -> date | None:
    """The due_on of the first open occurrence due today or later; None when there is
    none (an inactive schedule, a rule that has ended) or none within NEXT_DUE_SCAN
    rule dates. `done`: its stored statuses (closed), when read already."""
    if not row.active:
        return None
    done = closed(row.id) if done is None else done
    for n, (day, due) in enumerate(recurrence(row).due_between(today, date.max - timedelta(3))):
        if n >= NEXT_DUE_SCAN:
            return None
        if done.get(day, "open") == "open":
            return due
    return None


def served(row, today: date | None = None, done: dict[date, str] | None = None) -> dict:
    """A schedule as the API serves it (docs/openapi.yaml, Schedule); `done` as for
    next_due_on."""
    return {
        **stored_object(row),
        "created_at": clock.iso(row.created_at),
        "next_due_on": _iso(next_due_on(row, today or clock.today(), done)),
    }


def stored_object(row) -> dict:
    """The schedule's fields as an audit event carries them (no created_at, no
    next_due_on)."""
    return {
        "id": int(row.id),
        "name": row.name,
        "account_id": int(row.account_id),
        "counter_account_id": int(row.counter_account_id),
        "amount_cents": int(row.amount_cents),
        "rrule": row.rrule,
        "starts_on": row.starts_on.isoformat(),
        "weekend": row.weekend,
        "match_text": row.match_text,
        "tolerance_cents": int(row.tolerance_cents),
        "window_days": int(row.window_days),
        "mode": row.mode,
        "post_from": _iso(row.post_from),
        "active": bool(row.active),
    }


def _iso(day: date | None) -> str | None:
    return None if day is None else day.isoformat()


def row(schedule_id: int, *, for_update: bool = False) -> Schedule:
    """The schedule (locked until the unit ends on PostgreSQL with for_update); 404."""
    if not validate.id_in_range(schedule_id):
        raise NotFoundError("no such schedule")
    query = (
        select(Schedule).where(Schedule.id == schedule_id).execution_options(populate_existing=True)
    )
    if for_update and dialect.is_postgresql():
        query = query.with_for_update()
    found = db.session.execute(query).scalar()
    if found is None:
        raise NotFoundError("no such schedule")
    return found


def list_schedules() -> list[dict]:
    """GET /schedules: every schedule, by name, then id."""
    today = clock.today()
    rows = db.session.execute(select(Schedule).order_by(Schedule.name, Schedule.id)).scalars()
    done = closed_from(today)  # one query for every schedule's next_due_on
    return [served(r, today, done.get(r.id, {})) for r in rows]


def get_schedule(schedule_id: int) -> dict:
    return served(row(schedule_id))


def preview(args) -> dict:
    """GET /schedules/preview: the first PREVIEW_COUNT occurrences a rule would give,
    `{dates: [{occurs_on, due_on}]}` by occurs_on, counted from `starts_on` (default
    today) with the `weekend` rule (default none); nothing is stored. The rule, the date
    and the weekend rule are checked as a schedule's are (400 naming the field)."""
    text = args.get("rrule")
    starts_on = validate.optional_date("starts_on", args.get("starts_on")) or clock.today()
    weekend = args.get("weekend", "none")
    if weekend not in WEEKENDS:
        raise BadRequestError("'weekend' must be one of: " + ", ".join(WEEKENDS))
    if text is not None and not text.strip():
        text = None  # an empty rule is a missing one: "'rrule' is required"
    rule = schedule_rules.checked(text.strip() if text else text, starts_on, weekend)
    days = islice(rule.dates(starts_on, date(validate.LAST_YEAR, 12, 31)), PREVIEW_COUNT)
    return {
        "dates": [
            {"occurs_on": d.isoformat(), "due_on": schedule_rules.due_on(d, weekend).isoformat()}
            for d in days
        ]
    }


# --- checking ----------------------------------------------------------------------------


def _account(
    key: str, value, kinds: tuple[str, ...] | None = None, open_only: bool = True
) -> tuple[int, str]:
    """An existing, open account's (id, kind); 400 naming `key` otherwise. open_only
    False: an archived one is kept (a change that leaves the account as it was)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequestError(f"'{key}' must be an account id (an integer)")
    account = validate.get_row(Account, value)
    if account is None:
        raise BadRequestError(f"'{key}': there is no account {value}")
    if account.archived and open_only:
        raise BadRequestError(f"'{key}': account {value} is archived")
    if kinds is not None and account.kind not in kinds:
        raise BadRequestError(
            f"'{key}' must be an asset or liability account (where the money is seen);"
            f" account {value} is {account.kind}"
        )
    return account.id, account.kind


def _checked(body, current: dict | None = None) -> dict:
    """The schedule's fields from a POST body (current None) or a PUT body over the
    current fields (a field left out keeps its value); 400 naming the first bad field."""
    if not isinstance(body, dict):
        raise BadRequestError("the body must be a JSON object")
    for key in body:
        if key not in FIELDS and key not in _READ_ONLY:
            raise BadRequestError(f"'{key}' is not a field of a schedule")
    given = {k: body[k] for k in FIELDS if k in body}
    defaults = {
        "weekend": "none",
        "match_text": None,
        "tolerance_cents": 0,
        "window_days": WINDOW_DEFAULT,
        "mode": "expect",
        "active": True,
    }
    values = {**defaults, **(current or {}), **given}
    out: dict = {}
    out["name"] = validate.text("name", values.get("name"), max_length=NAME_MAX)
    for key in ("account_id", "counter_account_id", "amount_cents", "rrule", "starts_on"):
        if values.get(key) is None:
            raise BadRequestError(f"'{key}' is required")
    # A change that leaves an account as it was keeps it even when it was archived since
    # (so such a schedule can still be turned off); a new or newly given one must be open.
    out["account_id"], _ = _account(
        "account_id", values["account_id"], SEEN_KINDS, _newly_given("account_id", given, current)
    )
    out["counter_account_id"], _ = _account(
        "counter_account_id",
        values["counter_account_id"],
        open_only=_newly_given("counter_account_id", given, current),
    )
    if out["counter_account_id"] == out["account_id"]:
        raise BadRequestError("'counter_account_id' must differ from 'account_id'")
    out["amount_cents"] = validate.integer("amount_cents", values["amount_cents"])
    if out["amount_cents"] == 0:
        raise BadRequestError("'amount_cents' must not be 0")
    out["starts_on"] = validate.date_value("starts_on", values["starts_on"])
    if not isinstance(values["rrule"], str):
        raise BadRequestError("'rrule' must be a string: an RFC 5545 rule")
    out["rrule"] = values["rrule"].strip()
    schedule_rules.checked(out["rrule"], out["starts_on"])  # 400 naming rrule
    if values["weekend"] not in WEEKENDS:
        raise BadRequestError("'weekend' must be one of: " + ", ".join(WEEKENDS))
    out["weekend"] = values["weekend"]
    out["match_text"] = _match_text(values["match_text"])
    out["tolerance_cents"] = validate.integer("tolerance_cents", values["tolerance_cents"])
    if out["tolerance_cents"] < 0:
        raise BadRequestError("'tolerance_cents' must be at least 0")
    window = values["window_days"]
    if isinstance(window, bool) or not isinstance(window, int) or not 0 <= window <= WINDOW_MAX:
        raise BadRequestError(f"'window_days' must be an integer from 0 to {WINDOW_MAX}")
    out["window_days"] = window
    if values["mode"] not in MODES:
        raise BadRequestError("'mode' must be one of: " + ", ".join(MODES))
    out["mode"] = values["mode"]
    out["post_from"] = _post_from(out["mode"], given, current)
    out["active"] = validate.boolean("active", values["active"])
    return out


def _newly_given(key: str, given: dict, current: dict | None) -> bool:
    """Whether the field is set by this request to another value than it had."""
    return current is None or (key in given and given[key] != current[key])


def _match_text(value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequestError("'match_text' must be a string or null")
    if len(value) > MATCH_TEXT_MAX:
        raise BadRequestError(f"'match_text' must be at most {MATCH_TEXT_MAX} characters")
    if "\x00" in value:
        raise BadRequestError("'match_text' must not contain NUL characters")
    return value if value.strip() else None


def _post_from(mode: str, given: dict, current: dict | None) -> date | None:
    """Null in mode `expect` (400 naming post_from when one is given); in mode `post`
    the date given, else the one kept, else today (created, or turned to `post`)."""
    value = given.get("post_from")
    if mode == "expect":
        if value is not None:
            raise BadRequestError("'post_from' is only taken in mode 'post'")
        return None
    if value is not None:
        return validate.date_value("post_from", value)
    if "post_from" not in given and current is not None and current["mode"] == "post":
        kept = current.get("post_from")
        if kept is not None:
            return date.fromisoformat(kept)
    return clock.today()


def _name_free(name: str, except_id: int | None = None) -> str:
    key = accounts.name_key(name)
    taken = accounts.name_holder(Schedule, key, except_id)
    if taken is not None:
        raise BadRequestError(f"'name': a schedule named {taken!r} already exists")
    return key


# --- writing -----------------------------------------------------------------------------


def create_schedule(body, created_by: int | None) -> dict:
    """POST /schedules: 201 the schedule; one schedule.created event."""
    values = _checked(body)
    key = _name_free(values["name"])
    new = Schedule(
        **values,
        name_key=key,
        created_by=created_by,
        created_at=clock.now().replace(microsecond=0),
    )
    db.session.add(new)
    try:
        with db.session.begin_nested():
            db.session.flush()
    except IntegrityError:  # a concurrent request took the name first
        raise BadRequestError(
            f"'name': a schedule named {values['name']!r} already exists"
        ) from None
    audit.record("schedule.created", {"schedule": stored_object(new)})
    schedule_meeting.meet_existing(new, clock.today())
    schedule_posting.post_schedule(new, clock.today())
    return served(new)


def update_schedule(schedule_id: int, body) -> dict:
    """PUT /schedules/{id}: a field left out keeps its value; one schedule.changed event."""
    current = row(schedule_id, for_update=True)
    values = _checked(body, stored_object(current))
    key = _name_free(values["name"], except_id=schedule_id)
    try:
        with db.session.begin_nested():
            db.session.execute(
                update(Schedule).where(Schedule.id == schedule_id).values(**values, name_key=key)
            )
    except IntegrityError:  # a concurrent request took the name first
        raise BadRequestError(
            f"'name': a schedule named {values['name']!r} already exists"
        ) from None
    changed = row(schedule_id)
    audit.record("schedule.changed", {"schedule": stored_object(changed)})
    schedule_meeting.meet_existing(changed, clock.today())
    schedule_posting.post_schedule(changed, clock.today())
    return served(changed)


def delete_schedule(schedule_id: int) -> None:
    """DELETE /schedules/{id}: its occurrences go with it; the transactions it posted or
    that met it stay. One schedule.deleted event carrying it as it was."""
    gone = row(schedule_id, for_update=True)
    obj = {"schedule": stored_object(gone)}
    db.session.execute(
        delete(ScheduleOccurrence).where(ScheduleOccurrence.schedule_id == schedule_id)
    )
    db.session.execute(delete(Schedule).where(Schedule.id == schedule_id))
    db.session.expunge(gone)
    audit.record("schedule.deleted", obj)
