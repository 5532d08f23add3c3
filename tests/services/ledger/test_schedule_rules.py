"""A schedule's recurrence (docs/schedules.md, "The rule"): RFC 5545's meaning of the
rule shapes the service takes, computed by dateutil.rrule from starts_on, the weekend
rule, and every refusal of a rule (400 naming `rrule`). Pure functions: no store."""

from __future__ import annotations

import time
from datetime import date

import pytest

from app.services.errors import BadRequestError
from app.services.ledger.schedule_rules import HORIZON_YEAR, Recurrence, checked, due_on, parse


def dates(rule: str, starts_on: date, last: date, first: date | None = None) -> list[str]:
    recurrence = Recurrence(rule, starts_on)
    return [d.isoformat() for d in recurrence.dates(first or starts_on, last)]


def test_first_of_each_month():
    assert dates("FREQ=MONTHLY;BYMONTHDAY=1", date(2026, 1, 15), date(2026, 4, 30)) == [
        "2026-02-01",
        "2026-03-01",
        "2026-04-01",
    ]


def test_every_year_on_31_january():
    assert dates("FREQ=YEARLY;BYMONTH=1;BYMONTHDAY=31", date(2026, 1, 1), date(2028, 12, 31)) == [
        "2026-01-31",
        "2027-01-31",
        "2028-01-31",
    ]


def test_last_friday_of_each_month():
    # A mistake of taking the first Friday (1FR) would give 2026-01-02.
    assert dates("FREQ=MONTHLY;BYDAY=-1FR", date(2026, 1, 1), date(2026, 4, 30)) == [
        "2026-01-30",
        "2026-02-27",
        "2026-03-27",
        "2026-04-24",
    ]


def test_every_two_weeks_on_monday():
    # RFC 5545 counts the weeks (from WKST, Monday) from the week of starts_on: 2026-01-01
    # is a Thursday of the week of Monday 2025-12-29, so the weeks taken are those of
    # 2025-12-29, 2026-01-12, ...; the next Monday after starts_on (2026-01-05) is in an
    # off week. "The first Monday on or after starts_on, then every 14 days" is wrong.
    assert dates("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO", date(2026, 1, 1), date(2026, 2, 28)) == [
        "2026-01-12",
        "2026-01-26",
        "2026-02-09",
        "2026-02-23",
    ]
    assert dates("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO", date(2026, 1, 5), date(2026, 1, 31)) == [
        "2026-01-05",
        "2026-01-19",
    ]


def test_last_day_of_each_month():
    assert dates("FREQ=MONTHLY;BYMONTHDAY=-1", date(2028, 1, 1), date(2028, 4, 30)) == [
        "2028-01-31",
        "2028-02-29",
        "2028-03-31",
        "2028-04-30",
    ]


def test_day_31_skips_the_months_that_lack_it():
    # RFC 5545: an invalid date is ignored, not moved to the month's last day.
    assert dates("FREQ=MONTHLY;BYMONTHDAY=31", date(2026, 1, 1), date(2026, 7, 31)) == [
        "2026-01-31",
        "2026-03-31",
        "2026-05-31",
        "2026-07-31",
    ]


def test_bysetpos_the_last_weekday_of_the_month():
    rule = "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1"
    assert dates(rule, date(2026, 1, 1), date(2026, 5, 31)) == [
        "2026-01-30",
        "2026-02-27",
        "2026-03-31",
        "2026-04-30",
        "2026-05-29",
    ]


def test_until_is_inclusive():
    rule = "FREQ=MONTHLY;BYMONTHDAY=1;UNTIL=20260301"
    assert dates(rule, date(2026, 1, 1), date(2026, 12, 31)) == [
        "2026-01-01",
        "2026-02-01",
        "2026-03-01",
    ]


def test_count_is_counted_from_starts_on_not_from_the_window():
    rule = "FREQ=MONTHLY;BYMONTHDAY=1;COUNT=3"
    # The window starts after the first occurrence: still only three in all.
    assert dates(rule, date(2026, 1, 1), date(2026, 12, 31), first=date(2026, 2, 1)) == [
        "2026-02-01",
        "2026-03-01",
    ]


def test_dates_before_starts_on_are_not_occurrences():
    recurrence = Recurrence("FREQ=MONTHLY;BYMONTHDAY=1", date(2026, 3, 2))
    assert not recurrence.gives(date(2026, 3, 1))
    assert recurrence.gives(date(2026, 4, 1))
    assert not recurrence.gives(date(2026, 4, 2))


def test_weekend_moves():
    saturday, sunday, monday = date(2026, 8, 1), date(2026, 8, 2), date(2026, 8, 3)
    assert due_on(saturday, "none") == saturday
    assert due_on(saturday, "before") == date(2026, 7, 31)
    assert due_on(sunday, "before") == date(2026, 7, 31)
    assert due_on(saturday, "after") == monday
    assert due_on(sunday, "after") == monday
    assert due_on(monday, "before") == monday


