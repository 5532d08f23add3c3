"""Meeting (docs/schedules.md, "Meeting"): a transaction meets an open occurrence of an
active schedule when it has an entry on the schedule's `account_id` within
`tolerance_cents` of `amount_cents` (same sign) and an entry on `counter_account_id`,
its `occurred_on` is at most `window_days` from the occurrence's `due_on`, `match_text`
(when set) is in its description (compared as account names are), and it meets nothing
else. Of the occurrences it could meet it meets the one with the earliest `due_on`,
then the lowest schedule id.

- a new transaction (transactions.record_transaction): `candidates` (one indexed query:
  the active schedules on two of its accounts whose amount could fit; none, the usual
  case, costs nothing more) and `meet_new`;
- a schedule created or changed: `meet_existing`, its open occurrences due today or
  earlier met, earliest first, by the oldest qualifying transaction that meets nothing;
- a transaction deleted: `release` opens again what it met (the service may post it)
  or posted (the service never posts it again: a stored `open` row says so);
- a correction: `held_by` the original before it goes, `take_over` by the replacement
  when it still qualifies.

Imports no transactions module: record_transaction calls in here.
"""

from __future__ import annotations

from bisect import bisect_left
from datetime import date, timedelta
from typing import NamedTuple

from sqlalchemy import and_, delete, exists, select, text, update

from ... import store
from ...extensions import db
from ...models import Account, Entry, Schedule, ScheduleOccurrence, Transaction
from ...store import dialect
from . import accounts, audit, schedule_rules, validate

MET_OR_POSTED = ("met", "posted")


class Candidate(NamedTuple):
    """What meeting needs of an active schedule."""

    id: int
    account_id: int
    counter_account_id: int
    amount_cents: int
    tolerance_cents: int
    window_days: int
    match_text: str | None
    rrule: str
    starts_on: date
    weekend: str


_COLUMNS = (
    Schedule.id,
    Schedule.account_id,
    Schedule.counter_account_id,
    Schedule.amount_cents,
    Schedule.tolerance_cents,
    Schedule.window_days,
    Schedule.match_text,
    Schedule.rrule,
    Schedule.starts_on,
    Schedule.weekend,
)
_COLUMN_NAMES = ", ".join(c.key for c in _COLUMNS)
# The schedules a posting may meet, as a condition on `schedules`, one text per store
# (the same for every posting: no expanding IN rendered anew per posting): :meet_ids the
# posting's account ids (may_meet_params: a JSON array read by json_each on SQLite, as
# the posting's own insert reads its ids; an array literal on PostgreSQL), :meet_low and
# :meet_high its least and greatest amount. Amounts compared as NUMERIC: amount_cents
# +/- tolerance_cents may leave 64 bits (PostgreSQL would refuse the bigint sum; SQLite
# turns it into a REAL, which compares as well). PostgreSQL's posting statement
# (transactions._INSERT_CHECKED) posts only when NOT EXISTS a schedule so, saving this
# read's round trip in the usual case.
MAY_MEET = {
    "sqlite": """active
      AND account_id IN (SELECT value FROM json_each(:meet_ids))
      AND counter_account_id IN (SELECT value FROM json_each(:meet_ids))
      AND :meet_high >= CAST(amount_cents AS NUMERIC) - CAST(tolerance_cents AS NUMERIC)
      AND :meet_low <= CAST(amount_cents AS NUMERIC) + CAST(tolerance_cents AS NUMERIC)""",
    "postgresql": """active
      AND account_id = ANY (CAST(:meet_ids AS INTEGER[]))
      AND counter_account_id = ANY (CAST(:meet_ids AS INTEGER[]))
      AND CAST(:meet_high AS NUMERIC)
          >= CAST(amount_cents AS NUMERIC) - CAST(tolerance_cents AS NUMERIC)
      AND CAST(:meet_low AS NUMERIC)
          <= CAST(amount_cents AS NUMERIC) + CAST(tolerance_cents AS NUMERIC)""",
}
# Compiled once per process (store.FixedStatement).
_CANDIDATES = {
    which: store.FixedStatement(text(f"SELECT {_COLUMN_NAMES} FROM schedules WHERE {condition}"))
    for which, condition in MAY_MEET.items()
}
# MAY_MEET's parameters (PostgreSQL) for a posting no schedule may meet (a schedule's
# own, or one with fewer than two accounts a schedule could name): no account id, so
# the condition never holds.
MEET_NOTHING = {"meet_ids": "{}", "meet_low": 0, "meet_high": 0}


