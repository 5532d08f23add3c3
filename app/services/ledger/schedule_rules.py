"""A schedule's recurrence (docs/schedules.md, "The rule"): the RFC 5545 RRULE parts the
service takes, checked here, and its dates computed by dateutil.rrule (the well-kept
RFC 5545 implementation; no home-made date arithmetic), counted from `starts_on`.

`parse(text)` refuses (400 naming `rrule`) any part not taken, a part given twice, a
malformed value or one out of range, COUNT with UNTIL, an ordinal BYDAY outside
MONTHLY and YEARLY, and BYSETPOS without another BY part. `Recurrence` gives the rule
dates (`occurs_on`) in a window, whether a date is one, and each date's `due_on` after
the weekend rule.

A rule's dates are computed up to the end of HORIZON_YEAR, one year past the last year
a date of the books may have (validate.LAST_YEAR): dateutil walks a rule period by
period up to year 9999 looking for its next date, and a rule that gives none (BYMONTH=2
with BYMONTHDAY=30, say) walked about three million days for each read (3 to 5 s of
CPU). dateutil reads that end as its `datetime` module's MAXYEAR, so it is given a copy
of that module with MAXYEAR set to HORIZON_YEAR (`_bounded_dateutil`); nothing else
changes. A rule that gives no date up to then (or up to its UNTIL) is refused (`checked`,
400 naming `rrule`), so a stored rule gives one, unless its UNTIL is before its start.
"""

from __future__ import annotations

import datetime as _datetime_module
import re
import types
from collections.abc import Iterator, Sequence
from datetime import date, datetime, timedelta
from functools import lru_cache
from itertools import islice

from dateutil import rrule as du

from ..errors import BadRequestError
from . import validate

RRULE_MAX = 500
HORIZON_YEAR = validate.LAST_YEAR + 1


def _bounded_dateutil() -> None:
    """dateutil.rrule stops walking a rule after `datetime.MAXYEAR`, read from its own
    `datetime` module at each step: give it the same module with MAXYEAR at HORIZON_YEAR
    (see the module docstring)."""
    bounded = types.ModuleType("datetime")
    bounded.__dict__.update(vars(_datetime_module))
    bounded.MAXYEAR = HORIZON_YEAR  # type: ignore[attr-defined]
    du.datetime = bounded


_bounded_dateutil()
_FREQS = {"DAILY": du.DAILY, "WEEKLY": du.WEEKLY, "MONTHLY": du.MONTHLY, "YEARLY": du.YEARLY}
_DAYS = {"MO": du.MO, "TU": du.TU, "WE": du.WE, "TH": du.TH, "FR": du.FR, "SA": du.SA, "SU": du.SU}
_PARTS = (
    "FREQ",
    "INTERVAL",
    "COUNT",
    "UNTIL",
    "BYMONTH",
    "BYMONTHDAY",
    "BYDAY",
    "BYSETPOS",
    "WKST",
)
_NUMBER = re.compile(r"^[+-]?[0-9]{1,4}$")
_WEEKDAY = re.compile(r"^([+-]?[0-9]{1,2})?(MO|TU|WE|TH|FR|SA|SU)$")
_UNTIL = re.compile(r"^[0-9]{8}$")
# The weekend rule: days added to a Saturday's and a Sunday's rule date.
_WEEKEND_SHIFT = {"none": (0, 0), "before": (-1, -2), "after": (2, 1)}
SHIFT_MAX = 2  # a due date is at most this many days from its rule date


def _refuse(why: str) -> BadRequestError:
    return BadRequestError(f"'rrule' {why}")


def _numbers(name: str, value: str, low: int, high: int, *, signed: bool = False) -> list[int]:
    """A comma list of integers in low..high (and -high..-low when signed), never 0."""
    out = []
    for item in value.split(","):
        if not _NUMBER.match(item):
            raise _refuse(f"has a malformed {name}: {value!r}")
        n = int(item)
        if not (low <= n <= high or (signed and -high <= n <= -low)):
            span = f"{low} to {high}" + (f" or -{low} to -{high}" if signed else "")
            raise _refuse(f"{name} must be {span}; got {item}")
        out.append(n)
    return out


def _one(name: str, value: str, low: int, high: int) -> int:
    """A single unsigned integer in low..high."""
    if not value.isdigit():
        raise _refuse(f"has a malformed {name}: {value!r}")
    return _numbers(name, value, low, high)[0]


