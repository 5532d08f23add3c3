"""Files as banks write them (docs/statements.md, "Reading the files"): shapes real
statement files have that an earlier reader refused or read wrong, each in a small file
written for this project the way a bank writes it, with the exact lines and closing
balance it must read as."""

from __future__ import annotations

import contextlib
import datetime as dt
import time

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


# --- OFX: every BANKTRANLIST, elements left unclosed, empty elements ------------------

OFX1_HEADER = """OFXHEADER:100
DATA:OFXSGML
VERSION:102
SECURITY:NONE
ENCODING:USASCII
CHARSET:1252
COMPRESSION:NONE
OLDFILEUID:NONE
NEWFILEUID:NONE

"""

# One statement whose lines come in two BANKTRANLIST (a bank listing posted lines by
# month): one line in the first, three in the second.
OFX_TWO_TRANLISTS = (
    OFX1_HEADER
    + """<OFX>
<SIGNONMSGSRSV1><SONRS><STATUS><CODE>0<SEVERITY>INFO</STATUS><DTSERVER>20230302
<LANGUAGE>ENG</SONRS></SIGNONMSGSRSV1>
<BANKMSGSRSV1><STMTTRNRS><TRNUID>1<STATUS><CODE>0<SEVERITY>INFO</STATUS>
<STMTRS><CURDEF>EUR
<BANKACCTFROM><BANKID>30003<ACCTID>00020123456<ACCTTYPE>CHECKING</BANKACCTFROM>
<BANKTRANLIST><DTSTART>20230101<DTEND>20230131
<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20230128<TRNAMT>-42.00<FITID>2023012800001
<NAME>EDF CLIENTS PARTICULIERS<MEMO>PRLV SEPA
</STMTTRN>
</BANKTRANLIST>
<BANKTRANLIST><DTSTART>20230201<DTEND>20230228
<STMTTRN><TRNTYPE>CREDIT<DTPOSTED>20230201<TRNAMT>1850.00<FITID>2023020100001
<NAME>SALAIRE FEVRIER<MEMO>VIR SEPA
</STMTTRN>
<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20230206<TRNAMT>-23.90<FITID>2023020600002
<NAME>CARREFOUR MARKET<MEMO>CB 0402
</STMTTRN>
<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20230215<TRNAMT>-700.00<FITID>2023021500003
<NAME>LOYER FEVRIER<MEMO>VIR PERMANENT
</STMTTRN>
</BANKTRANLIST>
<LEDGERBAL><BALAMT>1084.10<DTASOF>20230228</LEDGERBAL>
</STMTRS></STMTTRNRS></BANKMSGSRSV1>
</OFX>
"""
)


def test_ofx_every_banktranlist_of_a_statement_is_read():
    assert lines_of(OFX_TWO_TRANLISTS) == [
        (D(2023, 1, 28), -4200, "EDF CLIENTS PARTICULIERS", "PRLV SEPA", "2023012800001"),
        (D(2023, 2, 1), 185000, "SALAIRE FEVRIER", "VIR SEPA", "2023020100001"),
        (D(2023, 2, 6), -2390, "CARREFOUR MARKET", "CB 0402", "2023020600002"),
        (D(2023, 2, 15), -70000, "LOYER FEVRIER", "VIR PERMANENT", "2023021500003"),
    ]
    [statement] = read(OFX_TWO_TRANLISTS.encode()).statements
    assert (statement.period_from, statement.period_to) == (D(2023, 1, 1), D(2023, 2, 28))
    assert closing_of(OFX_TWO_TRANLISTS) == (108410, D(2023, 2, 28))


# OFX 1.x as some banks' exports write it: the BANKTRANLIST never closed, the LEDGERBAL
# and AVAILBAL after its last line, then </STMTRS>.
OFX_UNCLOSED_TRANLIST = (
    OFX1_HEADER
    + """<OFX>
<SIGNONMSGSRSV1><SONRS><STATUS><CODE>0<SEVERITY>INFO</STATUS><DTSERVER>20210430
<LANGUAGE>ENG</SONRS></SIGNONMSGSRSV1>
<BANKMSGSRSV1><STMTTRNRS><TRNUID>1<STATUS><CODE>0<SEVERITY>INFO</STATUS>
<STMTRS><CURDEF>USD
<BANKACCTFROM><BANKID>121000248<ACCTID>4120998877<ACCTTYPE>CHECKING</BANKACCTFROM>
<BANKTRANLIST><DTSTART>20210401<DTEND>20210430
<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20210405<TRNAMT>-64.12<FITID>20210405-1
<NAME>PG&amp;E WEB ONLINE<MEMO>ELECTRIC BILL
</STMTTRN>
<STMTTRN><TRNTYPE>DEP<DTPOSTED>20210415<TRNAMT>300.00<FITID>20210415-1
<NAME>MOBILE DEPOSIT
</STMTTRN>
<LEDGERBAL><BALAMT>1735.88<DTASOF>20210430</LEDGERBAL>
<AVAILBAL><BALAMT>1700.00<DTASOF>20210430</AVAILBAL>
</STMTRS></STMTTRNRS></BANKMSGSRSV1>
</OFX>
"""
)


