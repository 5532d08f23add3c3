"""Import: hand-written journals, refusals by line number, all or nothing, the CLI."""

import textwrap

import pytest
from sqlalchemy import func, select

from app import store
from app.extensions import db
from app.models import Account, Transaction
from app.services.errors import BadRequestError
from app.services.interchange import importer
from app.services.ledger import listing


def stored(app) -> tuple[int, int]:
    with app.app_context():
        return (
            db.session.execute(select(func.count()).select_from(Account)).scalar_one(),
            db.session.execute(select(func.count()).select_from(Transaction)).scalar_one(),
        )


def run_import(app, text, fmt):
    with app.app_context():
        try:
            result = importer.import_text(textwrap.dedent(text).lstrip("\n"), fmt)
            store.commit()
            return result
        finally:
            store.rollback()


HAND_WRITTEN_HLEDGER = """
    ; my books
    account assets:bank:checking  ; the main account

    comment
    2026-01-01 this is inside a comment block
    end comment

    2026/01/02 * (A1) Opening  ; opening balances
        assets:bank:checking        $1,000.00
        equity:opening

    2026-01-05 ! Groceries | weekly  ; author:alice@example.com, note:x
        ; a transaction comment
        expenses:food               $12.34  ; posting comment
        * assets:bank:checking     $-12.34
    2026-01-06 Coffee
      expenses:food  $3
      assets:bank:checking
"""


def books_and_listing(app) -> tuple[dict, list]:
    with app.app_context():
        books = {a.name: a.kind for a in db.session.execute(select(Account)).scalars()}
        return books, listing.list_transactions(None, None)


def test_hand_written_hledger_journal(app, make_user):
    make_user()
    result = run_import(app, HAND_WRITTEN_HLEDGER, "hledger")
    assert (result.added, result.duplicates, result.accounts_created) == (3, 0, 3)
    books, listed = books_and_listing(app)
    assert books == {"bank:checking": "asset", "opening": "equity", "food": "expense"}
    assert [t["description"] for t in listed] == ["Coffee", "Groceries | weekly", "Opening"]
    assert listed[1]["created_by_email"] == "alice@example.com"
    assert listed[2]["created_by_email"] is None
    assert [e["amount_cents"] for e in listed[0]["entries"]] == [300, -300]
    assert [e["amount_cents"] for e in listed[2]["entries"]] == [100000, -100000]
    again = run_import(app, HAND_WRITTEN_HLEDGER, "hledger")
    assert (again.added, again.duplicates, again.accounts_created) == (0, 3, 0)
    assert stored(app) == (3, 3)


HAND_WRITTEN_BEANCOUNT = """
    option "title" "Club books"
    2026-01-01 open Assets:US:BofA-Checking USD
    2026-01-01 commodity USD

    * Org heading
    2026-01-02 * "Landlord" "Rent for January" #home ^rent-2026
      author: "alice@example.com"
      Expenses:Home:Rent   1,250.00 USD
        receipt: "scan.pdf"
      Assets:US:BofA-Checking
    2026-01-03 txn "Interest"
      Assets:US:BofA-Checking   0.07 USD ; pennies
      Income:Interest          -0.07 USD
    2026-01-31 note Assets:US:BofA-Checking "called the bank"
"""


def test_hand_written_beancount_file(app, make_user):
    make_user()
    result = run_import(app, HAND_WRITTEN_BEANCOUNT, "beancount")
    assert (result.added, result.duplicates, result.accounts_created) == (2, 0, 3)
    books, listed = books_and_listing(app)
    # A hand-written '-' reads as a space; our export writes it back as '-'.
    assert books == {"US:BofA Checking": "asset", "Home:Rent": "expense", "Interest": "income"}
    assert listed[1]["description"] == "Landlord | Rent for January"
    assert listed[1]["created_by_email"] == "alice@example.com"
    assert [e["amount_cents"] for e in listed[1]["entries"]] == [125000, -125000]
    assert [e["amount_cents"] for e in listed[0]["entries"]] == [7, -7]


