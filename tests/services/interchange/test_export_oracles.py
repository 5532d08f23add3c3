"""The real tools as oracles: hledger and Beancount read our exports and agree with us.

Sign convention: hledger and Beancount report raw sums (debits positive, credits
negative). Our /reports/balances is sign-adjusted (liability, equity and income
negated: reports are sign-adjusted, README "A short tour"). So the comparison multiplies
our figure by reports.sign_for(kind) to get back the raw sum before comparing.

Where hledger, ledger-cli or bean-check is missing the test says so as a skip, except
under CI (tests.support.missing_tool), where .ci/run installs them and a skip would hide
a gap, so it fails instead.
"""

import csv
import io
import shutil
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.services.interchange import plaintext
from app.services.interchange.export import bean_string
from app.services.ledger import reports
from tests.support import missing_tool

HLEDGER = shutil.which("hledger")
LEDGER = shutil.which("ledger")
BEAN_CHECK = shutil.which("bean-check") or str(Path(sys.executable).parent / "bean-check")


@pytest.fixture(scope="module")
def hledger():
    if HLEDGER is None:
        missing_tool("hledger is not installed (apt-get install hledger)")
    return HLEDGER


@pytest.fixture(scope="module")
def ledger():
    if LEDGER is None:
        missing_tool("ledger-cli is not installed (apt-get install ledger)")
    return LEDGER


def our_raw_balances(api, query="") -> dict[tuple[str, str], int]:
    """(kind, name) -> raw cents (debit positive), from /reports/balances."""
    kinds = {a["name"]: a["kind"] for a in api.get("/accounts").get_json()}
    lines = api.get("/reports/balances" + query).get_json()
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