def test_ofx1_an_unclosed_banktranlist_is_closed_where_the_ledgerbal_opens():
    assert lines_of(OFX_UNCLOSED_TRANLIST) == [
        (D(2021, 4, 5), -6412, "PG&E WEB ONLINE", "ELECTRIC BILL", "20210405-1"),
        (D(2021, 4, 15), 30000, "MOBILE DEPOSIT", None, "20210415-1"),
    ]
    assert closing_of(OFX_UNCLOSED_TRANLIST) == (173588, D(2021, 4, 30))  # not AVAILBAL's


def test_ofx1_leaves_and_aggregates_left_unclosed_inside_a_line():
    # An unclosed PAYEE, closed where the MEMO of the line opens.
    data = OFX_UNCLOSED_TRANLIST.replace(
        "<NAME>MOBILE DEPOSIT\n",
        "<PAYEE><NAME>MOBILE DEPOSIT<ADDR1>1 MAIN ST<CITY>OAKLAND\n<MEMO>CHECK 1042\n",
    )
    assert lines_of(data)[1] == (
        D(2021, 4, 15),
        30000,
        "MOBILE DEPOSIT",
        "CHECK 1042",
        "20210415-1",
    )


# Empty elements, as exports write them: an OFX 1.x <NAME> with nothing after it (before
# the MEMO), an OFX 2.x <MEMO></MEMO> and <NAME/>.
OFX1_EMPTY = OFX_UNCLOSED_TRANLIST.replace(
    "<NAME>PG&amp;E WEB ONLINE<MEMO>ELECTRIC BILL", "<NAME>\n<MEMO>ELECTRIC BILL"
).replace("<NAME>MOBILE DEPOSIT\n", "<NAME>MOBILE DEPOSIT<MEMO>\n")

OFX2_EMPTY = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<?OFX OFXHEADER="200" VERSION="211" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>
<OFX>
  <BANKMSGSRSV1>
    <STMTTRNRS>
      <TRNUID>0</TRNUID>
      <STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>
      <STMTRS>
        <CURDEF>GBP</CURDEF>
        <BANKACCTFROM><BANKID>400515</BANKID><ACCTID>41231234</ACCTID><ACCTTYPE>CHECKING</ACCTTYPE></BANKACCTFROM>
        <BANKTRANLIST>
          <DTSTART></DTSTART>
          <DTEND>20220331</DTEND>
          <STMTTRN>
            <TRNTYPE>POS</TRNTYPE>
            <DTPOSTED>20220314</DTPOSTED>
            <TRNAMT>-3.40</TRNAMT>
            <FITID>202203140001</FITID>
            <NAME>PRET A MANGER</NAME>
            <MEMO></MEMO>
          </STMTTRN>
          <STMTTRN>
            <TRNTYPE>DIRECTDEP</TRNTYPE>
            <DTPOSTED>20220325</DTPOSTED>
            <TRNAMT>2100.00</TRNAMT>
            <FITID>202203250001</FITID>
            <NAME/>
            <PAYEE><NAME>ACME LTD</NAME></PAYEE>
            <MEMO>SALARY MARCH</MEMO>
          </STMTTRN>
        </BANKTRANLIST>
        <LEDGERBAL><BALAMT>2310.65</BALAMT><DTASOF></DTASOF></LEDGERBAL>
      </STMTRS>
    </STMTTRNRS>
  </BANKMSGSRSV1>
