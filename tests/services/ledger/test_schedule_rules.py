"""A schedule's recurrence (docs/schedules.md, "The rule"): RFC 5545's meaning of the
rule shapes the service takes, computed by dateutil.rrule from starts_on, the weekend
rule, and every refusal of a rule (400 naming `rrule`). Pure functions: no store."""

from __future__ import annotations

from datetime import date

import pytest

from app.services.errors import BadRequestError
from app.services.ledger.schedule_rules import Recurrence, due_on, parse


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