def parse(text) -> dict:
    """The rule's parts, checked, as dateutil.rrule's keyword arguments (no dtstart)."""
    if not isinstance(text, str) or not text.strip():
        raise BadRequestError(
            "'rrule' is required: an RFC 5545 rule like FREQ=MONTHLY;BYMONTHDAY=1"
        )
    if len(text) > RRULE_MAX:
        raise _refuse(f"must be at most {RRULE_MAX} characters")
    parts: dict[str, str] = {}
    for part in text.strip().upper().split(";"):
        name, sep, value = part.partition("=")
        if not sep or not value:
            raise _refuse(f"has a malformed part {part!r} (NAME=VALUE)")
        if name == "DTSTART":
            raise _refuse("takes no DTSTART: occurrences are counted from starts_on")
        if name not in _PARTS:
            raise _refuse(f"part {name} is not taken (taken: {', '.join(_PARTS)})")
        if name in parts:
            raise _refuse(f"gives {name} twice")
        parts[name] = value
    if "FREQ" not in parts:
        raise _refuse("needs FREQ")
    if parts["FREQ"] not in _FREQS:
        raise _refuse(f"FREQ must be one of {', '.join(_FREQS)}; got {parts['FREQ']}")
    freq = parts["FREQ"]
    kwargs: dict = {"freq": _FREQS[freq]}
    if "INTERVAL" in parts:
        kwargs["interval"] = _one("INTERVAL", parts["INTERVAL"], 1, 999)
    if "COUNT" in parts and "UNTIL" in parts:
        raise _refuse("takes COUNT or UNTIL, not both")
    if "COUNT" in parts:
        kwargs["count"] = _one("COUNT", parts["COUNT"], 1, 9999)
    if "UNTIL" in parts:
        kwargs["until"] = datetime.combine(_until(parts["UNTIL"]), datetime.min.time())
    if "BYMONTH" in parts:
        kwargs["bymonth"] = _numbers("BYMONTH", parts["BYMONTH"], 1, 12)
    if "BYMONTHDAY" in parts:
        kwargs["bymonthday"] = _numbers("BYMONTHDAY", parts["BYMONTHDAY"], 1, 31, signed=True)
    if "BYDAY" in parts:
        kwargs["byweekday"] = _weekdays(parts["BYDAY"], freq)
    if "BYSETPOS" in parts:
        if not {"BYMONTH", "BYMONTHDAY", "BYDAY"} & parts.keys():
            raise _refuse("takes BYSETPOS only with another BY part (RFC 5545)")
        kwargs["bysetpos"] = _numbers("BYSETPOS", parts["BYSETPOS"], 1, 366, signed=True)
    if "WKST" in parts:
        if parts["WKST"] not in _DAYS:
            raise _refuse(f"WKST must be a day (MO to SU); got {parts['WKST']}")
        kwargs["wkst"] = _DAYS[parts["WKST"]]
    return kwargs


def _until(value: str) -> date:
    if _UNTIL.match(value):
        try:
            return date(int(value[:4]), int(value[4:6]), int(value[6:]))
        except ValueError:
            pass
    raise _refuse(f"UNTIL must be a date YYYYMMDD; got {value!r}")


def _weekdays(value: str, freq: str) -> list:
    days = []
    for item in value.split(","):
        found = _WEEKDAY.match(item)
        if not found:
            raise _refuse(f"has a malformed BYDAY: {value!r}")
        ordinal, day = found.group(1), _DAYS[found.group(2)]
        if ordinal is None:
            days.append(day)
            continue
        if freq not in ("MONTHLY", "YEARLY"):
            raise _refuse(f"takes an ordinal BYDAY ({item}) only with FREQ=MONTHLY or YEARLY")
        n = int(ordinal)
        high = 5 if freq == "MONTHLY" else 53
        if not (1 <= n <= high or -high <= n <= -1):
            raise _refuse(f"BYDAY ordinal must be 1 to {high} or -1 to -{high}; got {item}")
        days.append(day(n))
    return days


def due_on(occurs_on: date, weekend: str) -> date:
    """The day an occurrence is due: its rule date, moved off a Saturday or Sunday to the
    Friday before (`before`) or the Monday after (`after`); unmoved under `none`."""
    weekday = occurs_on.weekday()
    if weekday < 5:
        return occurs_on
    return occurs_on + timedelta(days=_WEEKEND_SHIFT[weekend][weekday - 5])


