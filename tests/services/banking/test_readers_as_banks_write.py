"""Files as banks write them (docs/statements.md, "Reading the files"): shapes real
statement files have that an earlier reader refused or read wrong, each in a small file
written for this project the way a bank writes it, with the exact lines and closing
balance it must read as."""

from __future__ import annotations

import datetime as dt

import pytest

from app.services.banking.readers import StatementFormatError, read

D = dt.date


def lines_of(data: str | bytes) -> list[tuple]:
    """(booked_on, amount_cents, payee, memo, bank_ref) of each line of the one statement."""
    [statement] = read(data.encode() if isinstance(data, str) else data).statements
    return [(x.booked_on, x.amount_cents, x.payee, x.memo, x.bank_ref) for x in statement.lines]


def closing_of(data: str | bytes) -> tuple:
    [statement] = read(data.encode() if isinstance(data, str) else data).statements
    return statement.closing_balance_cents, statement.closing_balance_on


# --- camt: dates with a time-zone offset ----------------------------------------------

# A camt.053.001.02 as a Swiss or German bank's export writes it: xs:date values with the
# zone of the bank (the schema allows an offset after a date, and Z).
CAMT_ZONED = """<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">
  <BkToCstmrStmt>
    <GrpHdr><MsgId>053D2017040100001</MsgId><CreDtTm>2017-04-02T06:10:11+02:00</CreDtTm></GrpHdr>
    <Stmt>
      <Id>053D2017040100001-1</Id>
      <CreDtTm>2017-04-02T06:10:11+02:00</CreDtTm>
      <FrToDt><FrDtTm>2017-04-01T00:00:00+02:00</FrDtTm><ToDtTm>2017-04-01T23:59:59+02:00</ToDtTm></FrToDt>
      <Acct><Id><IBAN>CH9300762011623852957</IBAN></Id><Ccy>CHF</Ccy></Acct>
      <Bal>
        <Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp>
        <Amt Ccy="CHF">1200.00</Amt><CdtDbtInd>CRDT</CdtDbtInd>
        <Dt><Dt>2017-04-01+02:00</Dt></Dt>
      </Bal>
      <Bal>
        <Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp>
        <Amt Ccy="CHF">1130.50</Amt><CdtDbtInd>CRDT</CdtDbtInd>
        <Dt><Dt>2017-04-01Z</Dt></Dt>
      </Bal>
      <Ntry>
        <Amt Ccy="CHF">69.50</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts>
        <BookgDt><Dt>2017-04-01+02:00</Dt></BookgDt>
        <ValDt><Dt>2017-04-03+02:00</Dt></ValDt>
        <AcctSvcrRef>20170401001234567</AcctSvcrRef>
        <NtryDtls><TxDtls>
          <RltdPties><Cdtr><Nm>Swisscom (Schweiz) AG</Nm></Cdtr></RltdPties>
          <RmtInf><Ustrd>Rechnung 2017-03</Ustrd></RmtInf>
        </TxDtls></NtryDtls>
      </Ntry>
    </Stmt>
  </BkToCstmrStmt>
</Document>
"""


def test_camt_dates_with_a_time_zone_offset_are_read_as_their_date():
    assert lines_of(CAMT_ZONED) == [
        (D(2017, 4, 1), -6950, "Swisscom (Schweiz) AG", "Rechnung 2017-03", "20170401001234567")
    ]
    [statement] = read(CAMT_ZONED.encode()).statements
    assert statement.opening_balance_cents == 120000
    assert (statement.closing_balance_cents, statement.closing_balance_on) == (
        113050,
        D(2017, 4, 1),  # 2017-04-01Z
    )
    assert (statement.period_from, statement.period_to) == (D(2017, 4, 1), D(2017, 4, 1))


@pytest.mark.parametrize("day", ["2017-04-01+2:00", "2017-04-01+02:00junk", "2017-04-01 +02:00"])
def test_camt_a_date_followed_by_anything_but_a_time_or_a_zone_is_still_refused(day):
    data = CAMT_ZONED.replace("<BookgDt><Dt>2017-04-01+02:00", f"<BookgDt><Dt>{day}")
    with pytest.raises(StatementFormatError, match="is not YYYY-MM-DD"):
        read(data.encode())


