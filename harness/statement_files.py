"""Generated bank files for fuzzing the statement readers (app/services/banking/readers).

Used by tests/services/banking/test_readers_fuzz.py (a few hundred files per format) and
by `python -m bench.statements_fuzz` (10,000 per format, the figures printed). Two
sources, half each: mutations of the real files in tests/services/banking/files (bytes
flipped, cut, doubled, tokens of the format inserted) and files written from each
format's grammar with random, sometimes out-of-range, values. Every file must come back
as a BankFile or as one of the three refusals (NotAStatement, StatementFormatError,
TooManyLines), within its size's budget of CPU time and memory (cpu_budget,
memory_budget); anything else raised is counted as unexpected, with the case to replay
it. HOSTILE: files written to any size to cost a reader most per byte (measure, hostile).
"""

from __future__ import annotations

import codecs
import contextlib
import datetime as dt
import random
import time
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = ROOT / "tests" / "services" / "banking" / "files"
FORMATS = ("ofx", "camt.053", "mt940")
SUFFIXES = {"ofx": (".ofx", ".qfx"), "camt.053": (".xml",), "mt940": (".sta", ".txt")}
SEED = 20261128

TOKENS = {
    "ofx": [
        b"<",
        b">",
        b"</STMTTRN>",
        b"<STMTTRN>",
        b"<TRNAMT>1.234",
        b"<DTPOSTED>18991231",
        b"<!DOCTYPE OFX>",
        b"<!ENTITY a 'b'>",
        b"&amp;",
        b"&#0;",
        b"&#x110000;",
        b"<![CDATA[",
        b"<?OFX ",
        b"OFXHEADER:100\n",
        b"ENCODING:UTF-8\n",
        b"CHARSET:rot13\n",
        b"</OFX>",
        b"<CCSTMTRS>",
        b"<LEDGERBAL>",
        b"[-5:EST]",
        b"\xff\xfe",
        b"\xe9",
    ],
    "camt.053": [
        b"<",
        b"]]>",
        b"<!DOCTYPE d [<!ENTITY e 'x'>]>",
        b"&e;",
        b"&#0;",
        b"<Ntry>",
        b"</Ntry>",
        b"<Sts><Cd>PDNG</Cd></Sts>",
        b'<Amt Ccy="EUR">1.005</Amt>',
        b"<CdtDbtInd>XXXX</CdtDbtInd>",
        b"<Dt>2201-01-01</Dt>",
        b"<DtTm>2020-13-40T",
        b"<Ustrd>",
        b"\xff",
        b"\xc3",
        b"<?xml version='1.0' encoding='utf-16'?>",
        b'xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.99"',
    ],
    "mt940": [
        b":61:",
        b":86:",
        b":20:",
        b":25:",
        b":62F:",
        b":60F:",
        b"-\n",
        b"-}",
        b"{4:",
        b"{1:F01}",
        b"?32",
        b"?33",
        b"?",
        b"//",
        b"RC",
        b"RD",
        b",",
        b"9" * 30,
        b"\r\n",
        b"991231",
        b"0230",
        b"\xe4",
        b"\x00",
    ],
}


def fixtures(kind: str) -> list[bytes]:
    return [p.read_bytes() for p in sorted(FILES.iterdir()) if p.suffix in SUFFIXES[kind]]


def _amount(rng: random.Random, comma: bool = False) -> str:
    huge = rng.random() < 0.01
    whole = str(rng.randrange(10**14) if huge else rng.choice([0, 1, 7, 42, 999, 123456]))
    decimals = rng.choice(["", "5", "50", "05", "123"] if rng.random() < 0.02 else ["", "5", "50"])
    return whole + ("," if comma else ".") + decimals if decimals or comma else whole


def _day(rng: random.Random) -> dt.date:
    if rng.random() < 0.03:
        return dt.date(rng.choice([1, 1899, 2201, 9999]), 1, 1)
    return dt.date(2000, 1, 1) + dt.timedelta(days=rng.randrange(15000))


def _name(rng: random.Random) -> str:
    return rng.choice(["ACME", "Café & Co", "O'Brien <Ltd>", "Müller", "", "x" * 40, "A  B"])


