"""The real tools as oracles: hledger and Beancount read our exports and agree with us.

Sign convention: hledger and Beancount report raw sums (debits positive, credits
negative). Our /reports/balances is sign-adjusted (liability, equity and income
negated, SPEC). So the comparison multiplies our figure by reports.sign_for(kind)
to get back the raw sum before comparing.
"""

import csv
import io
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal

import pytest

from app.services import plaintext, reports

HLEDGER = shutil.which("hledger")
LEDGER = shutil.which("ledger")
BEAN_CHECK = shutil.which("bean-check") or os.path.join(
    os.path.dirname(sys.executable), "bean-check"
)


def our_raw_balances(api) -> dict[tuple[str, str], int]:
    """(kind, name) -> raw cents (debit positive), from /reports/balances."""
    kinds = {a["name"]: a["kind"] for a in api.get("/accounts").get_json()}
    lines = api.get("/reports/balances").get_json()
    return {
        (kinds[line["account"]], line["account"]): reports.sign_for(kinds[line["account"]])
        * line["cents"]
        for line in lines
    }


def cents_of(text: str) -> int:
    """'-12.34 USD' or '0' -> cents, exactly (the oracle's own output, read by Decimal)."""
    number = text.replace("USD", "").strip() or "0"
    value = Decimal(number) * 100
    assert value == value.to_integral_value()
    return int(value)


@pytest.mark.skipif(HLEDGER is None, reason="hledger is not installed (apt-get install hledger)")
def test_hledger_balances_equal_ours(api, sample_books, tmp_path):
    journal = tmp_path / "export.journal"
    journal.write_bytes(api.get("/export?format=hledger").get_data())
    check = subprocess.run(
        [HLEDGER, "-f", str(journal), "check", "accounts", "ordereddates"],
        capture_output=True, text=True,
    )
    assert check.returncode == 0, check.stderr
    out = subprocess.run(
        [HLEDGER, "-f", str(journal), "bal", "--flat", "--no-total", "-O", "csv"],
        capture_output=True, text=True, check=True,
    ).stdout
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["account", "balance"]
    theirs = {row[0]: cents_of(row[1]) for row in rows[1:]}

    ours = our_raw_balances(api)
    expected = {plaintext.hledger_account(k, n): c for (k, n), c in ours.items() if c != 0}
    assert theirs == expected
    # The ledger really uses all five kinds, and hledger saw every top level.
    assert {name.split(":")[0] for name in theirs} == {
        "assets", "liabilities", "equity", "income", "expenses"
    }


@pytest.mark.skipif(LEDGER is None, reason="ledger-cli is not installed (apt-get install ledger)")
def test_ledger_cli_reads_the_same_journal(api, sample_books, tmp_path):
    journal = tmp_path / "export.journal"
    journal.write_bytes(api.get("/export?format=hledger").get_data())
    result = subprocess.run(
        [LEDGER, "-f", str(journal), "--flat", "--no-total",
         "--balance-format", "%(account)\t%(scrub(display_total))\n", "bal"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0 and not result.stderr, result.stderr
    theirs = dict(line.split("\t") for line in result.stdout.splitlines())
    expected = {plaintext.hledger_account(k, n): c for (k, n), c in our_raw_balances(api).items()
                if c != 0}
    assert {a: cents_of(v) for a, v in theirs.items()} == expected


def test_beancount_balances_equal_ours_and_bean_check_accepts(api, sample_books, tmp_path):
    from beancount import loader
    from beancount.core import data

    path = tmp_path / "export.beancount"
    path.write_bytes(api.get("/export?format=beancount").get_data())
    entries, errors, _options = loader.load_file(str(path))
    assert errors == []
    theirs: dict[str, int] = defaultdict(int)
    opened = set()
    for entry in entries:
        if isinstance(entry, data.Open):
            opened.add(entry.account)
        if isinstance(entry, data.Transaction):
            assert entry.meta["id"] and entry.narration
            for posting in entry.postings:
                assert posting.units.currency == "USD"
                theirs[posting.account] += int(posting.units.number * 100)

    ours = our_raw_balances(api)
    assert opened == {plaintext.beancount_account(k, n) for k, n in ours}
    assert {a: c for a, c in theirs.items() if c} == {
        plaintext.beancount_account(k, n): c for (k, n), c in ours.items() if c
    }

    if not os.path.exists(BEAN_CHECK):
        pytest.skip("bean-check is not installed (pip install beancount)")
    result = subprocess.run([BEAN_CHECK, str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