def may_meet_params(entries, which: str) -> dict | None:
    """MAY_MEET's parameters for a posting's (account_id, amount_cents) entries on store
    `which`; None when no schedule can meet it: fewer than two of its ids can name an
    account (an id beyond the INTEGER column names none, and PostgreSQL would refuse
    to compare it: the posting refuses it in its own words)."""
    parsed = list(entries)
    ids = sorted({a for a, _ in parsed if validate.id_in_range(a)})
    if len(ids) < 2:
        return None
    amounts = [int(c) for _, c in parsed]
    return {
        "meet_ids": "[" + ",".join(map(str, ids)) + "]"
        if which == dialect.SQLITE
        else dialect.int_array(ids),
        "meet_low": min(amounts),
        "meet_high": max(amounts),
    }


def candidates(entries) -> list[Candidate]:
    """The active schedules the posting (its (account_id, amount_cents) entries) may
    meet: account_id and counter_account_id both among its accounts, the amount within
    tolerance of one between its least and its greatest amount (fits() then checks each
    exactly). One indexed query, which finds nothing for a posting no schedule could
    meet (with 1,000 dues schedules on the bank, a grocery bill reads no schedule); on
    PostgreSQL run as a read of its own when the posting is the unit's sole write, so the
    posting's own statement still is."""
    connection = db.session.connection()
    which = dialect.name(connection)
    params = may_meet_params(entries, which)
    if params is None:
        return []
    with store.on_its_own(connection, when=store.is_sole_write()):
        rows = _CANDIDATES[which].execute(connection, params).all()
    return [Candidate._make((*r[:8], dialect.as_date(r[8]), r[9])) for r in rows]


def amount_fits(c, amount: int) -> bool:
    """An amount on the schedule's account_id that meets it: the same sign, at most
    tolerance_cents from amount_cents."""
    return (amount > 0) == (c.amount_cents > 0) and abs(amount - c.amount_cents) <= (
        c.tolerance_cents
    )


def text_fits(c, description: str) -> bool:
    if c.match_text is None:
        return True
    return accounts.name_key(c.match_text) in accounts.name_key(description)


def fits(c, description: str, parsed) -> bool:
    """The transaction's entries and description meet the schedule (dates aside)."""
    return (
        any(a == c.account_id and amount_fits(c, amount) for a, amount in parsed)
        and any(a == c.counter_account_id for a, _ in parsed)
        and text_fits(c, description)
    )


def _stored(schedule_id: int, first: date, last: date) -> dict[date, str]:
    rows = db.session.execute(
        select(ScheduleOccurrence.occurs_on, ScheduleOccurrence.status).where(
            ScheduleOccurrence.schedule_id == schedule_id,
            ScheduleOccurrence.occurs_on.between(first, last),
        )
    )
    return {r.occurs_on: r.status for r in rows}


def open_near(c, day: date) -> list[tuple[date, date]]:
    """(due_on, occurs_on) of the schedule's open occurrences due within window_days of
    `day`, earliest first."""
    window = timedelta(days=c.window_days)
    found = schedule_rules.due_in(c, day - window, day + window)
    if not found:
        return []
    kept = _stored(c.id, found[0][0], found[-1][0])
    return [(due, on) for on, due in found if kept.get(on, "open") == "open"]


def meet(schedule_id: int, occurs_on: date, tx_id: int) -> None:
    """Store the occurrence as met by tx_id, with its occurrence.met event."""
    values = {"schedule_id": schedule_id, "occurs_on": occurs_on, "status": "met"}
    db.session.execute(
        dialect.upsert(
            ScheduleOccurrence,
            {**values, "transaction_id": tx_id},
            set_={"status": "met", "transaction_id": tx_id},
        )
    )
    audit.record(
        "occurrence.met",
        {
            "occurrence": {
                "schedule_id": int(schedule_id),
                "occurs_on": occurs_on.isoformat(),
                "status": "met",
                "transaction_id": int(tx_id),
            }
        },
    )


def meet_new(found: list[Candidate], tx_id: int, day: date, description: str, parsed) -> bool:
    """A new transaction meets the open occurrence it qualifies for with the earliest
    due_on, then the lowest schedule id; whether it met one."""
    best = None
    for c in found:
        if not fits(c, description, parsed):
            continue
        near = open_near(c, day)
        if near and (best is None or (near[0][0], c.id) < (best[0], best[1])):
            best = (near[0][0], c.id, near[0][1])
    if best is None:
        return False
    meet(best[1], best[2], tx_id)
    return True


def meet_named(found: list[Candidate], named: tuple[int, date], tx_id: int) -> bool:
    """A statement line posted to its schedule's counter account meets the occurrence its
    suggestion named (for_lines), when that is still open; whether it met it."""
    schedule_id, occurs_on = named
    if not any(c.id == schedule_id for c in found):
        return False
    kept = _stored(schedule_id, occurs_on, occurs_on)
    if kept.get(occurs_on, "open") != "open":
        return False
    meet(schedule_id, occurs_on, tx_id)
    return True


