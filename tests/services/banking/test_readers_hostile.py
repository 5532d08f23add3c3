"""What a hostile or broken upload meets: the format recognised from the bytes only,
DTDs and entities refused before anything is expanded or fetched, truncation and bad
encodings refused saying where, a 5 MiB line read in bounded time and memory, and
nothing but the three refusals ever raised (415, 400, and 413 for too many lines)."""

import time
from pathlib import Path

import pytest

from app.services.banking.readers import NotAStatement, StatementFormatError, detect, read
from harness import statement_files

FILES = Path(__file__).parent / "files"
OFX = (FILES / "ofxparse_bank_medium.ofx").read_bytes()
CAMT = (FILES / "genkgo_camt053.v2.minimal.xml").read_bytes()
MT940 = (FILES / "jejik_abnamro.sta").read_bytes()
CAMT_BODY = CAMT.split(b"\n", 1)[1]  # without the XML declaration
MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (OFX, "ofx"),
        (b"\n\n" + OFX, "ofx"),
        (CAMT, "camt.053"),
        (MT940, "mt940"),
        (b"\xef\xbb\xbf" + CAMT, None),
        (b"%PDF-1.7\n", None),
        (b"", None),
        (b"<html><body>:20:x</body></html>", None),
        (b"date,amount\n2026-01-01,1.00\n", None),
        (
            b'<?xml version="1.0"?>'
            b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.03"/>',
            None,
        ),
    ],
)
def test_the_format_comes_from_the_bytes(data, kind):
    assert detect(data) == kind  # (the BOM is taken off by read before detect)


@pytest.mark.parametrize(
    "data", [b"%PDF-1.7\n", b"", b"\x00\x01\x02", b"<html></html>", b"<?xml version='1.0'?><a/>"]
)
def test_anything_else_is_415(data):
    with pytest.raises(NotAStatement) as caught:
        read(data)
    assert caught.value.status == 415
    assert "OFX" in str(caught.value) and "camt.053" in str(caught.value)
    assert "MT940" in str(caught.value)


BILLION_LAUGHS = (
    b'<?xml version="1.0"?>\n<!DOCTYPE Document [\n <!ENTITY lol "lol">\n'
    + b"".join(
        b' <!ENTITY lol%d "%s">\n' % (n, (b"&lol%d;" % (n - 1) if n > 1 else b"&lol;") * 10)
        for n in range(1, 10)
    )
    + b"]>\n"
    + CAMT_BODY.replace(b"NAME NAME", b"&lol9;")
)
EXTERNAL = (
    b'<?xml version="1.0"?>\n<!DOCTYPE Document [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
    + CAMT_BODY.replace(b"NAME NAME", b"&x;")
)
PARAMETER = (
    b'<?xml version="1.0"?>\n<!DOCTYPE Document [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x">%p;]>\n'
    + CAMT_BODY
)
PLAIN_DTD = b'<?xml version="1.0"?>\n<!DOCTYPE Document SYSTEM "camt.dtd">\n' + CAMT_BODY
OFX2_DTD = (
    b'<?xml version="1.0"?>\n<?OFX OFXHEADER="200" VERSION="220"?>\n'
    b'<!DOCTYPE OFX [<!ENTITY a "aaaaaaaaaa">]>\n<OFX></OFX>'
)


@pytest.mark.parametrize("data", [BILLION_LAUGHS, EXTERNAL, PARAMETER, PLAIN_DTD, OFX2_DTD])
def test_dtds_and_entity_declarations_are_refused_unexpanded(data):
    started = time.perf_counter()
    with pytest.raises(StatementFormatError) as caught:
        read(data)
    assert "DTD" in caught.value.problem
    assert caught.value.where.startswith(("line 2", "line 3"))
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize(
    ("data", "where", "problem"),
    [
        (OFX[:900], "line 16", "ends inside <STMTTRN>"),
        (OFX[: OFX.index(b"<")], "line 11", "followed by no <OFX>"),
        (CAMT[:3000], "line 91, Document/BkToCstmrStmt/Stmt/Ntry", "no element found"),
        (MT940[:600], "line 4", "no closing balance"),
    ],
)
def test_a_truncated_file_is_refused_saying_where(data, where, problem):
    with pytest.raises(StatementFormatError) as caught:
        read(data)
    assert caught.value.where == where
    assert problem in caught.value.problem


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (OFX.replace(b"-6.60", b"-6.605"), "more than two decimals"),
        (CAMT.replace(b">8.85<", b">8.855<"), "more than two decimals"),
        (MT940.replace(b"D9,N192", b"D9,001N192"), "more than two decimals"),
        (OFX.replace(b"<DTPOSTED>20090401", b"<DTPOSTED>18990401"), "outside 1900 to 2200"),
        (OFX.replace(b"<DTPOSTED>20090401", b"<DTPOSTED>22010401"), "outside 1900 to 2200"),
        (
            CAMT.replace(
                b"<Dt>2014-12-31</Dt>\n                </BookgDt>", b"<Dt>2201-01-01</Dt></BookgDt>"
            ),
            "outside 1900 to 2200",
        ),
    ],
)
def test_three_decimals_and_dates_out_of_range(data, problem):
    with pytest.raises(StatementFormatError, match=problem):
        read(data)


