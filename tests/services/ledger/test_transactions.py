"""Transactions: recording, listing order and windows, deletion, and every refusal."""

import pytest


@pytest.fixture
def books(make_account):
    return {
        "bank": make_account("Bank", "asset"),
        "food": make_account("Food", "expense"),
        "salary": make_account("Salary", "income"),
    }


def count(api):
    return len(api.get("/transactions").get_json())


def test_record_and_read_back(api, post_tx, books):
    response = post_tx("2026-03-05", "  groceries  ", (books["food"], 1250), (books["bank"], -1250))
    assert response.status_code == 201
    tx_id = response.get_json()["id"]
    assert response.get_json() == {"id": tx_id}
    [tx] = api.get("/transactions").get_json()
    assert tx == {
        "id": tx_id,
        "occurred_on": "2026-03-05",
        "description": "groceries",
        "created_by_email": "alice@example.com",
        "entries": [
            {"account_id": books["food"], "account_name": "Food", "amount_cents": 1250},
            {"account_id": books["bank"], "account_name": "Bank", "amount_cents": -1250},
        ],
    }


def test_entries_keep_their_posting_order(api, post_tx, books):
    post_tx(
        "2026-01-01", "split", (books["bank"], -300), (books["food"], 100), (books["food"], 200)
    )
    [tx] = api.get("/transactions").get_json()
    assert [e["amount_cents"] for e in tx["entries"]] == [-300, 100, 200]


def test_listing_is_newest_first_then_highest_id(api, post_tx, books):
    ids = {}
    for label, day in [
        ("a", "2026-01-02"),
        ("b", "2026-01-01"),
        ("c", "2026-01-02"),
        ("d", "2026-01-03"),
    ]:
        ids[label] = post_tx(day, label, (books["food"], 1), (books["bank"], -1)).get_json()["id"]
    listed = [t["id"] for t in api.get("/transactions").get_json()]
    assert listed == [ids["d"], ids["c"], ids["a"], ids["b"]]


def test_window_bounds_are_inclusive(api, post_tx, books):
    for day in ["2026-01-31", "2026-02-01", "2026-02-28", "2026-03-01"]:
        post_tx(day, day, (books["food"], 1), (books["bank"], -1))

    def days(query):
        return [t["occurred_on"] for t in api.get("/transactions" + query).get_json()]

    assert days("?from=2026-02-01&to=2026-02-28") == ["2026-02-28", "2026-02-01"]
    assert days("?from=2026-02-28") == ["2026-03-01", "2026-02-28"]
    assert days("?to=2026-01-31") == ["2026-01-31"]
    assert days("?from=2026-02-01&to=2026-02-01") == ["2026-02-01"]


def test_window_with_to_before_from_is_refused(api):
    response = api.get("/transactions?from=2026-02-02&to=2026-02-01")
    assert response.status_code == 400
    assert response.get_json() == {"error": "'to' must not be before 'from'"}


@pytest.mark.parametrize("key", ["from", "to"])
@pytest.mark.parametrize(
    "value", ["2026-13-01", "2026-02-30", "yesterday", "2026/01/01", "20260101"]
)
def test_malformed_window_date_names_the_field(api, key, value):
    response = api.get(f"/transactions?{key}={value}")
    assert response.status_code == 400
    assert f"'{key}'" in response.get_json()["error"]
    assert "YYYY-MM-DD" in response.get_json()["error"]


def test_non_zero_sum_reports_count_and_sum(api, post_tx, books):
    response = post_tx(
        "2026-01-01", "oops", (books["food"], 1000), (books["bank"], -999), (books["bank"], 149)
    )
    assert response.status_code == 400
    message = response.get_json()["error"]
    assert "3 entries" in message and "150" in message
    assert count(api) == 0


@pytest.mark.parametrize("entries", [[], [(1, 0)], [(1, 100)]])
def test_fewer_than_two_entries_is_refused(api, post_tx, books, entries):
    entries = [(books["bank"], c) for _, c in entries]
    response = post_tx("2026-01-01", "lonely", *entries)
    assert response.status_code == 400
    assert "at least 2 entries" in response.get_json()["error"]
    assert count(api) == 0


def test_unknown_account_is_refused_in_our_words(api, post_tx, books):
    response = post_tx("2026-01-01", "ghost", (books["bank"], 5), (9999, -5))
    assert response.status_code == 400
    assert response.get_json() == {"error": "unknown account_id 9999"}
    assert count(api) == 0


@pytest.mark.parametrize("description", ["", "   ", None])
def test_blank_description_is_refused(api, post_tx, books, description):
    response = post_tx("2026-01-01", description, (books["food"], 1), (books["bank"], -1))
    assert response.status_code == 400
    assert "description is required" in response.get_json()["error"]
    assert count(api) == 0


def test_missing_date_is_refused(api, books):
    response = api.post(
        "/transactions",
        json={
            "description": "x",
            "entries": [
                {"account_id": books["food"], "amount_cents": 1},
                {"account_id": books["bank"], "amount_cents": -1},
            ],
        },
    )
    assert response.status_code == 400
    assert "occurred_on" in response.get_json()["error"]


