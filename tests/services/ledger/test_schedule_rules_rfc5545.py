"""The rule shapes a schedule takes, against the worked examples of RFC 5545 itself
(section 3.8.5.3, "Recurrence Rule", Examples): every example whose parts the service
takes (docs/schedules.md, "The rule"), with its DTSTART as `starts_on` and the dates the
RFC lists. The RFC's examples start at 09:00 local time; a schedule's dates are days, so
their dates are the same as days, but for an UNTIL at 00:00 UTC on a day the RFC then
leaves out, which a schedule's inclusive UNTIL (a day) keeps: said where it happens. Examples with
parts the service does not take (BYYEARDAY, BYWEEKNO, BYHOUR, BYMINUTE, HOURLY,
MINUTELY) are left out. Pure functions: no store."""

from __future__ import annotations

from datetime import date

import pytest

from app.services.ledger.schedule_rules import checked

RFC5545 = [
    # (the RFC's title, DTSTART, RRULE, how far to read, the dates it lists)
    (
        "Daily for 10 occurrences",
        "1997-09-02",
        "FREQ=DAILY;COUNT=10",
        "1998-12-31",
        "1997-09-02 09-03 09-04 09-05 09-06 09-07 09-08 09-09 09-10 09-11",
    ),
    (
        "Every 10 days, 5 occurrences",
        "1997-09-02",
        "FREQ=DAILY;INTERVAL=10;COUNT=5",
        "1998-12-31",
        "1997-09-02 09-12 09-22 10-02 10-12",
    ),
    (
        "Every other day - forever (the first ten)",
        "1997-09-02",
        "FREQ=DAILY;INTERVAL=2",
        "1997-09-20",
        "1997-09-02 09-04 09-06 09-08 09-10 09-12 09-14 09-16 09-18 09-20",
    ),
    (
        "Weekly for 10 occurrences",
        "1997-09-02",
        "FREQ=WEEKLY;COUNT=10",
        "1998-12-31",
        "1997-09-02 09-09 09-16 09-23 09-30 10-07 10-14 10-21 10-28 11-04",
    ),
    (
        "Every other week - forever (to the end of January 1998)",
        "1997-09-02",
        "FREQ=WEEKLY;INTERVAL=2;WKST=SU",
        "1998-01-31",
        "1997-09-02 09-16 09-30 10-14 10-28 11-11 11-25 12-09 12-23 1998-01-06 01-20",
    ),
    (
        "Weekly on Tuesday and Thursday for five weeks",
        "1997-09-02",
        "FREQ=WEEKLY;COUNT=10;WKST=SU;BYDAY=TU,TH",
        "1998-12-31",
        "1997-09-02 09-04 09-09 09-11 09-16 09-18 09-23 09-25 09-30 10-02",
    ),
    (
        # The RFC's UNTIL=19971007T000000Z falls before 7 October's 09:00 start, so it
        # lists ten dates; a schedule's UNTIL is a day, inclusive: 7 October is kept.
        "Weekly on Tuesday and Thursday for five weeks (UNTIL, a day: inclusive)",
        "1997-09-02",
        "FREQ=WEEKLY;UNTIL=19971007;WKST=SU;BYDAY=TU,TH",
        "1998-12-31",
        "1997-09-02 09-04 09-09 09-11 09-16 09-18 09-23 09-25 09-30 10-02 10-07",
    ),
    (
        "Every other week on Tuesday and Thursday, for 8 occurrences",
        "1997-09-02",
        "FREQ=WEEKLY;INTERVAL=2;COUNT=8;WKST=SU;BYDAY=TU,TH",
        "1998-12-31",
        "1997-09-02 09-04 09-16 09-18 09-30 10-02 10-14 10-16",
    ),
    (
        "Monthly on the first Friday for 10 occurrences",
        "1997-09-05",
        "FREQ=MONTHLY;COUNT=10;BYDAY=1FR",
        "1998-12-31",
        "1997-09-05 10-03 11-07 12-05 1998-01-02 02-06 03-06 04-03 05-01 06-05",
    ),
    (
        "Monthly on the first Friday until December 24, 1997",
        "1997-09-05",
        "FREQ=MONTHLY;UNTIL=19971224;BYDAY=1FR",
        "1998-12-31",
        "1997-09-05 10-03 11-07 12-05",
    ),
    (
        "Every other month on the first and last Sunday of the month for 10 occurrences",
        "1997-09-07",
        "FREQ=MONTHLY;INTERVAL=2;COUNT=10;BYDAY=1SU,-1SU",
        "1998-12-31",
        "1997-09-07 09-28 11-02 11-30 1998-01-04 01-25 03-01 03-29 05-03 05-31",
    ),
    (
        "Monthly on the second-to-last Monday of the month for 6 months",
        "1997-09-22",
        "FREQ=MONTHLY;COUNT=6;BYDAY=-2MO",
        "1998-12-31",
        "1997-09-22 10-20 11-17 12-22 1998-01-19 02-16",
    ),
    (
        "Monthly on the third-to-the-last day of the month, forever (six)",
        "1997-09-28",
        "FREQ=MONTHLY;BYMONTHDAY=-3",
        "1998-02-28",
        "1997-09-28 10-29 11-28 12-29 1998-01-29 02-26",
    ),
    (
        "Monthly on the 2nd and 15th of the month for 10 occurrences",
        "1997-09-02",
        "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=2,15",
        "1998-12-31",
        "1997-09-02 09-15 10-02 10-15 11-02 11-15 12-02 12-15 1998-01-02 01-15",
    ),
    (
        "Monthly on the first and last day of the month for 10 occurrences",
        "1997-09-30",
        "FREQ=MONTHLY;COUNT=10;BYMONTHDAY=1,-1",
        "1998-12-31",
        "1997-09-30 10-01 10-31 11-01 11-30 12-01 12-31 1998-01-01 01-31 02-01",
    ),
    (
        "Every 18 months on the 10th thru 15th of the month for 10 occurrences",
        "1997-09-10",
        "FREQ=MONTHLY;INTERVAL=18;COUNT=10;BYMONTHDAY=10,11,12,13,14,15",
        "2001-12-31",
        "1997-09-10 09-11 09-12 09-13 09-14 09-15 1999-03-10 03-11 03-12 03-13",
    ),
    (
        "Every Tuesday, every other month (to March 1998)",
        "1997-09-02",
        "FREQ=MONTHLY;INTERVAL=2;BYDAY=TU",
        "1998-03-31",
        "1997-09-02 09-09 09-16 09-23 09-30 11-04 11-11 11-18 11-25"
        " 1998-01-06 01-13 01-20 01-27 03-03 03-10 03-17 03-24 03-31",
    ),
    (
        "Yearly in June and July for 10 occurrences",
        "1997-06-10",
        "FREQ=YEARLY;COUNT=10;BYMONTH=6,7",
        "2003-12-31",
        "1997-06-10 07-10 1998-06-10 07-10 1999-06-10 07-10 2000-06-10 07-10 2001-06-10 07-10",
    ),
    (
        "Every other year on January, February, and March for 10 occurrences",
        "1997-03-10",
        "FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2,3",
        "2005-12-31",
        "1997-03-10 1999-01-10 02-10 03-10 2001-01-10 02-10 03-10 2003-01-10 02-10 03-10",
    ),
    (
        "Every 20th Monday of the year, forever (three)",
        "1997-05-19",
        "FREQ=YEARLY;BYDAY=20MO",
        "1999-12-31",
        "1997-05-19 1998-05-18 1999-05-17",
    ),
    (
        "Every Thursday in March, forever (three years)",
        "1997-03-13",
        "FREQ=YEARLY;BYMONTH=3;BYDAY=TH",
        "1999-12-31",
        "1997-03-13 03-20 03-27 1998-03-05 03-12 03-19 03-26 1999-03-04 03-11 03-18 03-25",
    ),
    (
        "Every Thursday, but only during June, July, and August, forever (1997)",
        "1997-06-05",
        "FREQ=YEARLY;BYDAY=TH;BYMONTH=6,7,8",
        "1997-12-31",
        "1997-06-05 06-12 06-19 06-26 07-03 07-10 07-17 07-24 07-31 08-07 08-14 08-21 08-28",
    ),
    (
        "Every Friday the 13th, forever (five)",
        "1997-09-02",
        "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13",
        "2000-12-31",
        "1998-02-13 03-13 11-13 1999-08-13 2000-10-13",
    ),
    (
        "The first Saturday that follows the first Sunday of the month, forever (ten)",
        "1997-09-13",
        "FREQ=MONTHLY;BYDAY=SA;BYMONTHDAY=7,8,9,10,11,12,13",
        "1998-06-30",
        "1997-09-13 10-11 11-08 12-13 1998-01-10 02-07 03-07 04-11 05-09 06-13",
    ),
    (
        "Every 4 years, the first Tuesday after a Monday in November (three)",
        "1996-11-05",
        "FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8",
        "2004-12-31",
        "1996-11-05 2000-11-07 2004-11-02",
    ),
    (
        "The third instance into the month of one of Tuesday, Wednesday, or Thursday,"
        " for the next 3 months",
        "1997-09-04",
        "FREQ=MONTHLY;COUNT=3;BYDAY=TU,WE,TH;BYSETPOS=3",
        "1998-12-31",
        "1997-09-04 10-07 11-06",
    ),
    (
        "The second-to-last weekday of the month (seven)",
        "1997-09-29",
        "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2",
        "1998-03-31",
        "1997-09-29 10-30 11-27 12-30 1998-01-29 02-26 03-30",
    ),
    (
        "The days generated make a difference because of WKST (MO)",
        "1997-08-05",
        "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO",
        "1998-12-31",
        "1997-08-05 08-10 08-19 08-24",
    ),
    (
        "Changing only WKST from MO to SU yields different results",
        "1997-08-05",
        "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU",
        "1998-12-31",
        "1997-08-05 08-17 08-19 08-31",
    ),
    (
        "An invalid date (i.e., February 30) is ignored",
        "2007-01-15",
        "FREQ=MONTHLY;BYMONTHDAY=15,30;COUNT=5",
        "2008-12-31",
        "2007-01-15 01-30 02-15 03-15 03-30",
    ),
]


def listed(dates: str) -> list[str]:
    """The RFC's way of listing: a year is named once, then month-day until the next."""
    out, year = [], ""
    for item in dates.split():
        if len(item) == 10:
            year, item = item[:4], item[5:]
        out.append(f"{year}-{item}")
    return out


@pytest.mark.parametrize(
    "starts_on, rule, last, dates",
    [example[1:] for example in RFC5545],
    ids=[e[0] for e in RFC5545],
)
def test_the_rfc_examples(starts_on, rule, last, dates):
    start = date.fromisoformat(starts_on)
    given = checked(rule, start).dates(start, date.fromisoformat(last))
    assert [d.isoformat() for d in given] == listed(dates)


def test_every_part_the_service_takes_is_in_an_example():
    parts = {part.split("=")[0] for _, _, rule, _, _ in RFC5545 for part in rule.split(";")}
    assert parts == {
        "FREQ", "INTERVAL", "COUNT", "UNTIL", "BYMONTH", "BYMONTHDAY", "BYDAY", "BYSETPOS", "WKST"
    }  # fmt: skip
