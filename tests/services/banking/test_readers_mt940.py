"""MT940 read into the common shape: files from the mt-940 package's tests (ABN AMRO,
Citi, a German SEPA file with structured :86:) and hand-written messages for each rule."""

import datetime as dt
from pathlib import Path

import pytest

from app.services.banking.readers import StatementFormatError, read

FILES = Path(__file__).parent / "files"
D = dt.date


def test_abnamro_two_messages_of_one_account_with_a_header_and_unstructured_86():
    bank = read((FILES / "jejik_abnamro.sta").read_bytes())
    assert bank.format == "mt940"
    [statement] = bank.statements
    assert statement.bank_account == "517852257"
    assert statement.currency == "EUR"
    assert (statement.period_from, statement.period_to) == (None, None)
    assert statement.opening_balance_cents == 323628  # the first message's :60F:
    assert statement.closing_balance_cents == 184975  # the last message's :62M:
    assert statement.closing_balance_on == D(2011, 5, 24)
    assert len(statement.lines) == 10
    first, second = statement.lines[:2]
    assert (first.booked_on, first.amount_cents, first.bank_ref) == (D(2011, 5, 24), -900, None)
    assert first.memo == (
        "GIRO 428428 KPN - DIGITENNE BETALINGSKENM. 000000042188659 5314606715"
        " BETREFT FACTUUR D.D. 20-05-2011 INCL. 1,44 BTW"
    )
    assert second.booked_on == D(2011, 5, 23)  # the entry date 0523, not the value date 0521
    assert statement.lines[6].amount_cents == -10700  # "107," after an empty line


def test_citi_blank_entry_date_funds_code_and_empty_bank_reference():
    [statement] = read((FILES / "citi_mt940.txt").read_bytes()).statements
    assert statement.currency == "USD"
    assert [x.amount_cents for x in statement.lines] == [-21239, -36928, 0, 0, -56108]
    first = statement.lines[0]
    assert first.booked_on == D(2024, 3, 12)  # four spaces for the entry date: the value date
    assert first.bank_ref is None  # NONREF//: no reference at all
    assert first.memo == "/PT/FT/PY/SOMETHING FOO BAR 112233 123456789"
    assert statement.lines[2].memo is None  # a :61: with no :86:


def test_german_structured_86_payee_from_32_33_and_reversals():
    bank = read((FILES / "betterplace_sepa_mt9401_first_two.sta").read_bytes())
    first, second = bank.statements
    assert first.bank_account == "50880050/0194774600888"
    assert first.opening_balance_cents == -123471836  # :60F:D
    assert first.closing_balance_cents == -123762823
    assert [x.amount_cents for x in first.lines] == [
        30000,
        33533,
        1500000,
        6629508,
        91531155,
        -20488,
        -99994695,  # RC: a credit reversed
    ]
    assert first.lines[0].bank_ref == "0724710345313905"  # after //
    assert first.lines[3].bank_ref is None  # NONREF, nothing after it
    assert first.lines[0].memo == (
        "EREF+TFNR 40005 00005MTLG:Grund nicht spezifiziert Reject aus SEPA-Ueberweisungsauftrag"
    )
    credit = second.lines[0]
    assert credit.payee == "Richter Renate 70 Zeichen Beginn Fuellzeichen xxxxxxxx"
    assert credit.amount_cents == 1500005


BODY = """:20:STARTUMSE
:25:{account}
:28C:1/1
:60F:C{opening}EUR1000,00
{lines}
:62F:D{closing}EUR12,34
"""


def mt(lines: str, account="DE89370400440532013000", opening="261130", closing="261130") -> bytes:
    return BODY.format(account=account, opening=opening, closing=closing, lines=lines).encode()


@pytest.mark.parametrize(
    ("line", "day", "cents"),
    [
        (":61:2611301130C1,NTRFNONREF", D(2026, 11, 30), 100),
        (":61:2611301201D1,5NTRFNONREF", D(2026, 12, 1), -150),
        (":61:2612310102C2,00NTRFNONREF", D(2027, 1, 2), 200),  # booked in the next year
        (":61:2701011231D2,00NTRFNONREF", D(2026, 12, 31), -200),  # booked the year before
        (":61:261130RD3,10NTRFNONREF", D(2026, 11, 30), 310),  # a debit reversed: money in
        (":61:261130RC3,10NTRFNONREF", D(2026, 11, 30), -310),  # a credit reversed: out
        (":61:791231C1,00NTRFNONREF", D(2079, 12, 31), 100),  # YY below 80: 20YY
        (":61:800101C1,00NTRFNONREF", D(1980, 1, 1), 100),  # 80 and above: 19YY
    ],
)
def test_entry_date_marks_and_years(line, day, cents):
    [x] = read(mt(line)).statements[0].lines
    assert (x.booked_on, x.amount_cents) == (day, cents)


def test_reference_after_slashes_else_the_owners_and_the_86_that_follows():
    lines = ":61:261130C1,00NTRFINV-7//B-99\n:86:paid\n:61:261130C1,00NTRFINV-8\n:86:?32Acme"
    first, second = read(mt(lines)).statements[0].lines
    assert (first.bank_ref, first.memo, first.payee) == ("B-99", "paid", None)
    assert (second.bank_ref, second.payee) == ("INV-8", "Acme")


def test_swift_blocks_and_two_accounts():
    one = mt(":61:261130C1,00NTRFNONREF").decode().replace("\n", "\r\n")
    two = one.replace("DE89370400440532013000", "DE02 1001")
    data = (
        "{1:F01BANKDEFFAXXX0000000000}{2:O9401200261130BANKDEFFAXXX00000000002611301200N}{4:\r\n"
        + one
        + "-}{5:{CHK:123456789ABC}}\r\n"
        + "{1:F01BANKDEFFAXXX0000000000}{2:O940}{3:{108:ABC}}{4:\r\n"
        + two
        + "-}\r\n"
    ).encode()
    bank = read(data)
    assert [s.bank_account for s in bank.statements] == ["DE89370400440532013000", "DE02 1001"]
    assert [len(s.lines) for s in bank.statements] == [1, 1]


@pytest.mark.parametrize(
    ("data", "where", "problem"),
    [
        (mt(":61:261130C1,005NTRFNONREF"), "line 5", "more than two decimals"),
        (mt(":61:261131C1,00NTRFNONREF"), "line 5", "not a calendar date"),
        (mt(":61:yesterday"), "line 5", "not a statement line"),
        (mt("", opening="2611300"), "line 4", "not a balance"),
        (
            mt(":61:261130C1,00NTRFNONREF").replace(b":62F:D261130EUR12,34\n", b""),
            "line 1",
            "no closing balance",
        ),
    ],
)
def test_refusals_say_which_line(data, where, problem):
    with pytest.raises(StatementFormatError) as caught:
        read(data)
    assert caught.value.where == where
    assert problem in caught.value.problem