def generate_ofx(rng: random.Random) -> bytes:
    card = rng.random() < 0.3
    rs, acct = ("CCSTMTRS", "CCACCTFROM") if card else ("STMTRS", "BANKACCTFROM")
    close = rng.random() < 0.5  # 2.x style closing of leaves

    def leaf(tag: str, value: str) -> str:
        return f"<{tag}>{value}</{tag}>" if close else f"<{tag}>{value}"

    parts = []
    for account in range(rng.choice([1, 1, 2])):
        trns = []
        for _ in range(rng.randrange(6)):
            day = _day(rng)
            name = _name(rng).replace("&", "&amp;").replace("<", "&lt;")
            trns.append(
                "<STMTTRN>"
                + leaf("TRNTYPE", "DEBIT")
                + leaf("DTPOSTED", f"{day.year:04d}{day.month:02d}{day.day:02d}120000[-5:EST]")
                + leaf("TRNAMT", ("-" if rng.random() < 0.5 else "") + _amount(rng))
                + leaf("FITID", str(rng.randrange(10**9)))
                + leaf("NAME", name)
                + (leaf("MEMO", name) if rng.random() < 0.5 else "")
                + "</STMTTRN>\n"
            )
        parts.append(
            f"<STMTTRNRS><TRNUID>1<{rs}>"
            + leaf("CURDEF", "USD")
            + f"<{acct}>"
            + leaf("ACCTID", f"{1000 + account}")
            + f"</{acct}><BANKTRANLIST>"
            + leaf("DTSTART", "20260101")
            + leaf("DTEND", "20260131")
            + "\n"
            + "".join(trns)
            + "</BANKTRANLIST><LEDGERBAL>"
            + leaf("BALAMT", _amount(rng))
            + leaf("DTASOF", "20260131")
            + f"</LEDGERBAL></{rs}></STMTTRNRS>\n"
        )
    wrapper = "CREDITCARDMSGSRSV1" if card else "BANKMSGSRSV1"
    body = f"<OFX><{wrapper}>\n" + "".join(parts) + f"</{wrapper}></OFX>\n"
    if close:
        head = '<?xml version="1.0" encoding="UTF-8"?>\n<?OFX OFXHEADER="200" VERSION="220"?>\n'
        return (head + body).encode("utf-8")
    charset = rng.choice(["1252", "UTF-8"])
    encoding = "UTF-8" if charset == "UTF-8" else "USASCII"
    head = f"OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nENCODING:{encoding}\nCHARSET:{charset}\n\n"
    return (head + body).encode("cp1252" if charset == "1252" else "utf-8", "replace")


def generate_camt(rng: random.Random) -> bytes:
    stmts = []
    for account in range(rng.choice([1, 1, 2])):
        ntries = []
        for _ in range(rng.randrange(6)):
            ind = rng.choice(["CRDT", "DBIT"])
            role = "Dbtr" if ind == "CRDT" else "Cdtr"
            name = _name(rng).replace("&", "&amp;").replace("<", "&lt;")
            sts = rng.choice(["<Sts>BOOK</Sts>", "<Sts><Cd>BOOK</Cd></Sts>", "<Sts>PDNG</Sts>"])
            party = f"<Nm>{name}</Nm>" if rng.random() < 0.5 else f"<Pty><Nm>{name}</Nm></Pty>"
            ntries.append(
                f'<Ntry><Amt Ccy="EUR">{_amount(rng)}</Amt><CdtDbtInd>{ind}</CdtDbtInd>{sts}'
                f"<BookgDt><Dt>{_day(rng).isoformat()}</Dt></BookgDt>"
                f"<AcctSvcrRef>{rng.randrange(10**9)}</AcctSvcrRef><NtryDtls>"
                + "".join(
                    f"<TxDtls><RltdPties><{role}>{party}</{role}></RltdPties>"
                    f"<RmtInf><Ustrd>{name}</Ustrd></RmtInf></TxDtls>"
                    for _ in range(rng.choice([1, 1, 2]))
                )
                + "</NtryDtls></Ntry>\n"
            )
        stmts.append(
            f"<Stmt><Id>{account}</Id><FrToDt><FrDtTm>2026-01-01T00:00:00</FrDtTm>"
            f"<ToDtTm>2026-01-31T23:59:59</ToDtTm></FrToDt><Acct><Id><IBAN>NL{account}0BANK</IBAN>"
            f"</Id><Ccy>EUR</Ccy></Acct><Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp>"
            f'<Amt Ccy="EUR">{_amount(rng)}</Amt><CdtDbtInd>DBIT</CdtDbtInd>'
            f"<Dt><Dt>2026-01-31</Dt></Dt></Bal>\n" + "".join(ntries) + "</Stmt>\n"
        )
    version = rng.choice(["02", "04", "08", "13"])
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.{version}">'
        "<BkToCstmrStmt><GrpHdr><MsgId>1</MsgId></GrpHdr>\n"
        + "".join(stmts)
        + "</BkToCstmrStmt></Document>\n"
    ).encode("utf-8")