class Recurrence:
    """A checked rule counted from `starts_on`: its rule dates and their due dates."""

    def __init__(self, text: str, starts_on: date, weekend: str = "none"):
        self.weekend = weekend
        self.starts_on = starts_on
        parts = parse(text)
        self.until: date | None = parts["until"].date() if "until" in parts else None
        self._rule = du.rrule(dtstart=datetime.combine(starts_on, datetime.min.time()), **parts)

    def dates(self, first: date, last: date) -> Iterator[date]:
        """The rule dates from `first` to `last` (inclusive), in order."""
        first = max(first, self.starts_on)
        if last < first:
            return
        start = datetime.combine(first, datetime.min.time())
        end = datetime.combine(last, datetime.min.time())
        for moment in self._rule.xafter(start, inc=True):
            if moment > end:
                return
            yield moment.date()

    def due_between(self, first: date, last: date) -> Iterator[tuple[date, date]]:
        """(occurs_on, due_on) of every occurrence whose due_on is within first..last."""
        low, high = first - timedelta(days=SHIFT_MAX), last + timedelta(days=SHIFT_MAX)
        for day in self.dates(low, high):
            due = due_on(day, self.weekend)
            if first <= due <= last:
                yield day, due

    def first(self) -> date | None:
        """The rule's first date (on or after starts_on), or None when it gives none up
        to the end of HORIZON_YEAR."""
        return next(self.dates(self.starts_on, date(HORIZON_YEAR, 12, 31)), None)

    def gives(self, day: date) -> bool:
        """Whether `day` is one of the rule's dates (on or after starts_on)."""
        return next(self.dates(day, day), None) == day


def checked(text: str, starts_on: date, weekend: str = "none") -> Recurrence:
    """A rule as a schedule takes it: parsed (400 naming `rrule`) and giving at least one
    date from starts_on up to its UNTIL or the end of HORIZON_YEAR (else 400 naming
    `rrule`); a rule that ended before starts_on (UNTIL before it) gives none and is
    taken, as a schedule that has ended."""
    rule = Recurrence(text, starts_on, weekend)
    until = rule.until
    if rule.first() is None and (until is None or until >= starts_on):
        raise _refuse(
            f"gives no date from {starts_on.isoformat()} to the end of {HORIZON_YEAR}"
            " (as a rule such as BYMONTH=2;BYMONTHDAY=30 never does)"
        )
    return rule


# Speed (docs/schedules.md, "Speed"): dateutil builds and walks a rule slowly (some
# 200 µs a schedule for a year), and schedules share rules (the dues of many members:
# one rule, one start). The rules are kept by their text, start and weekend rule, and
# the occurrences of a window by the same and the window, at most CACHED_DATES of them
# (a longer window is computed each time), so the memory held stays bounded (at most
# RULES_KEPT rules and WINDOWS_KEPT windows of at most CACHED_DATES dates).
RULES_KEPT = 1024
WINDOWS_KEPT = 512
CACHED_DATES = 400


@lru_cache(maxsize=RULES_KEPT)
def _rule(text: str, starts_on: date, weekend: str) -> Recurrence:
    return Recurrence(text, starts_on, weekend)


@lru_cache(maxsize=WINDOWS_KEPT)
def _window(
    text: str, starts_on: date, weekend: str, first: date, last: date
) -> tuple[tuple[date, date], ...] | None:
    dates = _rule(text, starts_on, weekend).due_between(first, last)
    found = tuple(islice(dates, CACHED_DATES + 1))
    return found if len(found) <= CACHED_DATES else None


class DayTexts(dict):
    """date -> (its ISO text, its day number), each made once: the listing and the
    forecast write the same dates for many schedules (docs/schedules.md, "Speed")."""

    def __missing__(self, day: date) -> tuple[str, int]:
        made = self[day] = (day.isoformat(), day.toordinal())
        return made


def of(row) -> Recurrence:
    """A stored schedule's rule (any object with rrule, starts_on and weekend)."""
    return _rule(row.rrule, row.starts_on, row.weekend)


def due_in(row, first: date, last: date) -> Sequence[tuple[date, date]]:
    """(occurs_on, due_on) of every occurrence of a stored schedule's rule whose due_on
    is within first..last, in order (Recurrence.due_between, kept for the next call)."""
    kept = _window(row.rrule, row.starts_on, row.weekend, first, last)
    if kept is not None:
        return kept
    return list(of(row).due_between(first, last))