OK_TX = "2026-01-01 Fine\n    assets:cash  1.00 USD\n    income:gifts  -1.00 USD\n\n"
OK_BEAN = '2026-01-01 * "Fine"\n  Assets:Cash  1.00 USD\n  Income:Gifts  -1.00 USD\n\n'
CSV_HEAD = "transaction_id,date,description,author,account,kind,cents\n"

REFUSALS = [
    # (format, text, line, message)
    (
        "hledger",
        OK_TX + "2026-01-02 Mixed\n    assets:cash  1.00 USD\n    income:gifts  -1.00 EUR\n",
        7,
        "several commodities",
    ),
    (
        "hledger",
        OK_TX + "2026-01-02 Tiny\n    assets:cash  0.001 USD\n    income:gifts\n",
        6,
        "finer than a cent",
    ),
    (
        "hledger",
        OK_TX + "2026-01-02 Off\n    assets:cash  1.00 USD\n    income:gifts  -0.99 USD\n",
        5,
        "do not balance: they sum to 0.01",
    ),
    (
        "hledger",
        OK_TX + "2026-01-02 Two gaps\n    assets:cash  1.00 USD\n    income:a\n    income:b\n",
        8,
        "more than one posting has no amount",
    ),
    (
        "hledger",
        OK_TX + "2026-01-02 FX\n    assets:cash  1.00 USD @ 0.9 EUR\n    income:gifts\n",
        6,
        "prices and costs",
    ),
    (
        "hledger",
        OK_TX + "2026-01-02 Check\n    assets:cash  1.00 USD = 2.00 USD\n    income:gifts\n",
        6,
        "balance assertions",
    ),
    ("hledger", OK_TX + "2026-01-02 Budget\n    (assets:cash)  1.00 USD\n", 6, "virtual postings"),
    ("hledger", OK_TX + "~ monthly\n    expenses:rent  10 USD\n    assets:cash\n", 5, "periodic"),
    ("hledger", OK_TX + "= expenses:food\n    (budget)  -1\n", 5, "automated postings"),
    ("hledger", "include other.journal\n", 1, "include is not supported"),
    ("hledger", OK_TX + "P 2026-01-01 EUR 1.1 USD\n", 5, "market prices"),
    (
        "hledger",
        OK_TX + "2026-01-02=2026-01-03 Late\n    assets:cash  1 USD\n    income:x\n",
        5,
        "secondary dates",
    ),
    (
        "hledger",
        OK_TX + "2026-02-30 Bad\n    assets:cash  1 USD\n    income:x\n",
        5,
        "not a valid date",
    ),
    (
        "hledger",
        OK_TX + "2026-01-02 Where\n    stuff:cash  1 USD\n    income:x\n",
        6,
        "known top-level name",
    ),
    (
        "hledger",
        OK_TX + "2026-01-02\n    assets:cash  1 USD\n    income:x\n",
        5,
        "description is required",
    ),
    ("hledger", OK_TX + "2026-01-02 Lonely\n    assets:cash\n", 5, "at least 2"),
    (
        "hledger",
        OK_TX + "2026-01-02 Kind\n    expenses:cash  1 USD\n    income:gifts\n",
        6,
        "exists here as asset",
    ),
    ("beancount", OK_BEAN + "2026-01-02 balance Assets:Cash 1.00 USD\n", 5, "balance assertions"),
    ("beancount", OK_BEAN + "2026-01-02 pad Assets:Cash Equity:Opening\n", 5, "pad directives"),
    ("beancount", OK_BEAN + "2026-01-02 price EUR 1.10 USD\n", 5, "prices are not supported"),
    (
        "beancount",
        OK_BEAN + '2026-01-02 * "Buy"\n  Assets:Stock  1 ACME {10.00 USD}\n  Assets:Cash\n',
        6,
        "costs",
    ),
    (
        "beancount",
        OK_BEAN + '2026-01-02 * "FX"\n  Assets:Cash  1.00 EUR @ 1.10 USD\n  Assets:Cash\n',
        6,
        "prices and costs (@, @@)",
    ),
    (
        "beancount",
        OK_BEAN + '2026-01-02 * "Math"\n  Assets:Cash  (1+2) USD\n  Income:Gifts\n',
        6,
        "no arithmetic",
    ),
    (
        "beancount",
        OK_BEAN + '2026-01-02 * "Bare"\n  Assets:Cash  1.00\n  Income:Gifts\n',
        6,
        "not a plain amount like 12.34 USD",
    ),
    (
        "beancount",
        OK_BEAN + '2026-01-02 * "Mixed"\n  Assets:Cash  1.00 EUR\n  Income:Gifts\n',
        6,
        "several commodities",
    ),
    (
        "beancount",
        OK_BEAN + '2026-01-02 * "Tiny"\n  Assets:Cash  0.015 USD\n  Income:Gifts\n',
        6,
        "finer than a cent",
    ),
    (
        "beancount",
        OK_BEAN + '2026-01-02 * "Off"\n  Assets:Cash  1 USD\n  Income:Gifts  -2 USD\n',
        5,
        "do not balance",
    ),
    (
        "beancount",
        OK_BEAN + '2026-01-02 * "Gaps"\n  Assets:Cash  1 USD\n  Income:A\n  Income:B\n',
        8,
        "more than one posting has no amount",
    ),
    ("beancount", 'plugin "beancount.plugins.auto"\n', 1, "plugins are not supported"),
    ("beancount", OK_BEAN + 'include "more.beancount"\n', 5, "include is not supported"),
    ("beancount", OK_BEAN + '2026-01-02 * "Open \n', 5, "multi-line strings"),
    ("csv", "id,date\n", 1, "the header must be"),
    (
        "csv",
        CSV_HEAD + "1,2026-01-01,A,,Cash,asset,100\n1,2026-01-01,A,,Gifts,gift,-100\n",
        3,
        "kind must be one of",
    ),
    (
        "csv",
        CSV_HEAD + "1,2026-01-01,A,,Cash,asset,1.50\n1,2026-01-01,A,,Gifts,income,-150\n",
        2,
        "whole number of cents",
    ),
    (
        "csv",
        CSV_HEAD + "1,2026-01-01,A,,Cash,asset,100\n1,2026-01-02,A,,Gifts,income,-100\n",
        3,
        "disagree",
    ),
    (
        "csv",
        CSV_HEAD + "1,2026-01-01,A,,Cash,asset,100\n1,2026-01-01,A,,Gifts,income,-99\n",
        2,
        "do not balance",
    ),
]


