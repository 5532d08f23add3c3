"""Round trip, property-based, on both stores: a random ledger exported in each format
and imported into an emptied database gives identical reports and transactions; a
second import adds nothing."""

from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app import store
from app.services.identity import users
from app.services.interchange import export, importer
from app.services.ledger import accounts, listing, reports, transactions
from tests.support import PASSWORD
from tests.testkit import reset_database

KINDS = ("asset", "liability", "equity", "income", "expense")
# Any character the API accepts (it refuses only NUL; surrogates cannot be UTF-8).
chars = st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\x00")
account_names = st.text(chars, min_size=1, max_size=12).map(str.strip).filter(bool)
descriptions = st.text(chars, min_size=1, max_size=30).map(str.strip).filter(bool)


@st.composite
def ledgers(draw):
    names = draw(st.lists(account_names, min_size=2, max_size=6, unique=True))
    books = [(name, draw(st.sampled_from(KINDS))) for name in names]
    postings = []
    for _ in range(draw(st.integers(0, 7))):
        size = draw(st.integers(2, 4))
        amounts = [draw(st.integers(-(10**13), 10**13)) for _ in range(size - 1)]
        amounts.append(-sum(amounts))
        postings.append(
            (
                draw(st.dates(date(2020, 1, 1), date(2030, 12, 31))),
                draw(descriptions),
                [(draw(st.integers(0, len(books) - 1)), a) for a in amounts],
                draw(st.booleans()),
            )
        )
    if postings and draw(st.booleans()):
        postings.append(postings[0])  # an identical twin must survive the first import
    return books, postings


def snapshot() -> dict:
    listed = listing.list_transactions(None, None)
    return {
        "accounts": sorted((a["name"], a["kind"]) for a in accounts.list_accounts()),
        "balances": reports.balances(None, None),
        "window": reports.income_statement(date(2023, 1, 1), date(2027, 12, 31)),
        "income": reports.income_statement(None, None),
        "sheet": reports.balance_sheet(date(2031, 1, 1)),
        "transactions": sorted(
            (
                t["occurred_on"],
                t["description"],
                t["created_by_email"] or "",
                tuple((e["account_name"], e["amount_cents"]) for e in t["entries"]),
            )
            for t in listed
        ),
    }


def fresh_books() -> int:
    store.rollback()  # end the session's transaction before emptying through another connection
    reset_database()
    user = users.add_user("alice@example.com", PASSWORD)
    store.commit()
    return user.id


@pytest.mark.slow  # a property run / a backup restored across stores (README)
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ledger=ledgers())
def test_export_then_import_reproduces_the_books(app, ledger):
    books, postings = ledger
    with app.app_context():
        alice = fresh_books()
        ids = [accounts.create_account(name, kind)["id"] for name, kind in books]
        for day, description, entries, by_alice in postings:
            transactions.record_transaction(
                day.isoformat(),
                description,
                [{"account_id": ids[i], "amount_cents": cents} for i, cents in entries],
                created_by=alice if by_alice else None,
            )
        store.commit()
        before = snapshot()
        files = {fmt: "".join(export.generate(fmt, None, None)) for fmt in export.FORMATS}
        store.rollback()

        for fmt, text in files.items():
            fresh_books()
            first = importer.import_text(text, fmt)
            store.commit()
            assert (first.added, first.duplicates) == (len(postings), 0), fmt
            assert snapshot() == before, fmt
            second = importer.import_text(text, fmt)
            store.commit()
            assert (second.added, second.duplicates, second.accounts_created) == (
                0,
                len(postings),
                0,
            ), fmt
            assert snapshot() == before, fmt


# Text a spreadsheet would run as a formula, text already starting with apostrophes, and
# plain text: the CSV export marks the first with a leading ' and the import removes it.
TRICKY_TEXT = [
    '=HYPERLINK("http://evil.example","click")',
    "+1+1",
    "-2+3",
    "@SUM(1,2)",
    "'\tcmd",
    "'\rcmd",
    "'=already quoted",
    "''-twice",
    "'tis fine",
    "''",
    "'",
    "Plain coffee",
    "a=b",
]


def test_csv_round_trip_keeps_text_that_looks_like_a_formula(app):
    with app.app_context():
        alice = fresh_books()
        mallory = users.add_user("=mallory@example.com", PASSWORD).id
        names = ["=Bank", "+Cash", "-Loan", "@Home", "'tis", "'=quoted", "Plain"]
        ids = [accounts.create_account(name, "asset")["id"] for name in names]
        accounts.create_account("-Unused", "equity")
        for n, description in enumerate(TRICKY_TEXT):
            transactions.record_transaction(
                f"2026-05-{n + 1:02d}",
                description,
                [
                    {"account_id": ids[n % len(ids)], "amount_cents": -(n + 1) * 101},
                    {"account_id": ids[(n + 1) % len(ids)], "amount_cents": (n + 1) * 101},
                ],
                created_by=mallory if n % 2 else alice,
            )
        store.commit()
        before = snapshot()
        assert sorted(t[1] for t in before["transactions"]) == sorted(TRICKY_TEXT)
        text = "".join(export.generate("csv", None, None))
        assert "'=Bank" in text and "'-Unused" in text and "'=mallory@example.com" in text
        store.rollback()

        fresh_books()
        users.add_user("=mallory@example.com", PASSWORD)
        store.commit()
        first = importer.import_text(text, "csv")
        store.commit()
        assert (first.added, first.duplicates) == (len(TRICKY_TEXT), 0)
        after = snapshot()
        assert after == before
        assert sorted(t[1] for t in after["transactions"]) == sorted(TRICKY_TEXT)
        # Exported again, the file is the same (ids aside, which the import does not keep).
        again = "".join(export.generate("csv", None, None))
        assert [line.split(",", 1)[1] for line in again.splitlines()[1:]] == [
            line.split(",", 1)[1] for line in text.splitlines()[1:]
        ]