def generate_mt940(rng: random.Random) -> bytes:
    messages = []
    for number in range(rng.choice([1, 1, 2, 3])):
        blocks = rng.random() < 0.3
        lines = [
            f":20:STMT{number}",
            f":25:DE{rng.choice([1, 2])}0012345678",
            ":28C:1/1",
            f":60{rng.choice('FM')}:{rng.choice('CD')}260101EUR{_amount(rng, comma=True)}",
        ]
        for _ in range(rng.randrange(6)):
            day = _day(rng)
            yymmdd = f"{day.year % 100:02d}{day.month:02d}{day.day:02d}"
            entry = rng.choice(["", f"{day.month:02d}{day.day:02d}", "    "])
            mark = rng.choice(["C", "D", "RC", "RD", "CR", "DR"])
            ref = rng.choice(["NONREF", "KREF+", "REF1//BANK2", "NONREF//"])
            lines.append(f":61:{yymmdd}{entry}{mark}{_amount(rng, comma=True)}NTRF{ref}")
            if rng.random() < 0.5:
                name = _name(rng)
                lines.append(
                    f":86:166?00GUTSCHRIFT?20SVWZ+{name[:20]}?32{name[:27]}\n?33{name[27:]}"
                )
            elif rng.random() < 0.5:
                lines.append(f":86:{_name(rng)}")
        lines.append(f":62{rng.choice('FM')}:C260131EUR{_amount(rng, comma=True)}")
        text = "\r\n".join(lines) + "\r\n"
        if blocks:
            text = "{1:F01BANKDEFFAXXX0000000000}{2:O940}{4:\r\n" + text + "-}\r\n"
        else:
            text += "-\r\n"
        messages.append(text)
    return "".join(messages).encode("latin-1", "replace")


GENERATORS = {"ofx": generate_ofx, "camt.053": generate_camt, "mt940": generate_mt940}


def mutate(data: bytes, rng: random.Random, tokens: list[bytes]) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(7)
        at = rng.randrange(len(buf) + 1)
        if op == 0 and buf:  # flip a byte
            buf[min(at, len(buf) - 1)] = rng.randrange(256)
        elif op == 1:  # cut the file here (truncated upload)
            del buf[at:]
        elif op == 2:  # delete a slice
            del buf[at : at + rng.randrange(1, 64)]
        elif op == 3:  # double a slice
            buf[at:at] = buf[at : at + rng.randrange(1, 256)]
        elif op == 4:  # insert a token of the format
            buf[at:at] = rng.choice(tokens)
        elif op == 5:  # a digit changed (amounts, dates)
            digits = [
                i for i in range(max(0, at - 200), min(len(buf), at + 200)) if 48 <= buf[i] <= 57
            ]
            if digits:
                buf[rng.choice(digits)] = rng.randrange(48, 58)
        else:  # a long run of one byte
            buf[at:at] = bytes([rng.randrange(256)]) * rng.choice([10, 1000, 100000])
    return bytes(buf)


def cases(kind: str, count: int, seed: int = SEED) -> Iterator[bytes]:
    rng = random.Random(f"{seed}-{kind}")
    real = fixtures(kind)
    generate = GENERATORS[kind]
    for number in range(count):
        if number % 2:
            yield generate(rng)
        else:
            base = rng.choice(real) if rng.random() < 0.6 else generate(rng)
            yield mutate(base, rng, TOKENS[kind])


