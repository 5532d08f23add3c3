"""The listing's q on the description index (migration 0010_description_search): rare
and common words, case folding beyond ASCII, % and _ literal, short q, paging with
writes between pages, and the index after import and restore. Every test runs on
SQLite and PostgreSQL.

The answers are compared with an oracle: the whole unpaged listing filtered in Python
(q.lower() in description.lower()), the documented meaning of q. Each listing runs
twice: with the default walk (the small books fit in it) and with a walk of 1
transaction, so that the index path (search.py) answers every page.
"""

from __future__ import annotations

import textwrap

import pytest
from sqlalchemy import text

from app import create_app
from app.extensions import db
from app.services.ledger import listing, search
from app.services.ledger.validate import ListingQuery
from tests.support import throwaway_database
from tests.testkit import migrate

DESCRIPTIONS = [
    "Äpfel vom Markt",
    "STRASSE fee",
    "coffee",
    "100% rebate_cash",
    "rebate cash",
    "ΟΔΟΣ tax",  # Greek: a final sigma after lowering
    "ᎠᎡᎢ Cherokee",  # letters FTS5 folds unlike str.lower
    "İstanbul trip",  # U+0130: lowers to two characters
    "Kelvin \u212a meter",  # the Kelvin sign lowers to ASCII k
    'say "quoted" words',
]
QUERIES = [
    "ÄPFEL",
    "äpfel vom",
    "strasse",
    "coffee",
    "fee",
    "%",
    "100%",
    "_",
    "e_c",
    "rebate_cash",
    "rebate cash",
    "οδος",
    "ΟΔΟΣ",
    "ᏹᏺ",
    "ꭰꭱꭲ",
    "ᎠᎡᎢ",
    "i̇stanbul",
    "istanbul",
    "stanbul",
    "k meter",
    "n k m",
    '"quoted"',
    'y "q',
    "ee",
    "#7",
    "cash #1",
    "nothing matches this",
    "e",
]


@pytest.fixture(params=["walk", "index"])
def walk(request, monkeypatch):
    if request.param == "index":
        monkeypatch.setattr(listing, "WALK_ROWS", 1)
    return request.param


@pytest.fixture
def searchable(make_account, post_tx):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    ids = []
    for i in range(40):
        day = f"2026-03-{1 + i // 4:02d}"
        r = post_tx(
            day, f"{DESCRIPTIONS[i % len(DESCRIPTIONS)]} #{i}", (food, 10 + i), (bank, -10 - i)
        )
        assert r.status_code == 201, r.get_json()
        ids.append(r.get_json()["id"])
    return {"bank": bank, "food": food, "ids": ids}


def oracle(api, q: str, extra: str = "") -> list[int]:
    whole = api.get("/transactions" + (f"?{extra[1:]}" if extra else "")).get_json()
    return [t["id"] for t in whole if q.lower() in t["description"].lower()]


def paged_ids(api, q: str, limit: int, extra: str = "") -> list[int]:
    from urllib.parse import quote

    seen, cursor = [], None
    while True:
        url = f"/transactions?limit={limit}&q={quote(q)}{extra}"
        r = api.get(url + (f"&cursor={cursor}" if cursor else ""))
        assert r.status_code == 200, r.get_json()
        body = r.get_json()
        seen.extend(t["id"] for t in body["items"])
        cursor = body["next_cursor"]
        if cursor is None:
            return seen


# Where PostgreSQL's lower() (the database's locale) and Python's str.lower agree; for
# the rest (Greek final sigma, U+0130, letters newer than the locale) each store's own
# fold is q's meaning, and the index path must equal the exact walk.
PORTABLE = {"ÄPFEL", "äpfel vom", "strasse", "coffee", "fee", "%", "100%", "_", "e_c"}
PORTABLE |= {"rebate_cash", "rebate cash", "k meter", '"quoted"', 'y "q', "ee", "#7", "e"}
PORTABLE |= {"cash #1", "nothing matches this"}


@pytest.mark.parametrize("q", QUERIES)
def test_q_pages_on_the_index_equal_the_exact_walk(api, searchable, monkeypatch, dialect, q):
    exact = paged_ids(api, q, 500)  # the 40 transactions fit in the walk
    if q in PORTABLE or dialect == "sqlite":
        assert exact == oracle(api, q)
    monkeypatch.setattr(listing, "WALK_ROWS", 1)
    assert paged_ids(api, q, 3) == exact
    assert paged_ids(api, q, 500) == exact


