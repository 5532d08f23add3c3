"""A line with both a payee and a memo, in each format: both are read, each from its own
place (docs/statements.md, "What is read"), neither standing in for the other."""

from __future__ import annotations

import pytest

from app.services.banking.readers import read

PAYEE, MEMO = "Corner Shop GmbH", "Invoice 2026-117 thank you"

OFX1 = (
    "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nENCODING:USASCII\nCHARSET:1252\n\n"
    "<OFX><BANKMSGSRSV1><STMTTRNRS><TRNUID>1<STMTRS><CURDEF>EUR<BANKACCTFROM><ACCTID>1"
    "</BANKACCTFROM><BANKTRANLIST><STMTTRN><DTPOSTED>20260102<TRNAMT>-1.00<FITID>F1"
    f"<NAME>{PAYEE}<MEMO>{MEMO}</STMTTRN></BANKTRANLIST></STMTRS></STMTTRNRS>"
    "</BANKMSGSRSV1></OFX>"
)
OFX2 = (
    '<?xml version="1.0" encoding="UTF-8"?><?OFX OFXHEADER="200" VERSION="220"?>'
    "<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>EUR</CURDEF><BANKACCTFROM><ACCTID>1"
    "</ACCTID></BANKACCTFROM><BANKTRANLIST><STMTTRN><DTPOSTED>20260102</DTPOSTED>"
    f"<TRNAMT>-1.00</TRNAMT><FITID>F1</FITID><MEMO>{MEMO}</MEMO><PAYEE><NAME>{PAYEE}</NAME>"
    "</PAYEE></STMTTRN></BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>"
)
CAMT = (
    '<?xml version="1.0" encoding="UTF-8"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:'
    'camt.053.001.02"><BkToCstmrStmt><Stmt><Acct><Id><IBAN>DE1</IBAN></Id></Acct><Ntry>'
    '<Amt Ccy="EUR">1.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><BookgDt><Dt>2026-01-02</Dt>'
    "</BookgDt><AddtlNtryInf>not the memo</AddtlNtryInf><NtryDtls><TxDtls><RltdPties>"
    f"<Cdtr><Nm>{PAYEE}</Nm></Cdtr></RltdPties><RmtInf><Ustrd>{MEMO}</Ustrd></RmtInf>"
    "</TxDtls></NtryDtls></Ntry></Stmt></BkToCstmrStmt></Document>"
)
MT940 = (
    ":20:X\r\n:25:DE1\r\n:60F:C260101EUR1,00\r\n:61:260102D1,00NTRFNONREF//B1\r\n"
    f":86:166?00GUTSCHRIFT?20{MEMO[:14]}\r\n?21{MEMO[14:]}?32{PAYEE}\r\n"
    ":62F:C260131EUR1,00\r\n-\r\n"
)


@pytest.mark.parametrize("data", [OFX1, OFX2, CAMT, MT940], ids=["ofx1", "ofx2", "camt", "mt940"])
def test_a_line_with_a_payee_and_a_memo_reads_both(data):
    [statement] = read(data.encode()).statements
    [line] = statement.lines
    assert (line.payee, line.memo) == (PAYEE, MEMO)
    assert line.amount_cents == -100
