"""Suggestions learnt from the whole books (docs/statements.md, "Suggestions"), on both
stores: after the rules, the newest two-entry transaction of the statement's account
posted or matched from a line of the same payee; else the two-entry transaction of
that account whose description shares the most words with the line's payee (ties: the
later date, then the higher id)."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from app.extensions import db
from app.services.banking import rules
from app.services.banking.rules import words
from tests.services.banking.stand_in import BOOKS, line, statement_file, upload_statement

pytestmark = pytest.mark.usefixtures("stand_in_reader")


@pytest.fixture
def book_accounts():
    """The shared books with two more expense accounts: Fuel and Power."""
    return {**BOOKS, "fuel": ("Fuel", "expense"), "power": ("Power", "expense")}


def history_of(api, account_id, *payees) -> list[int | None]:
    """The history suggestion's account of a new statement's lines of these payees."""
    sid = upload_statement(
        api,
        account_id,
        statement_file(*(line("2026-06-01", -(n + 1), payee) for n, payee in enumerate(payees))),
    ).get_json()["id"]
    lines = api.get(f"/statements/{sid}").get_json()["lines"]
    found = []
    for x in lines:
        suggestion = x["suggestion"]
        assert suggestion is None or (suggestion["source"], suggestion["rule_id"]) == (
            "history",
            None,
        )
        found.append(None if suggestion is None else suggestion["account_id"])
    api.delete(f"/statements/{sid}")
    return found


def spend(post_tx, books, day, description, account, cents=-500, source="bank"):
    made = post_tx(day, description, (books[source], cents), (books[account], -cents))
    assert made.status_code == 201, made.get_json()
    return made.get_json()["id"]


def test_words_are_runs_of_letters_and_digits_of_three_or_more_case_folded():
    assert words("SEPA-Lastschrift Stadtwerke_Köln GmbH, Kd.Nr 4711 / ab") == {
        "sepa",
        "lastschrift",
        "stadtwerke",
        "köln",
        "gmbh",
        "4711",
    }
    assert words("AB 12 x") == frozenset() and words(None) == frozenset()


def test_the_most_shared_words_then_the_later_date_then_the_higher_id(api, books, post_tx):
    spend(post_tx, books, "2026-02-01", "Berlin bakery", "food")
    spend(post_tx, books, "2026-01-10", "Stadtwerke Berlin electricity", "power")
    # Two words shared beat one, whatever the dates; letter case and punctuation aside.
    assert history_of(api, books["bank"], "STADTWERKE-BERLIN GMBH") == [books["power"]]
    # One word each: the later date wins, though recorded first (the lower id).
    spend(post_tx, books, "2026-01-20", "Berlin fuel station", "fuel")
    assert history_of(api, books["bank"], "Berlin") == [books["food"]]
    # The same date: the higher id.
    spend(post_tx, books, "2026-02-01", "Berlin car wash", "fuel")
    assert history_of(api, books["bank"], "berlin") == [books["fuel"]]
    # No word shared (a part of a word is no word; two letters are none): nothing.
    assert history_of(api, books["bank"], "Berl", "AB", "Hamburg") == [None, None, None]


def test_only_two_entry_transactions_of_the_account_to_an_open_account(api, books, post_tx):
    # Of another account (the card), a split, and one to an archived account: none teach.
    spend(post_tx, books, "2026-03-01", "Garage Meyer service", "fuel", source="card")
    split = post_tx(
        "2026-03-02",
        "Garage Meyer service",
        (books["bank"], -900),
        (books["fuel"], 400),
        (books["food"], 500),
    )
    assert split.status_code == 201
    spend(post_tx, books, "2026-03-03", "Garage Meyer service", "power")
    assert history_of(api, books["bank"], "Garage Meyer") == [books["power"]]
    assert api.put(f"/accounts/{books['power']}", json={"archived": True}).status_code == 200
    assert history_of(api, books["bank"], "Garage Meyer") == [None]
    spend(post_tx, books, "2020-01-01", "meyer", "food")  # old, one word: now the one
    assert history_of(api, books["bank"], "Garage Meyer") == [books["food"]]


def test_entries_twice_in_the_account_never_teach(api, books, post_tx):
    # The account's two-entry transactions are found from the account's entries, each
    # joined to its transaction's entries (rules._account_pairs; SQLite: each counts its
    # transaction's entries, rules._sqlite_account_rows): a transaction with two
    # entries in the account is no two-entry transaction of it with another account,
    # whether it has two entries (a move within the account) or three (two of them in
    # the account, one in Fuel), however new and however many words it shares.
    spend(post_tx, books, "2026-04-01", "Kiosk Lindner", "food")
    within = post_tx(
        "2026-04-05", "Kiosk Lindner Kiosk", (books["bank"], -700), (books["bank"], 700)
    )
    assert within.status_code == 201, within.get_json()
    assert history_of(api, books["bank"], "Kiosk Lindner") == [books["food"]]
    twice = post_tx(
        "2026-04-06",
        "Kiosk Lindner",
        (books["bank"], -300),
        (books["bank"], -200),
        (books["fuel"], 500),
    )
    assert twice.status_code == 201, twice.get_json()
    assert history_of(api, books["bank"], "Kiosk Lindner") == [books["food"]]
    # A later two-entry one with the account once: it teaches.
    spend(post_tx, books, "2026-04-07", "Kiosk Lindner", "fuel")
    assert history_of(api, books["bank"], "Kiosk Lindner") == [books["fuel"]]


def test_a_line_of_the_same_payee_posted_or_matched_comes_before_words(api, books, post_tx):
    # Words would say Food (the newest sharing both words)...
    spend(post_tx, books, "2026-04-01", "Corner shop groceries", "food")
    hand = spend(post_tx, books, "2026-02-01", "by hand", "fuel", cents=-777)
    old = upload_statement(
        api,
        books["bank"],
        statement_file(
            line("2026-02-01", -777, "Corner  SHOP"),  # matches the one recorded by hand
            line("2026-01-15", -300, "Petrol Station"),
        ),
    ).get_json()
    acted = api.post(
        f"/statements/{old['id']}/lines",
        json={
            "lines": [
                {"line_id": 1, "action": "match", "transaction_id": hand},
                {"line_id": 2, "action": "post", "account_id": books["power"]},
            ]
        },
    )
    assert acted.status_code == 200, acted.get_json()
    # ...but a matched line of the payee teaches its transaction's other account, and
    # a posted one its own, before any word counts; another account's lines teach none.
    assert history_of(api, books["bank"], "corner shop", "PETROL station") == [
        books["fuel"],
        books["power"],
    ]
    assert history_of(api, books["card"], "corner shop") == [None]
    # A rule still comes first.
    made = api.post(
        "/rules",
        json={
            "name": "Shop",
            "counter_account_id": books["dues"],
            "conditions": {"payee_contains": "corner"},
        },
    )
    assert made.status_code == 201
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-06-01", -1, "Corner Shop"))
    ).get_json()["id"]
    assert api.get(f"/statements/{sid}").get_json()["lines"][0]["suggestion"] == {
        "account_id": books["dues"],
        "source": "rule",
        "rule_id": made.get_json()["id"],
    }


# Descriptions whose words are easy to get wrong when narrowing in SQL: case, letters
# that case-fold to ASCII (ß, ſ, the Kelvin sign, ligatures, a combining accent, İ),
# underscores and punctuation as separators, digits inside words, words at the very
# start or end, full-width digits, and words of other scripts.
TRICKY_DESCRIPTIONS = [
    "Straße Müller",
    "STRASSE 12 müller",
    "\ufb01le transfer",  # ﬁ ligature: "file"
    "file_transfer",
    "İstanbul kebab",  # casefold: "i̇stanbul": words "i", "stanbul"
    "\u017ftar lane",  # long s: "star"
    "\u212aELVIN scale",  # Kelvin sign: "kelvin"
    "cafe\u0301 corner",  # combining accent: word "cafe"
    "naïve art",
    "payee,123.",
    "x-payee-y",
    "abc123 payee2",
    "_123_",
    "123",
    "PaYeE 300",
    "\uff11\uff12\uff13 full",  # full-width digits
    "\ufb03x \ufb00",  # ﬃx, ﬀ
    "ΣΑΣ tavern",
    "pizza\U0001f355\U0001f355",
    "tab\tseparated\nwords",
    "Ⅻ numerals",
    "ßß",
    "synthetic 792364",
    "CAFE",
    "long" * 500,  # one word of 2,000 characters (the longest description): indexed
]
TRICKY_PAYEES = [
    "strasse",
    "Müller",
    "FILE",
    "transfer",
    "stanbul",
    "Star",
    "kelvin",
    "Payee 123",
    "123",
    "cafe",
    "naïve",
    "ssss",
    "ffix",
    "pizza",
    "separated",
    "300",
    "payee2",
    "abc123",
    "zzz nothing here",
    "ⅻ",
    "\uff11\uff12\uff13",
    "σας",
    "923",
    "792364",
    "Words",
]


@pytest.mark.parametrize("index_max", [rules.WORDED_MAX, 0])
def test_word_suggestions_equal_a_plain_reading_of_every_transaction(
    api, books, post_tx, monkeypatch, index_max
):
    """The word fallback narrows the account's transactions by an index of words
    before matching their words exactly (rules.described: PostgreSQL's GIN index,
    SQLite's FTS5 table transaction_words, the newest postings above its mark among
    them): it must answer
    as reading every two-entry transaction of the account and comparing words would,
    on descriptions whose words only Python's case folding finds (ß, ſ, ligatures, the
    Kelvin sign, İ, a combining accent) and on separators, digits and word edges; and
    so must the whole account's read it falls back to when the index finds more than
    WORDED_MAX transactions (index_max 0: always)."""
    monkeypatch.setattr(rules, "WORDED_MAX", index_max)
    counters = ["food", "fuel", "power", "dues"]
    made = []  # (occurred_on, id, description, counter account)
    for n, description in enumerate(TRICKY_DESCRIPTIONS * 2):
        day = f"2026-0{1 + n % 5}-{10 + n % 7:02d}"  # ties of date, broken by id
        counter = books[counters[n % len(counters)]]
        made.append(
            (day, spend(post_tx, books, day, description, counters[n % 4]), description, counter)
        )
    # Not the statement account's: never a suggestion, however many words it shares.
    spend(post_tx, books, "2026-06-30", " ".join(TRICKY_PAYEES), "food", source="card")
    expected = []
    for payee in TRICKY_PAYEES:
        said = words(payee)
        best = max(
            (
                (len(words(d) & said), day, tx, counter)
                for day, tx, d, counter in made
                if words(d) & said
            ),
            default=None,
        )
        expected.append(None if best is None else best[3])
    assert history_of(api, books["bank"], *TRICKY_PAYEES) == expected
    # The cases above that only Python's folding finds did find their transaction.
    found = dict(zip(TRICKY_PAYEES, expected, strict=True))
    assert all(
        found[p] is not None for p in ("strasse", "FILE", "stanbul", "Star", "kelvin", "cafe")
    )
    assert found["zzz nothing here"] is None


def test_the_newest_postings_are_found_by_their_words_before_and_after_their_batch(
    app, api, books, post_tx, dialect
):
    """SQLite indexes the descriptions' words 16 postings at a time (migrations 0017,
    0026): a posting not yet indexed (above search_indexed.upto) is found by its words
    all the same, and still once its batch has indexed it."""
    counters = ["food", "fuel", "power", "dues"]
    waited = 0
    for n in range(17):
        counter = counters[n % len(counters)]
        made = spend(post_tx, books, "2026-05-01", f"Quokka{n} hut", counter)
        if dialect == "sqlite":
            with app.app_context():
                upto = db.session.execute(text("SELECT upto FROM search_indexed")).scalar()
                waited += made > upto
                db.session.remove()
        assert history_of(api, books["bank"], f"quokka{n}") == [books[counter]]
    assert dialect != "sqlite" or waited >= 15  # most were found from the tail