def held_by(tx_id: int) -> list[tuple[int, date, str]]:
    """(schedule_id, occurs_on, status) of what the transaction met or was posted for."""
    rows = db.session.execute(
        select(
            ScheduleOccurrence.schedule_id,
            ScheduleOccurrence.occurs_on,
            ScheduleOccurrence.status,
        ).where(
            ScheduleOccurrence.transaction_id == tx_id,
            ScheduleOccurrence.status.in_(MET_OR_POSTED),
        )
    )
    return [(r[0], r[1], r[2]) for r in rows]


def release(tx_id: int) -> None:
    """The transaction is being deleted: what it met is open again (no row), what it was
    posted for is open again and never posted by the service (status `open`)."""
    db.session.execute(
        delete(ScheduleOccurrence).where(
            ScheduleOccurrence.transaction_id == tx_id, ScheduleOccurrence.status == "met"
        )
    )
    db.session.execute(
        update(ScheduleOccurrence)
        .where(ScheduleOccurrence.transaction_id == tx_id, ScheduleOccurrence.status == "posted")
        .values(status="open", transaction_id=None)
    )


def take_over(
    held: list[tuple[int, date, str]],
    found: list[Candidate],
    tx_id: int,
    day: date,
    description: str,
    parsed,
) -> bool:
    """A correction's replacement takes over the occurrences its original held (already
    released) when it still qualifies; whether it took one over."""
    by_id = {c.id: c for c in found}
    taken = False
    for schedule_id, occurs_on, status in held:
        c = by_id.get(schedule_id)
        if c is None or taken or not fits(c, description, parsed):
            continue
        due = schedule_rules.due_on(occurs_on, c.weekend)
        if abs((day - due).days) > c.window_days:
            continue
        if status == "met":
            meet(schedule_id, occurs_on, tx_id)
        else:
            db.session.execute(
                update(ScheduleOccurrence)
                .where(
                    ScheduleOccurrence.schedule_id == schedule_id,
                    ScheduleOccurrence.occurs_on == occurs_on,
                )
                .values(status="posted", transaction_id=tx_id)
            )
        taken = True
    return taken


def _amount_range(row) -> tuple[int, int]:
    low, high = row.amount_cents - row.tolerance_cents, row.amount_cents + row.tolerance_cents
    if row.amount_cents > 0:
        low = max(low, 1)
    else:
        high = min(high, -1)
    return max(low, validate.INT64_MIN), min(high, validate.INT64_MAX)


def meet_existing(row, today: date) -> int:
    """A schedule created or changed: its open occurrences due today or earlier are met,
    earliest first, each by the oldest qualifying transaction (occurred_on, then id)
    that meets nothing yet; how many were met."""
    if not row.active:
        return 0
    low, high = _amount_range(row)
    window = timedelta(days=row.window_days)
    on_account = exists().where(
        Entry.transaction_id == Transaction.id,
        Entry.account_id == row.account_id,
        Entry.amount_cents.between(low, high),
    )
    on_counter = exists().where(
        Entry.transaction_id == Transaction.id, Entry.account_id == row.counter_account_id
    )
    taken = exists().where(
        and_(
            ScheduleOccurrence.transaction_id == Transaction.id,
            ScheduleOccurrence.status.in_(MET_OR_POSTED),
        )
    )
    first = row.starts_on - window - timedelta(days=schedule_rules.SHIFT_MAX)
    rows = db.session.execute(
        select(Transaction.id, Transaction.occurred_on, Transaction.description)
        .where(
            Transaction.occurred_on.between(first, today + window),
            on_account,
            on_counter,
            ~taken,
        )
        .order_by(Transaction.occurred_on, Transaction.id)
    ).all()
    pool = [r for r in rows if text_fits(row, r.description)]
    if not pool:
        return 0
    due_from = pool[0].occurred_on - window
    occurrences = list(schedule_rules.of(row).due_between(due_from, today))
    if not occurrences:
        return 0
    kept = _stored(row.id, occurrences[0][0], occurrences[-1][0])
    used: set[int] = set()
    met = 0
    for occurs_on, due in occurrences:
        if kept.get(occurs_on, "open") != "open":
            continue
        for tx in pool:
            if tx.id not in used and abs((tx.occurred_on - due).days) <= row.window_days:
                meet(row.id, occurs_on, tx.id)
                used.add(tx.id)
                met += 1
                break
    return met


# --- statement lines (docs/schedules.md, "Statement lines") ----------------------------


class LineOccurrence(NamedTuple):
    """The open occurrence a statement line would meet, and the account it goes to."""

    schedule_id: int
    occurs_on: date
    counter_account_id: int


class BankLine(NamedTuple):
    """What meeting reads of a statement line."""

    booked_on: date
    amount_cents: int
    payee: str | None
    memo: str | None