def hledger_balances(journal) -> dict[str, int]:
    out = subprocess.run(
        [HLEDGER, "-f", str(journal), "bal", "--flat", "--no-total", "-O", "csv"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["account", "balance"]
    return {row[0]: cents_of(row[1]) for row in rows[1:]}


def checked_balances(journal) -> dict[str, int]:
    """hledger_balances of a journal that hledger's own checks (accounts declared,
    dates in order) pass first."""
    check = subprocess.run(
        [HLEDGER, "-f", str(journal), "check", "accounts", "ordereddates"],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stderr
    return hledger_balances(journal)


def test_hledger_balances_equal_ours(hledger, api, sample_books, tmp_path):
    journal = tmp_path / "export.journal"
    journal.write_bytes(api.get("/export?format=hledger").get_data())
    theirs = checked_balances(journal)
    ours = our_raw_balances(api)
    expected = {plaintext.hledger_account(k, n): c for (k, n), c in ours.items() if c != 0}
    assert theirs == expected
    # The ledger really uses all five kinds, and hledger saw every top level.
    assert {name.split(":")[0] for name in theirs} == {
        "assets",
        "liabilities",
        "equity",
        "income",
        "expenses",
    }
    # A windowed export: income and expenses are the window's, the rest its end's
    # balances (the opening transaction: test_a_window_journal_opens_with_...).
    window = "from=2026-01-04&to=2026-02-01"
    journal.write_bytes(api.get(f"/export?format=hledger&{window}").get_data())
    ours = our_raw_balances(api, "?" + window)
    flows = {
        plaintext.hledger_account(k, n): c
        for (k, n), c in ours.items()
        if c != 0 and k in ("income", "expense")
    }
    assert {a: c for a, c in hledger_balances(journal).items() if a in flows} == flows
    assert ours[("income", "Salary")] == 0  # the window really leaves pay day out


def expected_from_reports(sheet: dict, statement: dict) -> dict[str, int]:
    """hledger's raw balances, as our reports say them: assets and liabilities at the
    balance sheet's date, income and expenses over the statement's window."""
    expected = {}
    for section, kind in (
        ("assets", "asset"),
        ("liabilities", "liability"),
        ("income", "income"),
        ("expenses", "expense"),
    ):
        report = sheet if section in sheet else statement
        for line in report[section]:
            raw = reports.sign_for(kind) * line["cents"]
            if raw:
                expected[plaintext.hledger_account(kind, line["account"])] = raw
    return expected


@pytest.mark.parametrize(
    "start, day_before, first_in_window, retained_before",
    [
        # Only income before the window (pay day, 2,500.00).
        ("2026-01-04", "2026-01-03", "2026-01-04 (3)", 250000),
        # An expense before it too: the groceries (43.21) of 2026-01-04 are retained
        # earnings, not an opening line of their own.
        ("2026-01-05", "2026-01-04", "2026-01-05 (4)", 250000 - 4321),
    ],
)
def test_a_window_journal_opens_with_the_balances_before_it(
    hledger, api, sample_books, tmp_path, start, day_before, first_in_window, retained_before
):
    """hledger's `bal` over a window's journal: every asset and liability its balance at
    the window's end, every income and expense the window's figure, and the retained
    earnings before the window (income less expenses) on equity:Retained earnings."""
    window = f"from={start}&to=2026-02-01"
    text = api.get(f"/export?format=hledger&{window}").get_data(as_text=True)
    assert f"\n{start} Opening balances" in text
    assert text.index("Opening balances") < text.index(first_in_window)
    journal = tmp_path / "window.journal"
    journal.write_text(text, encoding="utf-8")
    theirs = checked_balances(journal)
    sheet = api.get("/reports/balance-sheet?as_of=2026-02-01").get_json()
    statement = api.get(f"/reports/income-statement?{window}").get_json()
    expected = expected_from_reports(sheet, statement)
    assert {a: c for a, c in theirs.items() if not a.startswith("equity")} == expected
    before = api.get(f"/reports/balance-sheet?as_of={day_before}").get_json()
    assert theirs["equity:Retained earnings"] == -before["retained_cents"] == -retained_before
    assert theirs["equity:Opening balances"] == -100000
    assert sum(theirs.values()) == 0


def test_the_packs_journal_agrees_with_its_balance_sheet(hledger, api, sample_books, tmp_path):
    """The auditor's check: hledger over the pack's books.journal against the pack's
    own reports/balance-sheet.csv and reports/income-statement.csv."""
    import zipfile

    window = "from=2026-01-04&to=2026-02-01"
    data = api.get(f"/export?format=audit-pack&{window}").data
    with zipfile.ZipFile(io.BytesIO(data)) as pack:
        journal = tmp_path / "books.journal"
        journal.write_bytes(pack.read("books.journal"))
        sheet = list(csv.reader(io.StringIO(pack.read("reports/balance-sheet.csv").decode())))
        flows = list(csv.reader(io.StringIO(pack.read("reports/income-statement.csv").decode())))
    kinds = {"assets": "asset", "liabilities": "liability", "income": "income"}
    kinds["expenses"] = "expense"
    expected = {}
    for section, account, amount in sheet[1:] + flows[1:]:
        if section in kinds and account:
            raw = reports.sign_for(kinds[section]) * cents_of(amount)
            if raw:
                expected[plaintext.hledger_account(kinds[section], account)] = raw
    theirs = hledger_balances(journal)
    assert {a: c for a, c in theirs.items() if not a.startswith("equity")} == expected
    assert expected["assets:Checking"] == 100000 + 250000 - 4321 - 100 + 1


def test_ledger_cli_reads_the_same_journal(ledger, api, sample_books, tmp_path):
    journal = tmp_path / "export.journal"
    journal.write_bytes(api.get("/export?format=hledger").get_data())
    result = subprocess.run(
        [
            LEDGER,
            "-f",
            str(journal),
            "--flat",
            "--no-total",
            "--balance-format",
            "%(account)\t%(scrub(display_total))\n",
            "bal",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0 and not result.stderr, result.stderr
    theirs = dict(line.split("\t") for line in result.stdout.splitlines())
    expected = {
        plaintext.hledger_account(k, n): c for (k, n), c in our_raw_balances(api).items() if c != 0
    }
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

    if not Path(BEAN_CHECK).exists():
        missing_tool("bean-check is not installed (pip install beancount)")
    result = subprocess.run([BEAN_CHECK, str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# --- the escaping rules against the real parsers, on arbitrary names and descriptions ---

_chars = st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\x00")
_texts = st.text(_chars, min_size=1, max_size=12).map(str.strip).filter(bool)


def _journal(names: list[str]) -> tuple[str, dict[str, int]]:
    """One transaction posting 1.00, 2.00, ... to each name, balanced by assets:Z."""
    accounts = [plaintext.hledger_account("expense", n) for n in names]
    lines = [f"account {a}" for a in accounts] + ["", "2026-01-01 (1) probe"]
    lines += [f"    {a}  {i + 1}.00 USD" for i, a in enumerate(accounts)]
    total = 100 * sum(range(1, len(names) + 1))
    lines.append(f"    assets:Z  {plaintext.format_cents(-total)} USD")
    expected = {a: 100 * (i + 1) for i, a in enumerate(accounts)} | {"assets:Z": -total}
    return "\n".join(lines) + "\n", expected


@pytest.mark.slow  # a property run over subprocesses: seconds (README, the quick loop)
@settings(max_examples=40, deadline=None)
@given(names=st.lists(_texts, min_size=1, max_size=4, unique=True))
def test_any_account_name_survives_hledger_and_ledger(hledger, ledger, names, tmp_path_factory):
    path = tmp_path_factory.mktemp("names") / "probe.journal"
    text, expected = _journal(names)
    path.write_text(text, encoding="utf-8")
    hledger = subprocess.run(
        [HLEDGER, "-f", str(path), "bal", "--flat", "--no-total", "-O", "csv"],
        capture_output=True,
        text=True,
    )
    assert hledger.returncode == 0 and not hledger.stderr, hledger.stderr
    rows = list(csv.reader(io.StringIO(hledger.stdout)))[1:]
    assert {a: cents_of(v) for a, v in rows} == expected
    ledger = subprocess.run(
        [
            LEDGER,
            "-f",
            str(path),
            "--flat",
            "--no-total",
            "--balance-format",
            "%(account)\t%(scrub(display_total))\n",
            "bal",
        ],
        capture_output=True,
        text=True,
    )
    assert ledger.returncode == 0 and not ledger.stderr, ledger.stderr
    rows = [line.split("\t") for line in ledger.stdout.split("\n") if line]
    assert {a: cents_of(v) for a, v in rows} == expected


@pytest.mark.slow  # a property run: seconds (README, the quick loop)
@settings(max_examples=150, deadline=None)
@given(description=_texts, name=_texts)
def test_any_description_and_name_survive_beancount(description, name):
    from beancount import loader

    account = plaintext.beancount_account("expense", name)
    entries, errors, _ = loader.load_string(
        f"2026-01-01 open {account} USD\n2026-01-01 open Assets:Z USD\n"
        f"2026-01-02 * {bean_string(description)}\n  author: {bean_string(description)}\n"
        f"  {account}  1.00 USD\n  Assets:Z  -1.00 USD\n"
    )
    assert errors == []
    (tx,) = [e for e in entries if hasattr(e, "narration")]
    assert tx.narration == description and tx.meta["author"] == description
    assert tx.postings[0].account == account
