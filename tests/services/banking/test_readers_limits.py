"""What a file may hold (docs/statements.md, "Reading the files"): reading costs time and
memory in proportion to the file's size whatever its bytes, a statement holds at most
MAX_STATEMENT_LINES lines (413), text is what either database keeps (400 naming the
line or the statement's field), amounts and dates are ASCII digits, and a declared
charset is one of those listed (400 naming it). The readers alone here; over HTTP on
both stores: test_statements_limits.py."""

from __future__ import annotations

import codecs
import time
import tracemalloc

import pytest

from app.services.banking.bankfile import TooManyLines
from app.services.banking.readers import NotAStatement, StatementFormatError, read
from harness import statement_files

KIB = 1024


def mt940(*lines: str, account: str = "DE1", currency: str = "EUR") -> bytes:
    """One MT940 message around these lines (each a :61: and an optional :86:)."""
    body = "".join(lines)
    return (
        f":20:X\r\n:25:{account}\r\n:60F:C260101{currency}1,00\r\n{body}"
        f":62F:C260131{currency}1,00\r\n-\r\n"
    ).encode()


def entry(amount: str = "1,00", memo: str | None = None, ref: str = "NONREF") -> str:
    text = f":61:260102C{amount}NTRF{ref}\r\n"
    return text + (f":86:{memo}\r\n" if memo is not None else "")


# --- time and memory in proportion to the size --------------------------------------


def _cpu(data: bytes) -> float:
    started = time.process_time()
    statement_files.outcome_of(data)
    return time.process_time() - started