# A read's budget, from the contract's (a 5 MiB upload answered within 2 s of CPU and
# 200 MB of memory): 0.4 s of CPU per MiB read, 40 bytes of memory per byte, each over a
# floor for what any read costs (the readers' own objects, a small tree).
CPU_SECONDS_PER_MIB = 0.4
CPU_FLOOR_SECONDS = 0.05
BYTES_PER_BYTE = 40
MEMORY_FLOOR_BYTES = 64 * 1024


def cpu_budget(size: int) -> float:
    return CPU_FLOOR_SECONDS + CPU_SECONDS_PER_MIB * size / (1024 * 1024)


def memory_budget(size: int) -> int:
    return BYTES_PER_BYTE * (size + MEMORY_FLOOR_BYTES)


@dataclass
class Result:
    kind: str
    run: int = 0
    read: int = 0
    refusals: Counter = field(default_factory=Counter)
    unexpected: list[tuple[int, str]] = field(default_factory=list)
    max_seconds: float = 0.0  # CPU time (time.process_time) of the costliest file
    peak_bytes: int = 0
    # The costliest file against its budget (cpu_budget, memory_budget): at most 1 each.
    worst_cpu_share: float = 0.0
    worst_memory_share: float = 0.0
    # Files over a budget: (case number, size, CPU seconds, peak bytes).
    over_budget: list[tuple[int, int, float, int]] = field(default_factory=list)


def check_shape(result) -> None:
    """A BankFile as the statements service relies on it: what the dataclasses say."""
    from app.services.banking.bankfile import FORMATS, BankLine, BankStatement

    assert result.format in FORMATS, result.format
    assert result.statements
    for statement in result.statements:
        assert isinstance(statement, BankStatement)
        for line in statement.lines:
            assert isinstance(line, BankLine)
            assert isinstance(line.booked_on, dt.date) and 1900 <= line.booked_on.year <= 2200
            assert isinstance(line.amount_cents, int) and abs(line.amount_cents) < 10**15
            for text in (line.payee, line.memo, line.bank_ref):
                assert text is None or (isinstance(text, str) and text == text.strip() and text)


def _memory_peak(data: bytes) -> int:
    """The peak memory one read of data allocates (tracemalloc, started for it alone)."""
    from app.services.banking.readers import dispatch

    tracemalloc.start()
    try:
        with contextlib.suppress(Exception):
            dispatch(data)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def run(kind: str, count: int, seed: int = SEED, measure_memory: bool = True) -> Result:
    """Read `count` generated files of one format; the CPU time of each read (without
    tracemalloc, which slows Python several times) and, optionally, the peak memory of a
    second read under it, measured against its size's budget."""
    from app.services.banking.bankfile import TooManyLines
    from app.services.banking.readers import NotAStatement, StatementFormatError, dispatch

    result = Result(kind)
    for number, data in enumerate(cases(kind, count, seed)):
        started = time.process_time()
        try:
            check_shape(dispatch(data))
            result.read += 1
        except NotAStatement:
            result.refusals["415 not a statement"] += 1
        except TooManyLines:
            result.refusals["413 too many lines"] += 1
        except StatementFormatError as exc:
            result.refusals[f"400 {_problem_kind(exc.problem)}"] += 1
        except Exception as exc:  # the bug the harness is here to find
            result.unexpected.append((number, f"{type(exc).__name__}: {exc}"[:300]))
        seconds = time.process_time() - started
        peak = _memory_peak(data) if measure_memory else 0
        result.max_seconds = max(result.max_seconds, seconds)
        result.peak_bytes = max(result.peak_bytes, peak)
        cpu_share = seconds / cpu_budget(len(data))
        memory_share = peak / memory_budget(len(data))
        result.worst_cpu_share = max(result.worst_cpu_share, cpu_share)
        result.worst_memory_share = max(result.worst_memory_share, memory_share)
        if cpu_share > 1 or memory_share > 1:
            result.over_budget.append((number, len(data), round(seconds, 3), peak))
        result.run += 1
    return result


