"""camt.053 read into the common shape: genkgo/camt's published test files (v2, v8, two
statements of one account) and hand-written entries for each rule of what is read."""

import datetime as dt
from pathlib import Path

import pytest

from app.services.banking.readers import NotAStatement, StatementFormatError, read

FILES = Path(__file__).parent / "files"
D = dt.date


def test_genkgo_v2_minimal():
    bank = read((FILES / "genkgo_camt053.v2.minimal.xml").read_bytes())
    assert bank.format == "camt.053"
    [statement] = bank.statements
    assert statement.bank_account == "NL26VAYB8060476890"
    assert statement.currency == "EUR"  # Acct/Ccy
    assert (statement.period_from, statement.period_to) == (D(2007, 10, 18), D(2007, 10, 18))
    assert statement.opening_balance_cents == 1815  # OPBD CRDT
    assert statement.closing_balance_cents == -2700  # CLBD DBIT; OPAV/CLAV ignored
    assert statement.closing_balance_on == D(2014, 12, 31)
    [line] = statement.lines
    assert (line.booked_on, line.amount_cents) == (D(2014, 12, 31), 885)
    assert line.payee == "NAME NAME"  # Dbtr for money in, not the Cdtr
    assert line.memo is None  # structured remittance only
    assert line.bank_ref is None


def test_genkgo_v8_othr_id_sts_cd_dttm_pty_and_acctsvcrref():
    [statement] = read((FILES / "genkgo_camt053.v8.xml").read_bytes()).statements
    assert statement.bank_account == "NL26VAYB8060476890"  # Acct/Id/Othr/Id
    assert statement.currency == "EUR"  # no Acct/Ccy: the first balance's Ccy
    [line] = statement.lines  # <Sts><Cd>BOOK</Cd></Sts>
    assert line.booked_on == D(2014, 12, 31)  # DtTm's date
    assert line.payee == "NAME NAME"  # Dbtr/Pty/Nm
    assert line.bank_ref == "AAAASESS-FP-CN_98765/01"


def test_genkgo_two_statements_of_one_account_are_read_as_one():
    [statement] = read((FILES / "genkgo_camt053.v2.multi.statement.xml").read_bytes()).statements
    assert [(x.amount_cents, x.payee, x.memo) for x in statement.lines] == [
        (885, None, "Transaction Description 1"),  # money in: only a Cdtr named
        (-700, "Company Name 2", "Transaction Description 2"),
    ]
    assert statement.opening_balance_cents == 1815  # the first statement's OPBD
    assert statement.closing_balance_cents == 2000  # the last statement's CLBD