def test_due_between_counts_the_due_date_not_the_rule_date():
    # 2026-08-01 is a Saturday, due Monday 2026-08-03 under `after`.
    recurrence = Recurrence("FREQ=MONTHLY;BYMONTHDAY=1", date(2026, 1, 1), "after")
    assert list(recurrence.due_between(date(2026, 8, 2), date(2026, 8, 3))) == [
        (date(2026, 8, 1), date(2026, 8, 3))
    ]


@pytest.mark.parametrize(
    "rule",
    [
        "",
        "FREQ=HOURLY",
        "BYMONTHDAY=1",
        "FREQ=MONTHLY;BYHOUR=1",
        "FREQ=MONTHLY;FREQ=MONTHLY",
        "FREQ=MONTHLY;BYMONTHDAY=1;BYMONTHDAY=2",
        "FREQ=MONTHLY;COUNT=3;UNTIL=20270101",
        "FREQ=WEEKLY;BYDAY=1MO",
        "FREQ=DAILY;BYDAY=-1FR",
        "FREQ=MONTHLY;BYMONTHDAY=0",
        "FREQ=MONTHLY;BYMONTHDAY=32",
        "FREQ=MONTHLY;BYMONTHDAY=-32",
        "FREQ=MONTHLY;INTERVAL=0",
        "FREQ=MONTHLY;INTERVAL=1000",
        "FREQ=MONTHLY;COUNT=0",
        "FREQ=MONTHLY;COUNT=10000",
        "FREQ=MONTHLY;UNTIL=20270231",
        "FREQ=MONTHLY;UNTIL=2027-01-01",
        "FREQ=YEARLY;BYMONTH=13",
        "FREQ=MONTHLY;BYDAY=XX",
        "FREQ=MONTHLY;BYSETPOS=1",
        "FREQ=MONTHLY;WKST=XY",
        "FREQ=MONTHLY;BYMONTHDAY",
        "FREQ=MONTHLY;;BYMONTHDAY=1",
        "DTSTART=20260101;FREQ=MONTHLY",
        "FREQ=MONTHLY;INTERVAL=1,2",
    ],
)
def test_refused_rules_name_rrule(rule):
    with pytest.raises(BadRequestError) as refused:
        parse(rule)
    assert "'rrule'" in str(refused.value)


def test_the_contract_rules_parse():
    for rule in (
        "FREQ=MONTHLY;BYMONTHDAY=1",
        "FREQ=YEARLY;BYMONTH=1;BYMONTHDAY=31",
        "FREQ=MONTHLY;BYDAY=-1FR",
        "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO",
        "FREQ=MONTHLY;BYMONTHDAY=-1",
        "FREQ=YEARLY;BYDAY=20MO;WKST=SU",
    ):
        parse(rule)


@pytest.mark.parametrize(
    "rule, starts_on",
    [
        ("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", date(1900, 1, 1)),  # no 30 February
        ("FREQ=WEEKLY;BYMONTH=4;BYMONTHDAY=31", date(1900, 1, 1)),  # no 31 April
        ("FREQ=DAILY;INTERVAL=7;BYDAY=MO", date(2026, 12, 1)),  # every 7th day from a Tuesday
        ("FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29", date(2001, 1, 1)),  # no leap year
        ("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30;UNTIL=21001231", date(1900, 1, 1)),
        ("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30;COUNT=3", date(1900, 1, 1)),
    ],
)
def test_a_rule_that_gives_no_date_is_refused_in_bounded_time(rule, starts_on):
    # dateutil walks a rule day by day up to year 9999 looking for its next date: a rule
    # that gives none cost 3 to 5 s of CPU on every read. The walk now ends with
    # HORIZON_YEAR (about 0.15 s for a daily rule from 1900), and such a rule is refused.
    spent = time.process_time()
    assert Recurrence(rule, starts_on).first() is None
    with pytest.raises(BadRequestError) as refused:
        checked(rule, starts_on)
    assert str(refused.value).startswith("'rrule' gives no date")
    assert time.process_time() - spent < 2.0  # unbounded: over 6 s (two walks to 9999)


def test_the_horizon_keeps_every_date_the_books_can_hold():
    # The walk ends after HORIZON_YEAR, a year past the books' last year (2200): every
    # date up to then is given, none after it.
    assert HORIZON_YEAR == 2201
    rule = Recurrence("FREQ=MONTHLY;BYMONTHDAY=-1", date(1900, 1, 1))
    days = list(rule.dates(date(2200, 11, 1), date(2202, 2, 28)))
    assert days[0] == date(2200, 11, 30) and days[-1] == date(2201, 12, 31)
    assert len(days) == 14
    # A rule whose dates are rare but real is kept: 29 February on a Monday.
    assert checked("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", date(2026, 1, 1)).first() == (
        date(2044, 2, 29)
    )


def test_a_rule_that_ended_before_its_start_is_taken():
    # UNTIL before starts_on: a schedule that has ended, as the API lets one be set up.
    assert checked("FREQ=MONTHLY;UNTIL=20251231", date(2026, 1, 1)).first() is None