def test_the_queries_cover_rare_common_and_empty_answers(api, searchable):
    counts = {q: len(oracle(api, q)) for q in QUERIES}
    assert counts["coffee"] == 4 and counts["fee"] == 8 and counts["e"] > 20
    assert counts["nothing matches this"] == 0
    assert counts["ÄPFEL"] == 4 and counts["οδος"] == 4 and counts["ꭰꭱꭲ"] == 4
    assert counts["%"] == 4 and counts["_"] == 4 and counts["e_c"] == 4
    assert counts["i̇stanbul"] == 4 and counts["istanbul"] == 0 and counts["k meter"] == 4
    assert counts["#7"] == 1 and counts['"quoted"'] == 4


def test_q_combines_with_the_other_filters_on_the_index_path(api, searchable, walk):
    extra = f"&account_id={searchable['food']}&min_cents=20&max_cents=45&from=2026-03-03"
    for q in ("fee", "rebate", "ÄPFEL", "#3"):
        expected = oracle(api, q, extra)
        assert paged_ids(api, q, 2, extra) == expected
    assert paged_ids(api, "fee", 2, extra)  # not vacuous


def test_rare_q_paging_with_posts_and_deletes_between_pages(api, searchable, post_tx, monkeypatch):
    monkeypatch.setattr(listing, "WALK_ROWS", 1)
    first = api.get("/transactions?limit=2&q=STRASSE").get_json()
    seen = [t["id"] for t in first["items"]]
    bank, food = searchable["bank"], searchable["food"]
    post_tx("2026-04-01", "strasse newest", (food, 1), (bank, -1))
    inside = post_tx("2026-03-02", "Strasse back-dated", (food, 2), (bank, -2)).get_json()["id"]
    unread = [i for i in oracle(api, "strasse") if i not in seen and i != inside][
        -1
    ]  # the oldest match: not read yet
    assert api.delete(f"/transactions/{unread}").status_code == 204
    assert api.delete(f"/transactions/{seen[0]}").status_code == 204
    cursor = first["next_cursor"]
    while cursor:
        body = api.get(f"/transactions?limit=2&q=STRASSE&cursor={cursor}").get_json()
        seen.extend(t["id"] for t in body["items"])
        cursor = body["next_cursor"]
    assert len(seen) == len(set(seen))
    expected_rest = [i for i in oracle(api, "strasse") if i < seen[1] or i == inside]
    assert sorted(seen[2:]) == sorted(set(expected_rest) - set(seen[:2]))
    assert inside in seen and unread not in seen


def test_mcp_list_transactions_uses_the_same_search(api, rpc, searchable, monkeypatch):
    monkeypatch.setattr(listing, "WALK_ROWS", 1)
    body = rpc.result("list_transactions", {"q": "STRASSE", "limit": 3})
    assert [t["id"] for t in body["items"]] == oracle(api, "strasse")[:3]
    assert body["next_cursor"] is not None


def test_every_cased_character_lies_below_the_probed_range():
    for code in range(search.CASED_BELOW, 0x110000):
        ch = chr(code)
        assert ch.lower() == ch and ("a" + ch).lower()[1:] == ch, hex(code)


def test_unsafe_characters_are_kept_out_of_sqlite_runs():
    unsafe = search._unsafe_characters()
    assert "ꭰ" in unsafe and "\u0307" in unsafe  # Cherokee small letter; İ's dot
    assert not {"a", "s", "k", "ä", "σ", "ς", "4", " ", "%", "_", '"'} & unsafe
    assert search.safe_runs("ꭰꭱꭲ") == []
    assert search.safe_runs("abcꭰde fgh") == ["abc", "de fgh"]
    assert search.safe_runs("ab") == []


def test_postgresql_fragment_is_the_rarest_word():
    sample = ["synthetic 1", "synthetic 2", "synthetic 30"]
    assert search.rarest_word("synthetic 4242", sample) == "4242"
    assert search.rarest_word("synthetic 77", sample) is None  # only a common word
    assert search.rarest_word("ab 12", sample) is None
    assert search.like_pattern("50%_a\\b") == "%50\\%\\_a\\\\b%"