def camt(entries: str, account: str = "<IBAN>DE02 1001</IBAN>", version: str = "04") -> bytes:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.{version}">
<BkToCstmrStmt><GrpHdr><MsgId>1</MsgId></GrpHdr>
<Stmt><Id>1</Id><Acct><Id>{account}</Id><Ccy>CHF</Ccy></Acct>
{entries}
</Stmt></BkToCstmrStmt></Document>""".encode()


ENTRY = """<Ntry><NtryRef>N1</NtryRef><Amt Ccy="CHF">{amount}</Amt><CdtDbtInd>{ind}</CdtDbtInd>
<Sts>{sts}</Sts><BookgDt><Dt>{day}</Dt></BookgDt><AddtlNtryInf>Extra info</AddtlNtryInf>
<NtryDtls>{details}</NtryDtls></Ntry>"""
TX = """<TxDtls><RltdPties><Dbtr><Nm>Payer {n}</Nm></Dbtr><Cdtr><Nm>Payee {n}</Nm></Cdtr>
</RltdPties><RmtInf><Ustrd>part {n}a</Ustrd><Ustrd>part {n}b</Ustrd></RmtInf></TxDtls>"""


def entry(amount="10.00", ind="DBIT", sts="BOOK", day="2026-11-27", details=None) -> str:
    details = TX.format(n=1) + TX.format(n=2) if details is None else details
    return ENTRY.format(amount=amount, ind=ind, sts=sts, day=day, details=details)


def test_several_txdtls_stay_one_line_memo_joined_and_payee_by_direction():
    bank = read(camt(entry() + entry(ind="CRDT", amount="3")))
    out, into = bank.statements[0].lines
    assert out.amount_cents == -1000 and into.amount_cents == 300
    assert out.payee == "Payee 1" and into.payee == "Payer 1"  # Cdtr out, Dbtr in
    assert out.memo == "part 1a part 1b part 2a part 2b"
    assert out.bank_ref == "N1"  # no AcctSvcrRef: NtryRef


def test_pending_entries_are_skipped_and_addtlntryinf_is_the_fallback_memo():
    bank = read(camt(entry(sts="PDNG") + entry(details="") + entry(sts="<Cd>INFO</Cd>")))
    [line] = bank.statements[0].lines
    assert line.memo == "Extra info"
    assert line.payee is None


def test_two_accounts_in_one_file_are_two_statements():
    data = camt(entry()).replace(
        b"</Stmt>",
        b"</Stmt><Stmt><Id>2</Id><Acct><Id><Othr><Id>ACC-2</Id></Othr></Id></Acct></Stmt>",
    )
    assert [s.bank_account for s in read(data).statements] == ["DE02 1001", "ACC-2"]


@pytest.mark.parametrize(
    ("change", "where", "problem"),
    [
        ({"amount": "1.005"}, "line 5, Document/BkToCstmrStmt/Stmt/Ntry/Amt", "two decimals"),
        ({"amount": "-1.00"}, "line 5, Document/BkToCstmrStmt/Stmt/Ntry/Amt", "carries a sign"),
        ({"ind": "BOTH"}, "line 5, Document/BkToCstmrStmt/Stmt/Ntry/CdtDbtInd", "neither CRDT"),
        ({"day": "1899-12-31"}, "line 6, Document/BkToCstmrStmt/Stmt/Ntry/BookgDt/Dt", "outside"),
        ({"day": "2201-01-01"}, "line 6, Document/BkToCstmrStmt/Stmt/Ntry/BookgDt/Dt", "outside"),
        ({"day": "27.11.2026"}, "line 6, Document/BkToCstmrStmt/Stmt/Ntry/BookgDt/Dt", "not YYYY"),
    ],
)
def test_refusals_name_the_element(change, where, problem):
    with pytest.raises(StatementFormatError) as caught:
        read(camt(entry(**change)))
    assert caught.value.where == where
    assert problem in caught.value.problem


def test_any_version_reads_and_another_message_is_not_a_statement():
    assert read(camt(entry(), version="13")).statements[0].lines
    camt052 = camt(entry()).replace(b"camt.053.001.04", b"camt.052.001.04")
    with pytest.raises(NotAStatement):
        read(camt052)


def test_a_prefixed_namespace_reads_the_same():
    data = camt(entry()).replace(b"<", b"<c:").replace(b"<c:/", b"</c:").replace(b"<c:?", b"<?")
    data = data.replace(b'xmlns="', b'xmlns:c="')
    [line] = read(data).statements[0].lines
    assert (line.amount_cents, line.payee) == (-1000, "Payee 1")
    with pytest.raises(NotAStatement):  # the prefix bound elsewhere: not camt.053
        read(data.replace(b'xmlns:c="', b'xmlns:c="urn:other" xmlns:d="'))


def balance(code: str, amount: str, day: str, ind: str = "CRDT") -> str:
    return (
        f'<Bal><Tp><CdOrPrtry><Cd>{code}</Cd></CdOrPrtry></Tp><Amt Ccy="CHF">{amount}</Amt>'
        f"<CdtDbtInd>{ind}</CdtDbtInd><Dt><Dt>{day}</Dt></Dt></Bal>"
    )


def test_of_two_closing_balances_of_one_date_the_later_in_the_file_wins():
    same_day = balance("CLBD", "5.00", "2026-11-30") + balance("CLBD", "7.00", "2026-11-30")
    [statement] = read(camt(same_day + entry())).statements
    assert (statement.closing_balance_cents, statement.closing_balance_on) == (
        700,
        D(2026, 11, 30),
    )
    # A later date wins wherever it stands; an earlier one never does.
    dated = balance("CLBD", "9.00", "2026-12-01") + balance("CLBD", "7.00", "2026-11-30")
    [statement] = read(camt(dated + entry())).statements
    assert statement.closing_balance_cents == 900