def _problem_kind(problem: str) -> str:
    for words, label in (
        ("decimals", "more than two decimals"),
        ("outside 1900", "date out of range"),
        ("DTD", "DTD or entity"),
        ("truncated", "truncated"),
        ("UTF-8", "encoding"),
        ("date", "bad date"),
        ("not a number", "bad amount"),
        ("too large", "amount too large"),
        ("characters long", "text too long"),
        ("control character", "control character"),
        ("charset", "charset"),
        ("currency", "currency"),
    ):
        if words in problem:
            return label
    return "broken"


def statement(kind: str, lines: int) -> bytes:
    """One valid statement of `lines` lines in the format: the read benchmark's input."""
    day = dt.date(2026, 1, 1)
    if kind == "ofx":
        trns = "".join(
            f"<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>{(day + dt.timedelta(n % 365)):%Y%m%d}120000"
            f"<TRNAMT>-{n % 997}.{n % 100:02d}<FITID>F{n}<NAME>Payee {n % 50}"
            f"<MEMO>Card payment number {n}</STMTTRN>\n"
            for n in range(lines)
        )
        return (
            "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nENCODING:USASCII\nCHARSET:1252\n\n"
            "<OFX><BANKMSGSRSV1><STMTTRNRS><TRNUID>1<STMTRS><CURDEF>EUR<BANKACCTFROM>"
            "<BANKID>1<ACCTID>NL01BANK<ACCTTYPE>CHECKING</BANKACCTFROM><BANKTRANLIST>"
            "<DTSTART>20260101<DTEND>20261231\n" + trns + "</BANKTRANLIST><LEDGERBAL>"
            "<BALAMT>100.00<DTASOF>20261231</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n"
        ).encode("ascii")
    if kind == "camt.053":
        ntries = "".join(
            f'<Ntry><NtryRef>{n}</NtryRef><Amt Ccy="EUR">{n % 997}.{n % 100:02d}</Amt>'
            f"<CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>"
            f"{(day + dt.timedelta(n % 365)).isoformat()}</Dt></BookgDt><AcctSvcrRef>R{n}"
            f"</AcctSvcrRef><NtryDtls><TxDtls><RltdPties><Cdtr><Pty><Nm>Payee {n % 50}</Nm></Pty>"
            f"</Cdtr></RltdPties><RmtInf><Ustrd>Invoice {n}</Ustrd></RmtInf></TxDtls></NtryDtls>"
            "</Ntry>\n"
            for n in range(lines)
        )
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="urn:iso:std:iso:20022:'
            'tech:xsd:camt.053.001.08"><BkToCstmrStmt><GrpHdr><MsgId>1</MsgId></GrpHdr><Stmt>'
            "<Id>1</Id><Acct><Id><IBAN>NL01BANK</IBAN></Id><Ccy>EUR</Ccy></Acct>\n"
            + ntries
            + "</Stmt></BkToCstmrStmt></Document>\n"
        ).encode("utf-8")
    entries = "".join(
        f":61:{(day + dt.timedelta(n % 365)):%y%m%d}D{n % 997},{n % 100:02d}NTRFREF{n}//B{n}\r\n"
        f":86:166?00GUTSCHRIFT?20SVWZ+Invoice {n}?32Payee {n % 50}\r\n"
        for n in range(lines)
    )
    return (
        ":20:STMT\r\n:25:DE89370400440532013000\r\n:28C:1/1\r\n:60F:C260101EUR1000,00\r\n"
        + entries
        + ":62F:C261231EUR1000,00\r\n-\r\n"
    ).encode("ascii")


# --- Hostile files: what costs a reader most per byte ------------------------------------
#
# Each is written to a size, so that a reader's cost can be measured against it: reading
# a statement must cost time and memory in proportion to its size, whatever its bytes
# (docs/statements.md, "Reading the files"). The first review of this found a pattern
# quadratic in the file's length behind a UTF-16 byte order mark, and an MT940 block of
# many {x} groups costing ~60 bytes of memory per byte.