@pytest.mark.parametrize(
    "fmt, text, line, message", REFUSALS, ids=[f"{r[0]}-{r[3][:24]}" for r in REFUSALS]
)
def test_refusals_name_the_line_and_store_nothing(app, service_account, fmt, text, line, message):
    service_account("cash", "asset")  # for the kind clash case; present in every case
    before = stored(app)
    with pytest.raises(BadRequestError) as info:
        run_import(app, text, fmt)
    assert info.value.message.startswith(f"line {line}: "), info.value.message
    assert message in info.value.message, info.value.message
    assert stored(app) == before


def test_a_late_failure_undoes_everything_including_new_accounts(app):
    text = OK_TX * 3 + "2026-03-01 Broken\n    assets:new  1 USD\n    income:new  -2 USD\n"
    with pytest.raises(BadRequestError, match="^line 13: "):
        run_import(app, text, "hledger")
    assert stored(app) == (0, 0)


def test_same_validation_as_post_transactions(app):
    huge = "9" * 17 + ".00"  # cents beyond the signed 64-bit range the API accepts
    text = f"2026-01-02 Huge\n    assets:cash  {huge} USD\n    income:x  -{huge} USD\n"
    with pytest.raises(BadRequestError) as info:
        run_import(app, text, "hledger")
    assert info.value.message == (
        "line 1: 'entries[0].amount_cents' is out of range for a 64-bit integer"
    )
    assert stored(app) == (0, 0)