</OFX>
"""


def test_ofx_an_empty_element_is_read_as_left_out():
    assert lines_of(OFX1_EMPTY) == [
        (D(2021, 4, 5), -6412, None, "ELECTRIC BILL", "20210405-1"),
        (D(2021, 4, 15), 30000, "MOBILE DEPOSIT", None, "20210415-1"),
    ]
    assert lines_of(OFX2_EMPTY) == [
        (D(2022, 3, 14), -340, "PRET A MANGER", None, "202203140001"),
        (D(2022, 3, 25), 210000, "ACME LTD", "SALARY MARCH", "202203250001"),  # <NAME/>
    ]
    [statement] = read(OFX2_EMPTY.encode()).statements
    assert (statement.period_from, statement.period_to) == (None, D(2022, 3, 31))
    assert closing_of(OFX2_EMPTY) == (231065, None)  # <DTASOF></DTASOF>: no date


def test_ofx_an_empty_amount_is_a_line_without_one():
    data = OFX2_EMPTY.replace("<TRNAMT>-3.40</TRNAMT>", "<TRNAMT></TRNAMT>")
    with pytest.raises(StatementFormatError, match="STMTTRN has no TRNAMT"):
        read(data.encode())


# camt as an export that writes every optional element, empty where it has nothing: an
# empty <Ustrd/>, <AcctSvcrRef/>, <Nm/>, and an empty <BookgDt/> beside the value date.
CAMT_EMPTY = """<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">
  <BkToCstmrStmt>
    <GrpHdr><MsgId>20230505-0001</MsgId><CreDtTm>2023-05-05T08:00:00</CreDtTm></GrpHdr>
    <Stmt>
      <Id>20230505-0001-01</Id>
      <CreDtTm>2023-05-05T08:00:00</CreDtTm>
      <Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy></Acct>
      <Bal>
        <Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp>
        <Amt Ccy="EUR">512.30</Amt><CdtDbtInd>CRDT</CdtDbtInd>
        <Dt><Dt>2023-05-04</Dt></Dt>
      </Bal>
      <Ntry>
        <NtryRef>NR-7781</NtryRef>
        <Amt Ccy="EUR">12.99</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts>
        <BookgDt><Dt>2023-05-03</Dt></BookgDt>
        <ValDt><Dt>2023-05-03</Dt></ValDt>
        <AcctSvcrRef/>
        <NtryDtls><TxDtls>
          <RltdPties><Cdtr><Nm/></Cdtr></RltdPties>
          <RmtInf><Ustrd/></RmtInf>
        </TxDtls></NtryDtls>
        <AddtlNtryInf>LASTSCHRIFT NETFLIX.COM</AddtlNtryInf>
      </Ntry>
      <Ntry>
        <Amt Ccy="EUR">250.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts>
        <BookgDt/>
        <ValDt><Dt>2023-05-04</Dt></ValDt>
        <AcctSvcrRef>2023050400042</AcctSvcrRef>
        <NtryDtls><TxDtls>
          <RltdPties><Dbtr><Nm>Erika Mustermann</Nm></Dbtr></RltdPties>
          <RmtInf><Ustrd>Miete Mai</Ustrd><Ustrd></Ustrd></RmtInf>
        </TxDtls></NtryDtls>
        <AddtlNtryInf/>
      </Ntry>
    </Stmt>
  </BkToCstmrStmt>
