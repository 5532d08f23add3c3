"""OFX 1.x/2.x, QFX and card statements read into the common shape, pinned against real
files (tests/services/banking/files, README there) and small hand-written ones."""

import datetime as dt
from pathlib import Path

import pytest

from app.services.banking.readers import StatementFormatError, read

FILES = Path(__file__).parent / "files"
D = dt.date


def test_ofxparse_bank_medium_sgml_with_unclosed_leaves():
    bank = read((FILES / "ofxparse_bank_medium.ofx").read_bytes())
    assert bank.format == "ofx"
    [statement] = bank.statements
    assert statement.bank_account == "12300 000012345678"
    assert statement.currency == "CAD"
    assert (statement.period_from, statement.period_to) == (D(2009, 4, 1), D(2009, 5, 23))
    assert statement.opening_balance_cents is None  # OFX carries no opening balance
    assert statement.closing_balance_cents == 38234  # LEDGERBAL, not AVAILBAL (682.34)
    assert statement.closing_balance_on == D(2009, 5, 23)
    assert [(x.booked_on, x.amount_cents) for x in statement.lines] == [
        (D(2009, 4, 1), -660),
        (D(2009, 4, 2), -31667),
        (D(2009, 4, 3), -2200),
    ]
    first = statement.lines[0]
    assert first.payee == "MCDONALD'S #112"
    assert first.memo == "POS MERCHANDISE;MCDONALD'S #112"
    assert first.bank_ref == "0000123456782009040100001"


def test_ofxparse_chase_qfx_card_statement_in_windows_1252():
    [statement] = read((FILES / "ofxparse_chase_cc.qfx").read_bytes()).statements
    assert statement.bank_account == "0123012301230123"  # CCACCTFROM
    assert statement.currency == "USD"
    assert statement.closing_balance_cents == -1000
    [line] = statement.lines
    assert line.payee == "SQ *ECCO UN POCO \u00a6 NATURA"  # byte 0xA6 read as CHARSET:1252
    assert (line.booked_on, line.amount_cents) == (D(2020, 1, 1), -1000)
    assert line.memo is None


def test_ofxparse_two_accounts_are_two_statements():
    bank = read((FILES / "ofxparse_multiple_accounts.ofx").read_bytes())
    assert [s.bank_account for s in bank.statements] == ["78934567889", "89273829182"]
    assert [len(s.lines) for s in bank.statements] == [4, 1]
    assert bank.statements[0].lines[1].memo == "tsriuenrauise"
    assert bank.statements[1].lines[0].amount_cents == 12300


OFX2 = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>
<OFX><BANKMSGSRSV1>
{trnrs}
</BANKMSGSRSV1></OFX>
"""
TRNRS = """<STMTTRNRS><TRNUID>1</TRNUID><STMTRS><CURDEF>EUR</CURDEF>
<BANKACCTFROM><BANKID>1</BANKID><ACCTID>{acct}</ACCTID><ACCTTYPE>CHECKING</ACCTTYPE></BANKACCTFROM>
<BANKTRANLIST><DTSTART>{start}</DTSTART><DTEND>{end}</DTEND>
<STMTTRN><TRNTYPE>DEBIT</TRNTYPE><DTPOSTED>{posted}</DTPOSTED><TRNAMT>{amount}</TRNAMT>
<FITID>{fitid}</FITID><PAYEE><NAME>Caf\u00e9 &amp; Co</NAME><ADDR1>x</ADDR1></PAYEE>
<MEMO>  two   spaces </MEMO></STMTTRN>
</BANKTRANLIST>
<LEDGERBAL><BALAMT>{balance}</BALAMT><DTASOF>{end}</DTASOF></LEDGERBAL>
</STMTRS></STMTTRNRS>"""


def ofx2(*parts: dict) -> bytes:
    defaults = {
        "acct": "NL01 BANK",
        "start": "20261101",
        "end": "20261130",
        "posted": "20261127120000.000[-5:EST]",
        "amount": "-12.5",
        "fitid": "F1",
        "balance": "100.00",
    }
    body = "\n".join(TRNRS.format(**{**defaults, **p}) for p in parts)
    return OFX2.format(trnrs=body).encode("utf-8")


def test_ofx2_xml_payee_aggregate_entities_and_date_forms():
    [statement] = read(ofx2({})).statements
    [line] = statement.lines
    assert line.booked_on == D(2026, 11, 27)
    assert line.amount_cents == -1250
    assert line.payee == "Caf\u00e9 & Co"  # PAYEE/NAME, the &amp; decoded
    assert line.memo == "two spaces"
    assert line.bank_ref == "F1"
    assert statement.closing_balance_cents == 10000


def test_several_stmttrnrs_of_one_account_are_read_as_one():
    bank = read(
        ofx2(
            {"start": "20261001", "end": "20261031", "fitid": "A", "balance": "1.00"},
            {
                "acct": "nl01bank",
                "start": "20261101",
                "end": "20261130",
                "fitid": "B",
                "balance": "2.00",
            },
        )
    )
    [statement] = bank.statements
    assert [x.bank_ref for x in statement.lines] == ["A", "B"]
    assert (statement.period_from, statement.period_to) == (D(2026, 10, 1), D(2026, 11, 30))
    assert (statement.closing_balance_cents, statement.closing_balance_on) == (200, D(2026, 11, 30))


@pytest.mark.parametrize(
    ("posted", "day"),
    [
        ("20261127", D(2026, 11, 27)),
        ("20261127120000", D(2026, 11, 27)),
        ("20261127120000.000[-5:EST]", D(2026, 11, 27)),
        ("202611271200[+5.30:IST]", D(2026, 11, 27)),
    ],
)
def test_ofx_date_forms(posted, day):
    assert read(ofx2({"posted": posted})).statements[0].lines[0].booked_on == day


@pytest.mark.parametrize(
    ("change", "where", "problem"),
    [
        ({"amount": "-12.505"}, "line 7", "more than two decimals"),
        ({"amount": "1e5"}, "line 7", "not a number"),
        ({"posted": "18991231"}, "line 7", "outside 1900 to 2200"),
        ({"posted": "22010101"}, "line 7", "outside 1900 to 2200"),
        ({"posted": "20260230"}, "line 7", "not a calendar date"),
        ({"posted": "yesterday"}, "line 7", "not an OFX date"),
    ],
)
def test_ofx_refusals_say_where(change, where, problem):
    with pytest.raises(StatementFormatError) as caught:
        read(ofx2(change))
    assert caught.value.where == where
    assert problem in caught.value.problem
    assert caught.value.status == 400


def test_a_file_with_no_statement_is_refused():
    data = (
        b"OFXHEADER:100\nDATA:OFXSGML\n\n"
        b"<OFX><SIGNONMSGSRSV1><SONRS><STATUS><CODE>0</STATUS></SONRS></SIGNONMSGSRSV1></OFX>"
    )
    with pytest.raises(StatementFormatError, match="no bank or card statement"):
        read(data)


def test_only_xml_entities_and_character_references_are_decoded():
    data = ofx2({}).replace("Caf\u00e9 &amp; Co".encode(), b"A &amp;lt; B &#38; C &#x41; &copy;")
    assert read(data).statements[0].lines[0].payee == "A &lt; B & C A &copy;"
