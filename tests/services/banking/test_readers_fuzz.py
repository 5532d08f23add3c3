"""The readers under generated files (harness/statement_files.py): mutations of the real
files and files written from each format's grammar must come back as a BankFile or one
of the three refusals, each within its size's budget of CPU time and memory. The full
run (10,000 per format, and the hostile files at 5 MiB) is `python -m bench.statements_fuzz`;
this is its quick version (the hostile files: test_readers_limits.py)."""

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.services.banking.readers import NotAStatement, StatementFormatError, dispatch
from harness import statement_files

QUICK = 300


@pytest.mark.parametrize("kind", statement_files.FORMATS)
def test_generated_files_are_read_or_refused_never_anything_else(kind):
    result = statement_files.run(kind, QUICK, measure_memory=True)
    assert result.run == QUICK
    assert result.unexpected == []
    assert result.read > QUICK // 5  # the generator does make readable files
    assert sum(result.refusals.values()) > QUICK // 5  # and broken ones
    # Each file's CPU time and memory against its size's budget (0.4 s of CPU per MiB,
    # 40 bytes per byte, over a floor: statement_files.cpu_budget, memory_budget).
    assert result.over_budget == []
    assert result.worst_cpu_share <= 1 and result.worst_memory_share <= 1


PREFIXES = [
    b"OFXHEADER:100\nENCODING:USASCII\nCHARSET:1252\n\n<OFX>",
    b'<?xml version="1.0"?><?OFX OFXHEADER="200"?><OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS>',
    b'<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><Stmt>',
    b":20:X\n:25:DE1\n:60F:C260101EUR1,00\n:61:",
]


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prefix=st.sampled_from(PREFIXES), tail=st.binary(max_size=400))
def test_any_bytes_after_a_format_header_are_read_or_refused(prefix, tail):
    with contextlib.suppress(NotAStatement, StatementFormatError):
        dispatch(prefix + tail)