def _sqlite_index_agrees(dialect) -> None:
    """SQLite: the FTS5 tables equal their content (FTS5's own integrity check) once the
    unindexed tail is in them (as check does; rolled back after: the tail stays a tail)."""
    if dialect != "sqlite":
        names = db.session.execute(
            text("SELECT indexname FROM pg_indexes WHERE tablename = 'transactions'")
        ).scalars()
        assert "ix_transactions_description_trgm" in set(names)
        return
    savepoint = db.session.begin_nested()
    search.index_tail(db.session.connection())
    # Both FTS5 tables kept under the mark: the trigrams, and the words (migration 0026).
    for table in ("transaction_search", "transaction_words"):
        db.session.execute(
            text(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
        )
    savepoint.rollback()


def _mark(dialect) -> int | None:
    """SQLite: search_indexed.upto (migration 0017); PostgreSQL has none."""
    if dialect != "sqlite":
        return None
    return db.session.execute(text("SELECT upto FROM search_indexed")).scalar_one()


def _sqlite_indexed_ids() -> set[int]:
    """The rowids the FTS5 index holds for any trigram of 'zqx' (the tests' rare word)."""
    found = db.session.execute(
        text("SELECT rowid FROM transaction_search WHERE transaction_search MATCH '\"zqx\"'")
    )
    return set(found.scalars())


def test_the_newest_postings_are_found_before_their_batch(app, api, make_account, post_tx, dialect):
    """The newest (up to 15) postings are not in SQLite's index yet (migration 0017):
    q finds them all the same, beside ones indexed long ago; deleting or editing a row
    of either kind keeps the answer exact."""
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")

    def post(description: str) -> int:
        r = post_tx("2026-03-01", description, (food, 5), (bank, -5))
        assert r.status_code == 201, r.get_json()
        return r.get_json()["id"]

    old = [post(f"zqx old {i}") for i in range(3)]
    fillers = [post(f"filler {i}") for i in range(13)]  # the 16th posting: a batch
    new = [post(f"ZQX new {i}") for i in range(3)]
    with app.app_context():
        if dialect == "sqlite":
            assert _mark(dialect) == fillers[-1]  # the first 16 indexed, the 3 new not
            assert _sqlite_indexed_ids() == set(old)
        db.session.remove()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(listing, "WALK_ROWS", 1)
        assert sorted(paged_ids(api, "zqx", 2)) == sorted(old + new)
        assert api.delete(f"/transactions/{old[0]}").status_code == 204
        assert api.delete(f"/transactions/{new[0]}").status_code == 204
        with app.app_context():  # descriptions edited in SQL (no route edits one)
            for tx_id, description in ((old[1], "renamed"), (new[1], "renamed too")):
                db.session.execute(
                    text("UPDATE transactions SET description = :d WHERE id = :id"),
                    {"d": description, "id": tx_id},
                )
            db.session.execute(
                text("UPDATE transactions SET description = 'zqx now' WHERE id = :id"),
                {"id": fillers[0]},
            )
            db.session.commit()
            _sqlite_index_agrees(dialect)
            db.session.remove()
        expected = [old[2], new[2], fillers[0]]
        assert sorted(paged_ids(api, "zqx", 2)) == sorted(expected)
        assert sorted(paged_ids(api, "zqx", 2)) == sorted(oracle(api, "zqx"))
        assert sorted(paged_ids(api, "renamed", 1)) == sorted([old[1], new[1]])


def test_the_mark_advances_every_16th_insert_and_the_index_stays_exact(
    app, api, make_account, post_tx, dialect
):
    """SQLite: postings, deletions and corrections (replaces: a posting and a deletion
    in one unit); after each, the mark is the newest multiple of 16 (ids run from 1
    after the reset) and FTS5's integrity check passes, the tail included."""
    if dialect != "sqlite":
        pytest.skip("the batches are SQLite's (migration 0017); PostgreSQL's index is GIN")
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    posted: list[int] = []
    for i in range(40):
        payload = {
            "occurred_on": "2026-03-01",
            "description": f"zqx mix {i}",
            "entries": [
                {"account_id": food, "amount_cents": 7 + i},
                {"account_id": bank, "amount_cents": -7 - i},
            ],
        }
        if i % 5 == 4:
            payload["replaces"] = posted.pop(len(posted) // 2)
        response = api.post("/transactions", json=payload)
        assert response.status_code == 201, response.get_json()
        posted.append(response.get_json()["id"])
        if i % 7 == 6:
            assert api.delete(f"/transactions/{posted.pop(0)}").status_code == 204
        with app.app_context():
            newest = db.session.execute(text("SELECT max(id) FROM transactions")).scalar_one()
            assert _mark(dialect) == max(posted) // 16 * 16 == newest // 16 * 16
            _sqlite_index_agrees(dialect)
            assert _sqlite_indexed_ids() == {t for t in posted if t <= _mark(dialect)}
            db.session.remove()
    with app.app_context():  # an explicit id in a gap below the mark (as a restore's)
        upto = _mark(dialect)
        existing = set(db.session.execute(text("SELECT id FROM transactions")).scalars())
        gap = min(set(range(1, upto)) - existing)
        db.session.execute(
            text(
                "INSERT INTO transactions (id, occurred_on, description, created_at)"
                " VALUES (:id, '2026-03-02', 'zqx mix restored', '2026-03-02 00:00:00');"
            ),
            {"id": gap},
        )
        db.session.execute(
            text(
                "INSERT INTO entries (transaction_id, account_id, amount_cents)"
                " VALUES (:id, :food, 3), (:id, :bank, -3)"
            ),
            {"id": gap, "food": food, "bank": bank},
        )
        db.session.commit()
        assert _mark(dialect) == upto and gap in _sqlite_indexed_ids()
        _sqlite_index_agrees(dialect)
        db.session.remove()
    posted.append(gap)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(listing, "WALK_ROWS", 1)
        assert sorted(paged_ids(api, "zqx mix", 4)) == sorted(posted)


def test_sqlite_narrows_by_rowid_not_by_a_scan(app, api, searchable, dialect):
    """The index's matches and the tail (id > upto) are one IN list: SQLite looks the
    transactions up by rowid and the tail by a rowid range (EXPLAIN QUERY PLAN)."""
    if dialect != "sqlite":
        pytest.skip("the plan of SQLite's FTS5 narrowing")
    from sqlalchemy import select

    from app.models import Transaction

    with app.app_context():
        condition = search.sqlite_condition(db.session.connection(), "zqx")
        statement = (
            select(Transaction.id)
            .where(condition)
            .order_by(Transaction.occurred_on.desc(), Transaction.id.desc())
            .limit(6)
        )
        sql = str(statement.compile(db.engine, compile_kwargs={"literal_binds": True}))
        plan = [row[3] for row in db.session.execute(text("EXPLAIN QUERY PLAN " + sql))]
        db.session.remove()
    assert "SEARCH transactions USING INTEGER PRIMARY KEY (rowid=?)" in plan, plan
    assert "SEARCH transactions USING INTEGER PRIMARY KEY (rowid>?)" in plan, plan
    assert not [step for step in plan if step.startswith("SCAN transactions")], plan


def test_the_index_follows_posts_deletes_and_edits(app, api, searchable, dialect):
    assert api.delete(f"/transactions/{searchable['ids'][3]}").status_code == 204
    with app.app_context():
        _sqlite_index_agrees(dialect)
        # A description edited in SQL (the API never does): the index follows.
        db.session.execute(
            text("UPDATE transactions SET description = 'renamed zqx' WHERE id = :id"),
            {"id": searchable["ids"][0]},
        )
        db.session.commit()
        _sqlite_index_agrees(dialect)
        db.session.remove()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(listing, "WALK_ROWS", 1)
        found = api.get("/transactions?limit=5&q=ZQX").get_json()["items"]
        assert [t["id"] for t in found] == [searchable["ids"][0]]
        assert paged_ids(api, "äpfel", 5) == oracle(api, "äpfel")
        assert searchable["ids"][0] not in oracle(api, "äpfel")


JOURNAL = """
    2026-01-05 Groceries Ünïcode weekly
        expenses:food               $12.34
        assets:bank:checking
    2026-01-06 Coffee 100%_off
      expenses:food  $3
      assets:bank:checking
"""


def test_search_after_import(app, api, runner, tmp_path, dialect, walk):
    path = tmp_path / "books.journal"
    path.write_text(textwrap.dedent(JOURNAL), encoding="utf-8")
    result = runner.invoke(args=["import", str(path), "--format", "hledger"])
    assert result.exit_code == 0, result.output
    for q in ("ÜNÏCODE", "100%_", "ocerie"):
        found = api.get(f"/transactions?limit=5&q={q.replace('%', '%25')}").get_json()["items"]
        assert len(found) == 1 and q.lower() in found[0]["description"].lower()
    with app.app_context():
        _sqlite_index_agrees(dialect)
        db.session.remove()


@pytest.mark.slow  # a property run / a backup restored across stores (README)
@pytest.mark.parametrize("target", ["sqlite", "postgresql"])
def test_search_after_restore(app, api, runner, searchable, clock, tmp_path, target, monkeypatch):
    path = tmp_path / "ledger.backup.gz"
    assert runner.invoke(args=["backup", str(path)]).exit_code == 0
    with throwaway_database(target, tmp_path, "ledger_search_") as url:
        restored = create_app(
            {"TESTING": True, "DATABASE_URL": url, "CLOCK": clock, "PASSWORD_HASH_FAST": True}
        )
        result = restored.test_cli_runner().invoke(args=["restore", str(path)])
        assert result.exit_code == 0, result.output
        monkeypatch.setattr(listing, "WALK_ROWS", 1)
        with restored.app_context():
            for q in ("ÄPFEL", "rebate_cash", "#17", "fee"):
                page = listing.page(ListingQuery(q=q, limit=500))
                assert [t["id"] for t in page.data()["items"]] == oracle(api, q)
            _sqlite_index_agrees(target)
            db.session.remove()
            db.engine.dispose()


def test_without_the_index_q_answers_the_same(
    app, api, searchable, dialect, database_url, monkeypatch
):
    """As after a migration that found no pg_trgm / no FTS5 trigram tokenizer: the
    index path has nothing to ask and the walk answers, exactly."""
    expected = {q: paged_ids(api, q, 500) for q in ("fee", "ÄPFEL", "rebate_cash")}
    with app.app_context():
        if dialect == "sqlite":
            for name in ("insert", "delete", "update"):
                db.session.execute(text(f"DROP TRIGGER trg_transaction_search_{name}"))
            db.session.execute(text("DROP TABLE transaction_search"))
            db.session.execute(text("DROP TABLE search_indexed"))
            # 0026's words table comes only with the mark (a SQLite without trigrams).
            db.session.execute(text("DROP TABLE transaction_words"))
            db.session.execute(text("DROP VIEW transaction_words_source"))
        else:
            db.session.execute(text("DROP INDEX ix_transactions_description_trgm"))
        db.session.commit()
        db.session.remove()
    try:
        monkeypatch.setattr(listing, "WALK_ROWS", 1)
        for q, ids in expected.items():
            assert paged_ids(api, q, 2) == ids and ids
        assert api.delete(f"/transactions/{searchable['ids'][1]}").status_code == 204
    finally:  # the shared test database gets its index back: 0010's upgrade again
        version = text("SELECT version_num FROM alembic_version")
        with app.app_context():
            newest = db.session.execute(version).scalar_one()
            db.session.execute(
                text("UPDATE alembic_version SET version_num = '0009_books_at_scale'")
            )
            db.session.commit()
            db.session.remove()
        migrate(database_url, "0010_description_search")
        with app.app_context():  # 0017's batched triggers and mark over 0010's
            db.session.execute(
                text("UPDATE alembic_version SET version_num = '0016_audit_seal_sets'")
            )
            db.session.commit()
            db.session.remove()
        migrate(database_url, "0017_search_batches")
        with app.app_context():  # 0026's words table and triggers over 0017's
            db.session.execute(
                text("UPDATE alembic_version SET version_num = '0025_description_words'")
            )
            db.session.commit()
            db.session.remove()
        migrate(database_url, "0026_sqlite_description_words")
        with app.app_context():  # the later migrations' changes are still in place
            db.session.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": newest})
            db.session.commit()
            db.session.remove()