</Document>
"""


def test_camt_an_empty_element_is_read_as_left_out():
    assert lines_of(CAMT_EMPTY) == [
        (D(2023, 5, 3), -1299, None, "LASTSCHRIFT NETFLIX.COM", "NR-7781"),
        (D(2023, 5, 4), 25000, "Erika Mustermann", "Miete Mai", "2023050400042"),  # ValDt
    ]
    assert closing_of(CAMT_EMPTY) == (51230, D(2023, 5, 4))


# --- MT940 ------------------------------------------------------------------------------

# A Dutch bank's MT940: a space after each tag (':86: '), structured and unstructured :86:.
MT940_TAG_SPACE = """:20: 940S230630
:25: NL91ABNA0417164300
:28C: 00023/1
:60F: C230629EUR1000,00
:61: 2306300630D25,00NTRFEREF//2306301234567
:86: 166?00SEPA OVERBOEKING?20Factuur 2023-0117?32Drukkerij De Vries BV
:61: 2306300630C100,00NTRFNONREF
:86: Terugbetaling voorschot juni
:62F: C230630EUR1075,00
-
"""


def test_mt940_a_tag_followed_by_a_space_is_the_tag():
    assert lines_of(MT940_TAG_SPACE) == [
        (D(2023, 6, 30), -2500, "Drukkerij De Vries BV", "Factuur 2023-0117", "2306301234567"),
        (D(2023, 6, 30), 10000, None, "Terugbetaling voorschot juni", None),
    ]
    assert closing_of(MT940_TAG_SPACE) == (107500, D(2023, 6, 30))
    [statement] = read(MT940_TAG_SPACE.encode()).statements
    assert statement.bank_account == "NL91ABNA0417164300"


# A bank that writes one :86: per piece of information after a :61:.
MT940_SEVERAL_86 = """:20:STMT20230815
:25:NL20INGB0001234567
:28C:00156
:60F:C230814EUR2500,00
:61:2308150815D89,95NDDTEREF//20230815/00071
:86:/EREF/INV-2023-9921
:86:/MARF/MNDT-4471
:86:/REMI/Energie augustus/BENM//NAME/Vattenfall Klantenservice N.V.
:61:2308150815C12,50NTRFNONREF
:86:Teruggave
:62F:C230815EUR2422,55
-
"""


def test_mt940_several_86_after_one_61_are_joined_by_a_space():
    assert lines_of(MT940_SEVERAL_86) == [
        (
            D(2023, 8, 15),
            -8995,
            None,
            "/EREF/INV-2023-9921 /MARF/MNDT-4471"
            " /REMI/Energie augustus/BENM//NAME/Vattenfall Klantenservice N.V.",
            "20230815/00071",
        ),
        (D(2023, 8, 15), 1250, None, "Teruggave", None),
    ]
    assert closing_of(MT940_SEVERAL_86) == (242255, D(2023, 8, 15))


# Two messages of one account: a '-' line inside the first message's :86: memo, the
# first message's end followed by the bank's header lines before the next :20:, and the
# last '-' at the end of the file.
MT940_DASH_LINES = """ABNANL2A
940
ABNANL2A
:20:ABN AMRO BANK NV
:25:517852257
:28:19401/1
:60F:C231002EUR1500,00
:61:2310031003D49,90N426NONREF
:86:BEA NR:XXX1234 03.10.23/10.12 HEMA ROTTERDAM
-
RETOUR BON 2231
:62F:C231003EUR1450,10
-
ABNANL2A
940
ABNANL2A
:20:ABN AMRO BANK NV
:25:517852257
:28:19402/1
:60F:C231003EUR1450,10
:61:2310041004C200,00N654NONREF
:86:OVERBOEKING SPAARREKENING
:62F:C231004EUR1650,10
-
"""


def test_mt940_a_dash_line_ends_a_message_only_before_a_new_message_or_the_end():
    assert lines_of(MT940_DASH_LINES) == [
        (
            D(2023, 10, 3),
            -4990,
            None,
            "BEA NR:XXX1234 03.10.23/10.12 HEMA ROTTERDAM - RETOUR BON 2231",
            None,
        ),
        (D(2023, 10, 4), 20000, None, "OVERBOEKING SPAARREKENING", None),
    ]
    assert closing_of(MT940_DASH_LINES) == (165010, D(2023, 10, 4))
    # A '-' before a SWIFT block ends the message too.
    blocks = MT940_DASH_LINES.replace(
        "-\nABNANL2A\n940\nABNANL2A\n:20:", "-\n{1:F01ABNANL2AXXXX0000000000}{2:O940}{4:\n:20:"
    )
    assert [x[3] for x in lines_of(blocks)][1] == "OVERBOEKING SPAARREKENING"


# A statement of two messages (a page each) with no :62F:, as banks send an intraday or
# continued statement: the last :62M: is its closing balance.
MT940_62M_ONLY = """:20:MT940-20240212
:25:DE44500105175407324931
:28C:00031/001
:60F:C240212EUR830,00
:61:2402120212D30,00NMSCNONREF
:86:Kartenzahlung Baeckerei
:62M:C240212EUR800,00
-
:20:MT940-20240212
:25:DE44500105175407324931
:28C:00031/002
:60M:C240212EUR800,00
:61:2402120212D120,00NMSCNONREF
:86:Tankstelle
:62M:C240212EUR680,00
-
"""


def test_mt940_the_last_62m_closes_a_statement_without_62f():
    assert [x[:2] for x in lines_of(MT940_62M_ONLY)] == [
        (D(2024, 2, 12), -3000),
        (D(2024, 2, 12), -12000),
    ]
    assert closing_of(MT940_62M_ONLY) == (68000, D(2024, 2, 12))
    [statement] = read(MT940_62M_ONLY.encode()).statements
    assert statement.opening_balance_cents == 83000


# Bank references as banks write them: 16 characters after // with the supplementary
# details run on, the details on a line of their own, // with nothing after it, and a
# NONREF after //.
MT940_REFERENCES = """:20:STARTUMSE
:25:37040044/0532013000
:28C:00007/001
:60F:C240304EUR5000,00
:61:2403040304D45,00NDDTKD-4711//0099887766554433SEPA-LASTSCHRIFT
:86:Lastschrift Stadtwerke
:61:2403040304C300,00NTRFINV-2024-118//B4030412345
/OCMT/EUR300,00/
:86:Zahlung Rechnung 118
:61:2403040304D9,99NMSCMANDATE-7//
:86:Kontofuehrung
:61:2403040304D12,00NMSCKD-4712//nonref
:86:Porto
:62F:C240304EUR5233,01
-
"""


def test_mt940_the_bank_reference_is_at_most_16_characters_after_slashes_never_the_owners():
    assert lines_of(MT940_REFERENCES) == [
        (D(2024, 3, 4), -4500, None, "Lastschrift Stadtwerke", "0099887766554433"),
        (D(2024, 3, 4), 30000, None, "Zahlung Rechnung 118", "B4030412345"),
        (D(2024, 3, 4), -999, None, "Kontofuehrung", None),  # not MANDATE-7
        (D(2024, 3, 4), -1200, None, "Porto", None),  # not KD-4712
    ]
    assert closing_of(MT940_REFERENCES) == (523301, D(2024, 3, 4))


def _cpu(data: bytes) -> float:
    started = time.process_time()
    with contextlib.suppress(StatementFormatError):
        read(data)
    return time.process_time() - started


MT940_OPEN = ":20:X\n:25:DE1\n:60F:C260101EUR1,00\n:61:260101C1,00NTRFNONREF\n:86:memo\n"


@pytest.mark.parametrize(
    "unit",
    ["-\n:99:\n", "-\nx\n", "-\n", "-\n:86:a\n"],
    ids=["dash then tag", "dash then text", "dashes", "dash then 86"],
)
def test_mt940_dash_lines_cost_in_proportion_to_the_file(unit):
    """Whether a '-' line ends a message looks ahead for the next field: a file four
    times larger costs at most about four times the CPU (8 allowed; quadratic is 16)."""

    def file_of(size: int) -> bytes:
        return (MT940_OPEN + unit * (size // len(unit)) + ":62F:C260101EUR1,00\n").encode()

    small = min(_cpu(file_of(24 * 1024)) for _ in range(2))
    large = min(_cpu(file_of(96 * 1024)) for _ in range(2))
    assert large <= 8 * max(small, 0.01), (small, large)


OFX_OPEN = OFX1_HEADER + "<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>EUR"


@pytest.mark.parametrize(
    "unit",
    [
        "<A><B><C><BANKTRANLIST><STMTTRN><LEDGERBAL>",
        "<A><STMTTRN/></A>",
        "<LEDGERBAL><BALAMT><DTASOF></LEDGERBAL>",
    ],
    ids=["closes", "no parent open", "empty leaves"],
)
def test_ofx_elements_closed_where_sgml_closes_them_cost_in_proportion_to_the_file(unit):
    """Each element closed by another's opening was opened by a tag of the file, and
    whether an element's parent is open is one look: four times the file, at most about
    four times the CPU (8 allowed; quadratic is 16)."""

    def file_of(size: int) -> bytes:
        return (OFX_OPEN + unit * (size // len(unit)) + "</STMTRS></OFX>").encode()

    small = min(_cpu(file_of(24 * 1024)) for _ in range(2))
    large = min(_cpu(file_of(96 * 1024)) for _ in range(2))
    assert large <= 8 * max(small, 0.01), (small, large)


def test_empty_elements_left_out_leave_no_count_of_lines_behind():
    """The lines of a list are counted as they open (too many: 413 before the file is
    read to its end), by the list they are in; an empty list taken out of the tree takes
    its count with it, so that the next list is not charged with it."""
    empty_ofx = "<BANKTRANLIST><STMTTRN/></BANKTRANLIST>" * 30
    data = OFX_OPEN + empty_ofx + "</STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>"
    [statement] = read(data.encode(), max_lines=10).statements
    assert statement.lines == []
    empty_camt = "<Stmt><Ntry/></Stmt>" * 30
    data = CAMT_EMPTY.replace("<Stmt>", empty_camt + "<Stmt>", 1)
    assert len(read(data.encode(), max_lines=10).statements[0].lines) == 2