@pytest.mark.parametrize("day", ["2026-02-30", "01/02/2026", "2026-1-2", 20260102, ""])
def test_malformed_date_names_the_field(api, post_tx, books, day):
    response = post_tx(day, "x", (books["food"], 1), (books["bank"], -1))
    assert response.status_code == 400
    assert "occurred_on" in response.get_json()["error"]
    assert count(api) == 0


@pytest.mark.parametrize("amount", [12.5, 12.0, True, False, "12", None, 2**63, -(2**63) - 1])
def test_amount_must_be_a_64_bit_integer(api, books, amount):
    response = api.post(
        "/transactions",
        json={
            "occurred_on": "2026-01-01",
            "description": "x",
            "entries": [
                {"account_id": books["food"], "amount_cents": amount},
                {"account_id": books["bank"], "amount_cents": -1},
            ],
        },
    )
    assert response.status_code == 400
    assert "entries[0].amount_cents" in response.get_json()["error"]
    assert count(api) == 0


def test_extreme_64_bit_amounts_are_stored_exactly(api, post_tx, books):
    big = 2**63 - 1
    assert (
        post_tx("2026-01-01", "huge", (books["food"], big), (books["bank"], -big)).status_code
        == 201
    )
    [tx] = api.get("/transactions").get_json()
    assert [e["amount_cents"] for e in tx["entries"]] == [big, -big]


@pytest.mark.parametrize("account_id", ["1", 1.0, True, None])
def test_account_id_must_be_an_integer(api, books, account_id):
    response = api.post(
        "/transactions",
        json={
            "occurred_on": "2026-01-01",
            "description": "x",
            "entries": [
                {"account_id": account_id, "amount_cents": 1},
                {"account_id": books["bank"], "amount_cents": -1},
            ],
        },
    )
    assert response.status_code == 400
    assert "entries[0].account_id" in response.get_json()["error"]


@pytest.mark.parametrize("entries", ["two", {"account_id": 1}, [1, 2], [{"amount_cents": 1}, {}]])
def test_malformed_entries_are_refused(api, entries):
    response = api.post(
        "/transactions",
        json={
            "occurred_on": "2026-01-01",
            "description": "x",
            "entries": entries,
        },
    )
    assert response.status_code == 400
    assert "entries" in response.get_json()["error"]


def test_delete_removes_the_transaction_and_its_entries(api, post_tx, books):
    keep = post_tx("2026-01-01", "keep", (books["food"], 1), (books["bank"], -1)).get_json()["id"]
    gone = post_tx("2026-01-02", "gone", (books["food"], 7), (books["bank"], -7)).get_json()["id"]
    response = api.delete(f"/transactions/{gone}")
    assert response.status_code == 204
    assert response.data == b""
    assert [t["id"] for t in api.get("/transactions").get_json()] == [keep]
    balances = {line["account"]: line["cents"] for line in api.get("/reports/balances").get_json()}
    assert balances["Food"] == 1


@pytest.mark.parametrize("tx_id", ["12345", "99999999999999999999999"])
def test_delete_unknown_is_404(api, tx_id):
    response = api.delete(f"/transactions/{tx_id}")
    assert response.status_code == 404
    assert response.get_json() == {"error": "no such transaction"}


def test_delete_twice_is_404_the_second_time(api, post_tx, books):
    tx = post_tx("2026-01-01", "x", (books["food"], 1), (books["bank"], -1)).get_json()["id"]
    assert api.delete(f"/transactions/{tx}").status_code == 204
    assert api.delete(f"/transactions/{tx}").get_json() == {"error": "no such transaction"}


def test_edit_is_create_then_delete(api, post_tx, books):
    original = post_tx(
        "2026-01-01", "typo", (books["food"], 100), (books["bank"], -100)
    ).get_json()["id"]
    replacement = post_tx(
        "2026-01-01", "fixed", (books["food"], 120), (books["bank"], -120)
    ).get_json()["id"]
    assert replacement != original
    assert api.delete(f"/transactions/{original}").status_code == 204
    [tx] = api.get("/transactions").get_json()
    assert tx["id"] == replacement and tx["description"] == "fixed"


def test_author_is_cleared_when_the_user_is_removed(
    app, api, post_tx, books, runner, make_user, mint
):
    make_user("bob@example.com")
    from tests.testkit import ApiClient

    bob = ApiClient(api.client, mint("bob@example.com"))
    bob.post(
        "/transactions",
        json={
            "occurred_on": "2026-01-01",
            "description": "bob's",
            "entries": [
                {"account_id": books["food"], "amount_cents": 5},
                {"account_id": books["bank"], "amount_cents": -5},
            ],
        },
    )
    assert api.get("/transactions").get_json()[0]["created_by_email"] == "bob@example.com"
    result = runner.invoke(args=["user", "rm", "bob@example.com"])
    assert result.exit_code == 0, result.output
    [tx] = api.get("/transactions").get_json()
    assert tx["created_by_email"] is None
    assert tx["description"] == "bob's" and len(tx["entries"]) == 2