# --- amounts: zeros beyond the second decimal -----------------------------------------

# OFX 1.x as a US credit union's online banking writes it: three decimals on every amount.
OFX_THREE_DECIMALS = """OFXHEADER:100
DATA:OFXSGML
VERSION:102
SECURITY:NONE
ENCODING:USASCII
CHARSET:1252
COMPRESSION:NONE
OLDFILEUID:NONE
NEWFILEUID:NONE

<OFX>
<SIGNONMSGSRSV1><SONRS><STATUS><CODE>0<SEVERITY>INFO</STATUS><DTSERVER>20190305120000
<LANGUAGE>ENG</SONRS></SIGNONMSGSRSV1>
<BANKMSGSRSV1><STMTTRNRS><TRNUID>0<STATUS><CODE>0<SEVERITY>INFO</STATUS>
<STMTRS><CURDEF>USD
<BANKACCTFROM><BANKID>256074974<ACCTID>0001234567<ACCTTYPE>CHECKING</BANKACCTFROM>
<BANKTRANLIST><DTSTART>20190201<DTEND>20190228
<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20190204<TRNAMT>-18.150<FITID>201902041
<NAME>KROGER #0412<MEMO>POS PURCHASE
</STMTTRN>
<STMTTRN><TRNTYPE>CREDIT<DTPOSTED>20190215<TRNAMT>1250.000<FITID>201902152
<NAME>ACME PAYROLL<MEMO>DIRECT DEP
</STMTTRN>
</BANKTRANLIST>
<LEDGERBAL><BALAMT>2431.8500<DTASOF>20190228</LEDGERBAL>
</STMTRS></STMTTRNRS></BANKMSGSRSV1>
</OFX>
"""

# camt with amounts as a core banking system writes them: five decimals, always zeros.
CAMT_FIVE_DECIMALS = CAMT_ZONED.replace(">69.50<", ">69.50000<").replace(
    ">1130.50<", ">1130.50000<"
)

# MT940 with a decimal comma and four decimals.
MT940_FOUR_DECIMALS = """:20:STARTUMS
:25:10020030/1234567
:28C:00012/001
:60F:C190301EUR500,0000
:61:1903010301D5,1000NMSCNONREF
:86:Kontofuehrung Maerz
:62F:C190301EUR494,9000
-
"""


def test_zeros_beyond_the_second_decimal_are_read_in_each_format():
    assert lines_of(OFX_THREE_DECIMALS) == [
        (D(2019, 2, 4), -1815, "KROGER #0412", "POS PURCHASE", "201902041"),
        (D(2019, 2, 15), 125000, "ACME PAYROLL", "DIRECT DEP", "201902152"),
    ]
    assert closing_of(OFX_THREE_DECIMALS) == (243185, D(2019, 2, 28))
    assert [x[1] for x in lines_of(CAMT_FIVE_DECIMALS)] == [-6950]
    assert closing_of(CAMT_FIVE_DECIMALS) == (113050, D(2017, 4, 1))
    assert lines_of(MT940_FOUR_DECIMALS) == [
        (D(2019, 3, 1), -510, None, "Kontofuehrung Maerz", None)
    ]
    assert closing_of(MT940_FOUR_DECIMALS) == (49490, D(2019, 3, 1))


@pytest.mark.parametrize(
    "data",
    [
        OFX_THREE_DECIMALS.replace("-18.150", "-18.151"),
        CAMT_FIVE_DECIMALS.replace("69.50000", "69.50001"),
        MT940_FOUR_DECIMALS.replace("D5,1000", "D5,1010"),
    ],
    ids=["ofx", "camt", "mt940"],
)
def test_a_non_zero_digit_beyond_the_second_decimal_is_still_refused(data):
    with pytest.raises(StatementFormatError, match="more than two decimals"):
        read(data.encode())