def _line_text_fits(c, line: BankLine) -> bool:
    """match_text, when set, in the line's payee or its memo (compared as names are)."""
    if c.match_text is None:
        return True
    wanted = accounts.name_key(c.match_text)
    return any(t is not None and wanted in accounts.name_key(t) for t in (line.payee, line.memo))


def for_lines(account_id: int, lines: list[BankLine]) -> list[LineOccurrence | None]:
    """For each statement line of the account (in file order), the open occurrence of an
    active schedule on the account that it would meet when posted to the schedule's
    counter account: its amount fits, its booked_on is at most window_days from the
    due_on, match_text (when set) is in its payee or memo; the earliest due_on, then the
    lowest schedule id. A line takes an occurrence an earlier line took not: posting
    them in order meets one each. A schedule whose counter account is archived is left
    out (a line could not be posted there). Two queries whatever the lines' number (one
    when the account has no active schedule)."""
    out: list[LineOccurrence | None] = [None] * len(lines)
    if not lines or not validate.id_in_range(account_id):
        return out
    found = _postable_schedules(account_id)
    if not found:
        return out
    exact: dict[int, list[Candidate]] = {}
    loose: list[Candidate] = []
    for c in found:
        if c.tolerance_cents == 0:
            exact.setdefault(int(c.amount_cents), []).append(c)
        else:
            loose.append(c)
    widest = timedelta(days=max(c.window_days for c in found))
    open_ones = _OpenOccurrences(
        account_id,
        min(line.booked_on for line in lines) - widest,  # the due dates looked at
        max(line.booked_on for line in lines) + widest,
    )
    taken: set[tuple[int, date]] = set()
    for n, line in enumerate(lines):
        amount = int(line.amount_cents)
        fitting = [*exact.get(amount, ()), *(c for c in loose if amount_fits(c, amount))]
        best = _earliest_open(line, fitting, open_ones, taken)
        if best is not None:
            taken.add((best[1], best[2]))
            out[n] = LineOccurrence(best[1], best[2], best[3])
    return out


def _postable_schedules(account_id: int) -> list[Candidate]:
    """The account's active schedules whose counter account is open, by id."""
    rows = db.session.execute(
        select(*_COLUMNS)
        .join(Account, Account.id == Schedule.counter_account_id)
        .where(
            Schedule.active.is_(True),
            Schedule.account_id == account_id,
            Account.archived.is_(False),
        )
        .order_by(Schedule.id)
    ).all()
    return [Candidate._make(r) for r in rows]


class _OpenOccurrences:
    """The open (due_on, occurs_on) of a schedule of the account whose due_on is within
    first..last, in order: the stored statuses read once (one query), each schedule's
    rule dates worked out when first asked for."""

    def __init__(self, account_id: int, first: date, last: date):
        self.first, self.last = first, last
        shift = timedelta(days=schedule_rules.SHIFT_MAX)
        self.stored = {
            (r[0], r[1]): r[2]
            for r in db.session.execute(
                select(
                    ScheduleOccurrence.schedule_id,
                    ScheduleOccurrence.occurs_on,
                    ScheduleOccurrence.status,
                )
                .join(Schedule, Schedule.id == ScheduleOccurrence.schedule_id)
                .where(
                    Schedule.account_id == account_id,
                    Schedule.active.is_(True),
                    ScheduleOccurrence.occurs_on.between(first - shift, last + shift),
                )
            )
        }
        self.span: dict[int, list[tuple[date, date]]] = {}

    def __call__(self, c: Candidate) -> list[tuple[date, date]]:
        if c.id not in self.span:
            self.span[c.id] = [
                (due, on)
                for on, due in schedule_rules.due_in(c, self.first, self.last)
                if self.stored.get((c.id, on), "open") == "open"
            ]
        return self.span[c.id]


def _earliest_open(
    line: BankLine,
    fitting: list[Candidate],
    open_ones: _OpenOccurrences,
    taken: set[tuple[int, date]],
) -> tuple[date, int, date, int] | None:
    """Of the schedules whose amount fits the line, the open occurrence not yet taken
    that the line meets (its text fits, booked_on within the window of due_on) with the
    earliest due_on, then the lowest schedule id: (due_on, schedule id, occurs_on,
    counter account id), or None."""
    best: tuple[date, int, date, int] | None = None
    for c in fitting:
        if not _line_text_fits(c, line):
            continue
        near = open_ones(c)
        window = timedelta(days=c.window_days)
        for k in range(bisect_left(near, (line.booked_on - window, date.min)), len(near)):
            due, on = near[k]
            if due > line.booked_on + window:
                break
            if (c.id, on) in taken:
                continue
            if best is None or (due, c.id) < (best[0], best[1]):
                best = (due, int(c.id), on, int(c.counter_account_id))
            break
    return best