def _listing_oracle(app):
    """The listing rebuilt the plain way (ORM-free, one SELECT per table), for comparison."""
    from sqlalchemy import select

    from app.extensions import db
    from app.models import Account, Entry, Transaction, User

    with app.app_context():
        names = dict(db.session.execute(select(Account.id, Account.name)).all())
        emails = dict(db.session.execute(select(User.id, User.email)).all())
        entries: dict[int, list] = {}
        for tx_id, account_id, cents in db.session.execute(
            select(Entry.transaction_id, Entry.account_id, Entry.amount_cents).order_by(Entry.id)
        ):
            entries.setdefault(tx_id, []).append(
                {"account_id": account_id, "account_name": names[account_id], "amount_cents": cents}
            )
        headers = db.session.execute(
            select(
                Transaction.id,
                Transaction.occurred_on,
                Transaction.description,
                Transaction.created_by,
            ).order_by(Transaction.occurred_on.desc(), Transaction.id.desc())
        ).all()
        db.session.rollback()
    return [
        {
            "id": i,
            "occurred_on": d.isoformat(),
            "description": text,
            "created_by_email": emails.get(by),
            "entries": entries[i],
        }
        for i, d, text, by in headers
    ]


def test_listing_of_runs_and_back_dated_postings_equals_the_plain_query(
    app, api, post_tx, books, monkeypatch
):
    """Long id runs are read as ranges, stragglers by id: the answer is the same."""
    from app.services.ledger import listing

    monkeypatch.setattr(listing, "MIN_RUN", 3)
    monkeypatch.setattr(listing, "MAX_RUNS", 2)
    for i in range(12):  # one long run in February
        post_tx(
            f"2026-02-{1 + i % 28:02d}",
            f"feb {i}",
            (books["food"], i + 1),
            (books["bank"], -(i + 1)),
        )
    post_tx("2026-01-05", "january", (books["salary"], -7), (books["bank"], 7))
    for i in range(5):  # back-dated into February, interleaved with other months
        post_tx(
            f"2026-02-{10 + i:02d}",
            f"late {i}",
            (books["bank"], -3),
            (books["food"], 1),
            (books["food"], 2),
        )
        post_tx("2026-03-01", f"march {i}", (books["food"], 5), (books["bank"], -5))
    oracle = _listing_oracle(app)
    assert api.get("/transactions").get_json() == oracle
    february = [t for t in oracle if t["occurred_on"].startswith("2026-02")]
    assert api.get("/transactions?from=2026-02-01&to=2026-02-28").get_json() == february
    with app.app_context():
        assert listing.list_transactions(None, None) == oracle


def test_listing_text_is_escaped_like_every_response(api, post_tx, books):
    tricky = 'quote " backslash \\ tab \t newline \n bell \x07 Café ☕ \u202e </script>'
    post_tx("2026-01-01", tricky, (books["food"], 1), (books["bank"], -1))
    response = api.get("/transactions")
    assert response.headers["Content-Type"] == "application/json"
    assert response.get_data().endswith(b"]\n")
    [tx] = response.get_json()
    assert tx["description"] == tricky.strip()


def test_empty_listing_is_an_empty_array(api):
    response = api.get("/transactions?from=2026-01-01&to=2026-01-31")
    assert response.status_code == 200
    assert response.get_json() == []


@pytest.mark.parametrize("ghost", [2**31, 2**62, -1])
def test_unknown_account_beyond_32_bits_is_refused_in_our_words(api, post_tx, books, ghost):
    response = post_tx("2026-01-01", "ghost", (books["bank"], 5), (ghost, -5))
    assert response.status_code == 400
    assert response.get_json() == {"error": f"unknown account_id {ghost}"}
    assert count(api) == 0


def test_posting_to_one_account_twice_is_stored(api, post_tx, books):
    """The same account in two entries: the existence check counts distinct accounts."""
    response = post_tx("2026-01-01", "self", (books["bank"], 5), (books["bank"], -5))
    assert response.status_code == 201
    [tx] = api.get("/transactions").get_json()
    assert [e["amount_cents"] for e in tx["entries"]] == [5, -5]


def test_posting_beyond_one_statement_is_stored_whole_and_in_order(api, post_tx, books):
    """More entries than one INSERT takes (services.transactions.ENTRY_CHUNK): the
    separate-statement path, chunked; every entry kept, in posting order."""
    from app.services.ledger.transactions import ENTRY_CHUNK

    n = ENTRY_CHUNK + 101
    entries = [(books["food"], i + 1) for i in range(n - 1)]
    entries.append((books["bank"], -sum(c for _, c in entries)))
    assert post_tx("2026-01-01", "huge", *entries).status_code == 201
    [tx] = api.get("/transactions").get_json()
    assert [e["amount_cents"] for e in tx["entries"]] == [c for _, c in entries]
    unknown = entries[:-2] + [(9999, entries[-2][1]), entries[-1]]
    response = post_tx("2026-01-02", "huge, one ghost", *unknown)
    assert response.get_json() == {"error": "unknown account_id 9999"}
    assert count(api) == 1