def test_cli_import_dry_run_then_real_then_again(app, runner, tmp_path):
    path = tmp_path / "books.journal"
    path.write_text(textwrap.dedent(HAND_WRITTEN_HLEDGER), encoding="utf-8")
    dry = runner.invoke(args=["import", str(path), "--format", "hledger", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "would add 3 transactions" in dry.output
    assert stored(app) == (0, 0)
    real = runner.invoke(args=["import", str(path), "--format", "hledger"])
    assert real.exit_code == 0, real.output
    assert "added 3 transactions; 0 already present" in real.output
    again = runner.invoke(args=["import", str(path), "--format", "hledger"])
    assert "added 0 transactions; 3 already present (skipped); added 0 accounts" in again.output
    assert stored(app) == (3, 3)


def test_cli_import_failure_is_one_line_and_exit_1(app, runner, tmp_path):
    path = tmp_path / "bad.beancount"
    path.write_text(OK_BEAN + "2026-01-02 balance Assets:Cash 1.00 USD\n", encoding="utf-8")
    result = runner.invoke(args=["import", str(path), "--format", "beancount"])
    assert result.exit_code == 1
    assert "error: line 5: balance assertions are not supported" in result.output
    assert stored(app) == (0, 0)
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"\xe9t\xe9\n")
    result = runner.invoke(args=["import", str(latin), "--format", "csv"])
    assert result.exit_code == 1 and "is not UTF-8 text" in result.output


def test_two_imports_of_one_file_at_once_add_it_once(app):
    """Concurrent imports are serialised: the second sees the first and skips everything."""
    import threading

    results, errors = [], []
    start = threading.Barrier(2)

    def one_import():
        try:
            with app.app_context():
                store.write_intent.set(True)  # as the CLI command does
                start.wait(timeout=30)
                text = textwrap.dedent(HAND_WRITTEN_HLEDGER)
                results.append(importer.import_text(text, "hledger"))
                store.commit()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=one_import) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == [] and len(results) == 2
    assert sorted((r.added, r.duplicates) for r in results) == [(0, 3), (3, 0)]
    assert stored(app) == (3, 3)


@pytest.mark.parametrize(
    "cell, text",
    [
        ("'=1+1", "=1+1"),  # the export's mark before a formula character goes
        ("'+1", "+1"),
        ("'-2", "-2"),
        ("'@SUM(1)", "@SUM(1)"),
        ("''\tx", "'\tx"),
        ("''=already quoted", "'=already quoted"),
        ("'''-twice", "''-twice"),
        ("'tis fine", "'tis fine"),  # no formula character after the apostrophes: kept
        ("''", "''"),
        ("=hand written", "=hand written"),  # nothing to take away
        ("Plain", "Plain"),
    ],
)
def test_csv_import_takes_away_the_exports_formula_mark(app, make_user, cell, text):
    make_user("-bob@example.com")
    body = (
        CSV_HEAD
        + f",,,,{cell} fund,equity,\n"
        + f"1,2026-01-01,{cell},'-bob@example.com,{cell} cash,asset,-100\n"
        + f"1,2026-01-01,{cell},'-bob@example.com,Gifts,income,100\n"
    )
    result = run_import(app, body, "csv")
    assert (result.added, result.accounts_created) == (1, 3)
    books, listed = books_and_listing(app)
    assert books == {f"{text} fund": "equity", f"{text} cash": "asset", "Gifts": "income"}
    (tx,) = listed
    assert tx["description"] == text
    assert tx["created_by_email"] == "-bob@example.com"
    assert [(e["account_name"], e["amount_cents"]) for e in tx["entries"]] == [
        (f"{text} cash", -100),
        ("Gifts", 100),  # a negative amount is still read
    ]