def test_wrong_encodings_are_read_or_refused_clearly():
    latin = OFX.replace(b"CONNIE'S", b"CONNI\xc9'S")  # CHARSET:1252 as declared
    assert read(latin).statements[0].lines[2].payee == "CONNI\u00c9'S HAIR D"
    utf8_declared = latin.replace(b"ENCODING:USASCII", b"ENCODING:UTF-8")
    with pytest.raises(StatementFormatError) as caught:
        read(utf8_declared)
    assert (caught.value.where, caught.value.problem) == (
        "line 17",
        "the bytes are not UTF-8 as the file declares",
    )
    with pytest.raises(StatementFormatError, match="line 121, .*/Dbtr/Nm: not well-formed"):
        read(CAMT.replace(b"NAME NAME", b"NAM\xc9"))  # Latin-1 in a UTF-8 XML file
    assert read(CAMT.decode().encode("utf-16")).statements[0].lines[0].payee == "NAME NAME"
    for declared in (b"UTF-3", b"Shift_JIS"):  # unknown; multi-byte, which expat lacks
        with pytest.raises(StatementFormatError, match="encoding this reader does not know"):
            read(CAMT.replace(b'encoding="UTF-8"', b'encoding="' + declared + b'"'))
    german = MT940.replace(b"KPN - DIGITENNE", b"K\xdcCHE")  # Latin-1 MT940: read as 1252
    assert "K\u00dcCHE" in read(german).statements[0].lines[0].memo


FIVE_MIB_LINES = {
    "ofx name": OFX.replace(b"<NAME>MCDONALD'S", b"<NAME>" + b"A" * 5 * MIB),
    "ofx angle brackets": OFX.replace(b"<NAME>MCDONALD'S", b"<NAME>" + b"<" * 5 * MIB),
    "ofx entities": OFX.replace(b"<NAME>MCDONALD'S", b"<NAME>" + b"&amp;" * MIB),
    "camt memo": CAMT.replace(b"NAME NAME", b"&amp;" * MIB),
    "camt amount": CAMT.replace(b">8.85<", b">" + b"9" * 5 * MIB + b"<"),
    "mt940 86": MT940.replace(b":86:GIRO", b":86:" + b"?2" * (5 * MIB // 2)),
    "mt940 61": MT940.replace(b":61:1105240524D9,", b":61:1105240524D" + b"9" * 5 * MIB),
    "mt940 blocks": b":20:x\n:25:" + b"{4:" * (5 * MIB // 3),
    "ofx 1.3 million tags": b"OFXHEADER:100\n\n<OFX>" + b"<A>x" * (5 * MIB // 4) + b"</OFX>",
    "ofx nested": b"OFXHEADER:100\n\n<OFX>" + b"<A>" * (5 * MIB // 3),
    "camt 1.3 million tags": CAMT.replace(b"<BkToCstmrStmt>", b"<a/>" * (5 * MIB // 4)),
    "camt nested": CAMT.replace(b"<BkToCstmrStmt>", b"<a>" * (5 * MIB // 3)),
    "mt940 long block": MT940 + b"{1:F01" + b"\xd3" * 5 * MIB + b"}{4:\r\n" + MT940,
}


# What each comes to: the refusal, saying where and what, or the file read.
FIVE_MIB_OUTCOMES = {
    "camt 1.3 million tags": "400 line 3: more than 400,000 elements",
    "camt amount": "400 line 91, Document/BkToCstmrStmt/Stmt/Ntry/Amt: Amt "
    "'9999999999999999999999999999999999999999...' is too large",
    "camt memo": "400 line 90: the payee is 1,048,576 characters long, more than 2,000",
    "camt nested": "400 line 3: elements nested over 64 deep",
    "mt940 61": "400 line 8: :61: is over 8192 characters long",
    "mt940 86": "400 line 9: :86: is over 8192 characters long",
    "mt940 blocks": "400 line 2: :25: is over 8192 characters long",
    "mt940 long block": "read",  # the block taken off its line, the message after it read
    "ofx 1.3 million tags": "400 line 3: more than 400,000 elements",
    "ofx angle brackets": "400 line 15: a '<' that starts no tag (truncated?)",
    "ofx entities": "400 line 15: the payee is 1,048,581 characters long, more than 2,000",
    "ofx name": "400 line 15: the payee is 5,242,885 characters long, more than 2,000",
    "ofx nested": "400 line 3: elements nested over 64 deep",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FIVE_MIB_LINES))
def test_a_5_mib_line_is_read_or_refused_in_bounded_time_and_memory(name):
    data = FIVE_MIB_LINES[name]
    cost = statement_files.measure(name, data)
    assert cost.outcome == FIVE_MIB_OUTCOMES[name]
    assert cost.cpu_seconds < 2.0  # the whole upload's budget (docs/statements.md)
    assert cost.peak_bytes < 20 * len(data)


def test_a_5_mib_block_header_is_taken_off_and_both_messages_are_read():
    [once] = read(MT940).statements
    [twice] = read(FIVE_MIB_LINES["mt940 long block"]).statements
    assert len(twice.lines) == 2 * len(once.lines)


def test_nothing_but_the_refusals_escapes_read(monkeypatch):
    from app.services.banking.readers import ofx

    def broken(*_args, **_kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr(ofx, "read", broken)
    with pytest.raises(StatementFormatError) as caught:
        read(OFX)
    assert caught.value.where == "file"
    assert caught.value.problem == "could not be read (KeyError)"