_OFX1 = b"OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nENCODING:USASCII\nCHARSET:1252\n\n"
_OFX_TRN = (
    b"<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>EUR<BANKACCTFROM><ACCTID>1"
    b"</BANKACCTFROM><BANKTRANLIST>"
)
_CAMT_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>'
    b"<Stmt><Acct><Id><IBAN>NL01</IBAN></Id><Ccy>EUR</Ccy></Acct>"
)
_CAMT_TAIL = b"</Stmt></BkToCstmrStmt></Document>"
_MT940_OPEN = b":20:X\r\n:25:DE1\r\n:60F:C260101EUR1,00\r\n:61:260101C1\r\n"
_MT940_HEAD = _MT940_OPEN + b":62F:C260101EUR1,00\r\n-\r\n"  # one whole message


def _fill(prefix: bytes, unit: bytes, size: int, suffix: bytes = b"") -> bytes:
    return prefix + unit * max(1, (size - len(prefix) - len(suffix)) // len(unit)) + suffix


def _attributes(size: int) -> bytes:
    count = size // 12
    return _CAMT_HEAD + b"<a" + b"".join(b' a%d=""' % n for n in range(count)) + b"/>" + _CAMT_TAIL


def _many_accounts(size: int) -> bytes:
    unit = b":20:X\n:25:%d\n:61:260101C1\n:62F:C260101EUR1\n-\n"
    return b"".join(unit % n for n in range(size // len(unit % 100000)))


HOSTILE = {
    # the encoding's detection: a UTF-16 file of XML declarations, and one without BOM
    "utf-16 <?xml declarations": lambda n: (
        codecs.BOM_UTF16_LE + ("<?xml " * (n // 12)).encode("utf-16-le")
    ),
    "utf-16 declaration, no >": lambda n: (
        codecs.BOM_UTF16_LE + ('<?xml version="1.0" ' + "encoding=" * (n // 18)).encode("utf-16-le")
    ),
    "<?xml declarations": lambda n: _fill(b"", b"<?xml ", n),
    "camt <?xml declarations": lambda n: _fill(_CAMT_HEAD, b"<?xml ", n, _CAMT_TAIL),
    # OFX: the tokenizer and the 1.x header
    "ofx long text": lambda n: _fill(_OFX1 + _OFX_TRN + b"<STMTTRN><NAME>", b"A", n),
    "ofx many tags": lambda n: _fill(_OFX1 + b"<OFX>", b"<A>x", n, b"</OFX>"),
    "ofx nested": lambda n: _fill(_OFX1 + b"<OFX>", b"<A>", n),
    "ofx end tags": lambda n: _fill(_OFX1 + b"<OFX><A>", b"</A>", n),
    "ofx comments": lambda n: _fill(_OFX1 + b"<OFX>", b"<!---->", n, b"</OFX>"),
    "ofx instructions": lambda n: _fill(_OFX1 + b"<OFX>", b"<?a?>", n, b"</OFX>"),
    "ofx entities": lambda n: _fill(_OFX1 + _OFX_TRN + b"<STMTTRN><NAME>", b"&#65;", n),
    "ofx open angle brackets": lambda n: _fill(_OFX1 + b"<OFX>", b"<", n),
    "ofx blank header": lambda n: _fill(b"OFXHEADER:100\n", b"\n", n, b"<OFX></OFX>"),
    "ofx header lines": lambda n: _fill(b"OFXHEADER:100\n", b"A:B\n", n),
    "ofx 2 declarations": lambda n: _fill(b'<?OFX OFXHEADER="200"?>', b"<?xml ", n),
    "ofx lines": lambda n: _fill(
        _OFX1 + _OFX_TRN, b"<STMTTRN><DTPOSTED>20260101<TRNAMT>1<FITID>1</STMTTRN>", n
    ),
    # camt: expat and the tree
    "camt detection": lambda n: _fill(b"urn:iso:std:iso:20022:tech:xsd:camt.053.001.", b"<a.b", n),
    "camt many tags": lambda n: _fill(_CAMT_HEAD, b"<a/>", n, _CAMT_TAIL),
    "camt nested": lambda n: _fill(_CAMT_HEAD, b"<a>", n),
    "camt attributes": _attributes,
    "camt comments": lambda n: _fill(_CAMT_HEAD, b"<!---->", n, _CAMT_TAIL),
    "camt entities": lambda n: _fill(_CAMT_HEAD + b"<Ustrd>", b"&amp;", n),
    "camt lines": lambda n: _fill(
        _CAMT_HEAD,
        b"<Ntry><Amt>1</Amt><CdtDbtInd>CRDT</CdtDbtInd><BookgDt><Dt>2026-01-01</Dt>"
        b"</BookgDt></Ntry>",
        n,
        _CAMT_TAIL,
    ),
    # MT940: blocks, lines, fields
    "mt940 {x} groups": lambda n: _fill(_MT940_HEAD + b"{1:", b"{x}", n),
    "mt940 {x} groups closed": lambda n: _fill(_MT940_HEAD + b"{1:", b"{x}", n, b"}"),
    "mt940 {x} lines": lambda n: _fill(_MT940_HEAD, b"{1:{x}{x}{x}{x}}\n", n),
    "mt940 open blocks": lambda n: _fill(_MT940_HEAD, b"{1:", n),
    "mt940 {4: detection": lambda n: _fill(b"{", b"{4:", n, b"\n:20:\n:25:"),
    "mt940 long line": lambda n: _fill(_MT940_OPEN + b":86:", b"A", n),
    "mt940 long block": lambda n: _fill(_MT940_HEAD + b"{1:F01", b"\xd3", n, b"}{4:\r\n"),
    "mt940 blank lines": lambda n: _fill(_MT940_HEAD, b"\n", n),
    "mt940 short lines": lambda n: _fill(_MT940_HEAD, b"a\n", n),
    "mt940 continuation": lambda n: _fill(_MT940_OPEN, b":86:\na\na\na\n", n),
    "mt940 empty messages": lambda n: _fill(_MT940_HEAD, b":20:X\n:25:1\n:62F:C260101EUR1\n-\n", n),
    "mt940 tags": lambda n: _fill(b"", b":20:\n", n, b":25:\n"),
    "mt940 message ends": lambda n: _fill(_MT940_HEAD, b"-\n", n),
    "mt940 subfields": lambda n: _fill(_MT940_OPEN + b":86:", b"?20", n),
    "mt940 unknown tags": lambda n: _fill(_MT940_OPEN, b":99:\n", n),
    "mt940 lines": lambda n: _fill(_MT940_HEAD, b":61:260101C1\n", n, b":62F:C260101EUR1\n-\n"),
    "mt940 many accounts": _many_accounts,
    # text a database cannot keep
    "nul bytes": lambda n: _fill(_MT940_OPEN + b":86:", b"\x00", n),
}


@dataclass
class Cost:
    """One read measured: CPU seconds (time.process_time), the peak memory the read
    allocated (tracemalloc), and what came of it."""

    name: str
    size: int
    cpu_seconds: float
    peak_bytes: int
    outcome: str

    @property
    def within_budget(self) -> bool:
        return self.cpu_seconds <= cpu_budget(self.size) and (
            self.peak_bytes <= memory_budget(self.size)
        )


def outcome_of(data: bytes, max_lines: int | None = None) -> str:
    """'read', or the refusal's status and message (cut short)."""
    from app.services.banking.bankfile import DEFAULT_MAX_LINES, TooManyLines
    from app.services.banking.readers import NotAStatement, StatementFormatError, dispatch

    try:
        dispatch(data, max_lines or DEFAULT_MAX_LINES)
    except (NotAStatement, StatementFormatError, TooManyLines) as refusal:
        return f"{refusal.status} {str(refusal)[:120]}"
    return "read"


def measure(name: str, data: bytes, memory: bool = True) -> Cost:
    """The cost of reading `data`: CPU time without tracemalloc (which slows Python
    down several times), then the peak allocated in a second read under it."""
    started = time.process_time()
    outcome = outcome_of(data)
    cpu = time.process_time() - started
    peak = 0
    if memory:
        tracemalloc.start()
        try:
            outcome_of(data)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    return Cost(name, len(data), cpu, peak, outcome)


def hostile(size: int, names: list[str] | None = None, memory: bool = True) -> list[Cost]:
    """Every hostile file (or those named) written to about `size` bytes, measured."""
    return [measure(name, HOSTILE[name](size), memory) for name in names or sorted(HOSTILE)]