def test_a_utf16_file_of_xml_declarations_is_refused_in_linear_time():
    # The review's file: a pattern looked for '<?xml ... encoding=' from every '<?xml' to
    # the end of the text; 400 KB froze the server for 32 s. 128 KiB took about 4 s.
    data = codecs.BOM_UTF16_LE + ("<?xml " * (64 * KIB // 6)).encode("utf-16-le")
    assert _cpu(data) < 0.5
    with pytest.raises(NotAStatement):
        read(data)


def test_only_the_declaration_at_the_start_of_a_utf16_file_is_rewritten():
    body = '<?xml version="1.0" encoding="UTF-16"?>\n<x a="<?xml encoding=\'UTF-16\'"/>'
    data = codecs.BOM_UTF16_BE + body.encode("utf-16-be")
    from app.services.banking.readers import _from_utf16

    assert _from_utf16(data).decode() == body.replace('"UTF-16"', '"UTF-8"', 1)


def test_an_mt940_block_of_many_groups_costs_no_memory_per_byte():
    # {1:{x}{x}...}: the block pattern kept ~60 bytes of backtracking state per byte.
    data = mt940() + b"{1:" + b"{x}" * (256 * KIB // 3) + b"}\r\n"
    tracemalloc.start()
    try:
        read(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * len(data)


def test_swift_blocks_are_taken_off_the_start_of_a_line_only():
    message = mt940(entry())
    wrapped = b"{1:F01BANKDEFFAXXX0000000000}{2:O940}{3:{108:REF}{121:X}}{4:\r\n" + message.replace(
        b"-\r\n", b"-}{5:{CHK:123}}\r\n"
    )
    [statement] = read(wrapped).statements
    assert statement.bank_account == "DE1" and len(statement.lines) == 1


@pytest.mark.parametrize("name", sorted(statement_files.HOSTILE))
def test_each_hostile_file_costs_in_proportion_to_its_size(name):
    """A file four times larger costs at most about four times the CPU (8 allowed: a
    shared machine; a quadratic step gives 16), and its read never holds more than
    40 bytes per byte of the file (the budget: 200 MB for a 5 MiB upload)."""
    small = statement_files.HOSTILE[name](48 * KIB)
    large = statement_files.HOSTILE[name](192 * KIB)
    small_cpu = min(_cpu(small) for _ in range(2))
    cost = statement_files.measure(name, large)
    large_cpu = min(cost.cpu_seconds, _cpu(large))
    assert large_cpu <= 8 * max(small_cpu, 0.01), (small_cpu, large_cpu)
    assert cost.peak_bytes <= 40 * cost.size + 256 * KIB, cost


# --- lines ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", statement_files.FORMATS)
def test_a_statement_of_more_lines_than_the_limit_is_refused_with_413(kind):
    data = statement_files.statement(kind, 51)
    assert len(read(data, max_lines=51).statements[0].lines) == 51
    with pytest.raises(TooManyLines) as caught:
        read(data, max_lines=50)
    assert caught.value.status == 413
    assert "50 lines" in str(caught.value) and "MAX_STATEMENT_LINES" in str(caught.value)


def test_the_limit_counts_the_lines_of_one_account_across_messages():
    two = mt940(*[entry()] * 30) + mt940(*[entry()] * 30)
    with pytest.raises(TooManyLines):
        read(two, max_lines=50)
    other = mt940(*[entry()] * 30) + mt940(*[entry()] * 30, account="DE2")
    assert [len(s.lines) for s in read(other, max_lines=50).statements] == [30, 30]


@pytest.mark.parametrize("kind", ["ofx", "camt.053"])
def test_too_many_lines_are_refused_before_the_file_is_read_to_its_end(kind):
    # The count is kept while the tree is built: the rest of the file is never parsed,
    # so a break after the limit is not what is reported.
    data = statement_files.statement(kind, 60)
    with pytest.raises(TooManyLines):
        read(data[: len(data) * 9 // 10] + b"<<<", max_lines=50)


# --- text ------------------------------------------------------------------------------


def _refusal(data: bytes) -> StatementFormatError:
    with pytest.raises(StatementFormatError) as caught:
        read(data)
    return caught.value


def test_text_up_to_the_limits_is_read():
    payee_memo = "?32" + "P" * 27 + "?33" + "Q" * 27
    [statement] = read(
        mt940(entry(memo="M" * 1999 + "\u00e9", ref="R" * 200), entry(memo="166?00X" + payee_memo))
    ).statements
    assert len(statement.lines[0].memo) == 2000
    assert len(statement.lines[0].bank_ref) == 200


@pytest.mark.parametrize(
    ("data", "where", "problem"),
    [
        (mt940(entry(memo="M" * 2001)), "line 4", "memo is 2,001 characters long, more than 2,000"),
        (mt940(entry(ref="R" * 201)), "line 4", "bank reference is 201 characters long"),
        (mt940(entry(memo="a\x00b")), "line 4", "control character U+0000"),
        (mt940(entry(memo="a\x1bb")), "line 4", "control character U+001B"),
        (mt940(entry(memo="a\x7fb")), "line 4", "control character U+007F"),
        (mt940(account="A" * 101), "bank_account", "101 characters long, more than 100"),
        (mt940(account="DE\x001"), "bank_account", "control character U+0000"),
        (
            statement_files.statement("camt.053", 1).replace(b"<Ccy>EUR<", b"<Ccy>EU1<"),
            "currency",
            "'EU1' is not a currency code of three letters",
        ),
    ],
)
def test_text_past_the_limits_is_refused_naming_the_line_or_field(data, where, problem):
    refusal = _refusal(data)
    assert refusal.status == 400
    assert refusal.where == where
    assert problem in refusal.problem


def test_each_format_names_the_line_in_the_file():
    ofx = statement_files.statement("ofx", 3).replace(
        b"<NAME>Payee 1<", b"<NAME>" + b"N" * 2001 + b"<"
    )
    camt = statement_files.statement("camt.053", 3).replace(b"<Nm>Payee 2<", b"<Nm>\xc2\x80<")
    assert (_refusal(ofx).where, _refusal(camt).where) == ("line 9", "line 5")
    assert "payee is 2,001 characters" in _refusal(ofx).problem
    assert "control character U+0080" in _refusal(camt).problem


def test_camt_and_ofx_currencies_must_be_three_letters():
    camt = statement_files.statement("camt.053", 1).replace(b"<Ccy>EUR<", b"<Ccy>EURO-DOLLAR-YEN<")
    ofx = statement_files.statement("ofx", 1).replace(b"<CURDEF>EUR", b"<CURDEF>\xe2\x82\xac")
    assert _refusal(camt).where == _refusal(ofx).where == "currency"


# --- digits and charsets -----------------------------------------------------------------

ARABIC_INDIC = "\u0661\u0662"  # 12 in Arabic-Indic digits, which int() and \d accept
OFX_UTF8 = statement_files.statement("ofx", 1).replace(b"CHARSET:1252", b"CHARSET:UTF-8")


@pytest.mark.parametrize(
    "data",
    [
        mt940(entry(amount=ARABIC_INDIC + ",00")),
        mt940().replace(b"C260101", "C\u0662\u0666\u0660\u0661\u0660\u0661".encode()),
        OFX_UTF8.replace(b"<TRNAMT>-0.00", "<TRNAMT>-\u0661".encode()),
        statement_files.statement("camt.053", 1).replace(
            b"<Dt>2026-01-01<", "<Dt>\u0662\u0660\u0662\u0666-01-01<".encode()
        ),
        OFX_UTF8.replace(b"<DTPOSTED>2026", "<DTPOSTED>\u0662\u0660\u0662\u0666".encode()),
    ],
)
def test_amounts_and_dates_are_ascii_digits_only(data):
    assert _refusal(data).status == 400


OFX_HEADER = statement_files.statement("ofx", 1)


@pytest.mark.parametrize(
    ("charset", "read_as"),
    [("1252", "\u00e9"), ("ISO-8859-15", "\u00e9"), ("WINDOWS-1250", "\u00e9"), ("NONE", "\u00e9")],
)
def test_listed_charsets_are_read(charset, read_as):
    data = OFX_HEADER.replace(b"CHARSET:1252", b"CHARSET:" + charset.encode())
    data = data.replace(b"<NAME>Payee 0", b"<NAME>Caf\xe9")
    assert read(data).statements[0].lines[0].payee == "Caf" + read_as


@pytest.mark.parametrize("charset", ["UTF-7", "unicode_escape", "Shift_JIS", "rot13", "UTF-16"])
def test_any_other_declared_charset_is_refused_naming_it(charset):
    ofx = OFX_HEADER.replace(b"CHARSET:1252", b"CHARSET:" + charset.encode())
    refusal = _refusal(ofx)
    assert refusal.where == "line 5"  # the CHARSET line
    assert repr(charset) in refusal.problem
    camt = statement_files.statement("camt.053", 1).replace(b"UTF-8", charset.encode(), 1)
    assert repr(charset) in _refusal(camt).problem
    ofx2 = (
        f'<?xml version="1.0" encoding="{charset}"?>\n<?OFX OFXHEADER="200"?>\n<OFX></OFX>'
    ).encode()
    assert repr(charset) in _refusal(ofx2).problem


def test_a_lone_surrogate_can_no_longer_come_through_a_charset():
    # unicode_escape turned "\ud800" into a lone surrogate: 500 on both stores.
    data = OFX_HEADER.replace(b"CHARSET:1252", b"CHARSET:unicode_escape")
    data = data.replace(b"<NAME>Payee 0", b"<NAME>\\ud800")
    assert "unicode_escape" in _refusal(data).problem


def test_a_utf16_file_with_its_mark_is_read_whatever_it_declares():
    ofx = OFX_HEADER.replace(b"<NAME>Payee 0", "<NAME>Caf\u00e9".encode("cp1252"))
    as_utf16 = ofx.decode("cp1252").encode("utf-16")  # with its byte order mark
    assert read(as_utf16).statements[0].lines[0].payee == "Caf\u00e9"
    camt = statement_files.statement("camt.053", 1).decode()
    camt16 = camt.replace('encoding="UTF-8"', 'encoding="UTF-16"').encode("utf-16")
    assert len(read(camt16).statements[0].lines) == 1


def test_a_camt_element_of_more_than_256_attributes_is_refused_before_expat_reads_it():
    # expat reads a start tag's attributes in one call that holds the interpreter: one
    # element of 400,000 kept every other request of the server waiting for seconds.
    def with_attributes(count: int) -> bytes:
        crowd = b" ".join(b'a%d=">"' % n for n in range(count))
        camt = statement_files.statement("camt.053", 1)
        return camt.replace(b"<Ntry>", b"<Ntry><Extra " + crowd + b"/>", 1)

    assert len(read(with_attributes(256)).statements[0].lines) == 1
    refusal = _refusal(with_attributes(257))
    assert (refusal.where, refusal.problem) == (
        "line 3",
        "an element with more than 256 attributes",
    )
