"""The plain-text rules on their own: reversible account names, exact amounts."""

import pytest
import regex
from beancount.core.account import ACCOUNT_RE
from hypothesis import given, settings
from hypothesis import strategies as st

from app.services.interchange import plaintext
from app.services.interchange.parsed import parse_amount
from app.services.interchange.plaintext import ParseProblem

KINDS = ("asset", "liability", "equity", "income", "expense")
# Account names as the service stores them: trimmed, non-empty, any characters but NUL.
names = (
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1)
    .map(str.strip)
    .filter(bool)
)


@settings(max_examples=400)
@given(kind=st.sampled_from(KINDS), name=names)
def test_hledger_names_round_trip_and_never_hold_two_spaces(kind, name):
    full = plaintext.hledger_account(kind, name)
    assert plaintext.account_from_hledger(full, 1) == (kind, name)
    assert "  " not in full and "\t" not in full and ";" not in full and "\n" not in full
    assert full.startswith(plaintext.HLEDGER_TOP[kind] + ":")


@settings(max_examples=400)
@given(kind=st.sampled_from(KINDS), name=names)
def test_beancount_names_round_trip_and_obey_beancount_syntax(kind, name):
    full = plaintext.beancount_account(kind, name)
    assert plaintext.account_from_beancount(full, 1) == (kind, name)
    assert regex.fullmatch(ACCOUNT_RE, full), full


@pytest.mark.parametrize(
    "name, hledger, beancount",
    [
        ("Checking", "assets:Checking", "Assets:Checking"),
        ("Petty cash", "assets:Petty cash", "Assets:Petty-cash"),
        ("Co-op", "assets:Co-op", "Assets:Co--2Dop"),
        ("checking", "assets:checking", "Assets:X--63hecking"),
        ("Bank:Main", "assets:Bank:Main", "Assets:Bank:Main"),
        ("Bank:", "assets:Bank%3A", "Assets:Bank--3A"),
        ("50% off", "assets:50%25 off", "Assets:50--25-off"),
        ("a  b", "assets:a %20b", "Assets:X--61--20-b"),
    ],
)
def test_documented_examples(name, hledger, beancount):
    assert plaintext.hledger_account("asset", name) == hledger
    assert plaintext.beancount_account("asset", name) == beancount


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_cents_format_and_parse_are_exact_inverses(cents):
    text = plaintext.format_cents(cents)
    assert parse_amount(text, 1) == (cents, "")
    assert parse_amount(text + " USD", 1) == (cents, "USD")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("$1,234.56", (123456, "$")),
        ("-$5", (-500, "$")),
        ("$-5.5", (-550, "$")),
        ("12.340 EUR", (1234, "EUR")),
        ("0.07", (7, "")),
        ('3 "ACME Corp"', (300, "ACME Corp")),
    ],
)
def test_hand_written_amounts(text, expected):
    assert parse_amount(text, 1) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("1.005 USD", "finer than a cent"),
        ("0.001", "finer than a cent"),
        ("1,23.00", "not a plain"),
        ("(2 + 3) USD", "not a plain amount"),
        ("$5 USD", "not a plain amount"),
        ("--5", "not a plain amount"),
    ],
)
def test_amounts_refused_never_rounded(text, message):
    with pytest.raises(ParseProblem) as info:
        parse_amount(text, 42)
    assert info.value.line == 42
    assert message in info.value.message


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# Any text, with a good share starting with apostrophes and formula characters.
csv_texts = st.builds(
    lambda head, rest: head + rest,
    st.text(st.sampled_from("'=+-@\t\r a"), max_size=5),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
)


@settings(max_examples=500)
@given(text=csv_texts)
def test_csv_text_cells_never_start_a_formula_and_read_back_exactly(text):
    cell = plaintext.csv_text_cell(text)
    assert not cell.startswith(FORMULA_STARTS), cell
    assert plaintext.csv_text_value(cell) == text
    assert cell in (text, "'" + text)


@pytest.mark.parametrize(
    "text, cell",
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("'=already quoted", "''=already quoted"),
        ("''+x", "'''+x"),
        ("'tis fine", "'tis fine"),
        ("'", "'"),
        ("", ""),
        ("Plain", "Plain"),
        ("a=b", "a=b"),
        (" =x", " =x"),
    ],
)
def test_csv_text_cell_examples(text, cell):
    assert plaintext.csv_text_cell(text) == cell
    assert plaintext.csv_text_value(cell) == text
