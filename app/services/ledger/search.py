"""The description index behind the listing's q filter (migration 0010_description_search).

q is a case-insensitive substring of the description: the rows' descriptions folded by
Python's str.lower (SQLite: ledger_lower) or PostgreSQL's lower() must contain q.lower().
That exact condition is always applied (listing._conditions). This module only
narrows the rows it is applied to, for a q that the ordered walk finds rarely:

- PostgreSQL: `lower(description) LIKE '%<fragment>%'`, which the GIN trigram index
  (pg_trgm) answers by a bitmap scan. The fragment is one word of q (a run of letters and
  digits, at least 3 long: pg_trgm indexes the trigrams of words), the one that occurs
  least among the newest descriptions (a sample the caller reads): a word that every
  description contains ("synthetic 4242" -> "4242") would make the index read a posting
  list as long as the ledger. Without pg_trgm (the migration then skips the index) the
  condition is still correct, just not indexed.
- SQLite: the rowids that the FTS5 trigram table transaction_search matches for the
  runs of q (at least 3 characters) made only of characters whose case the tokenizer
  folds as Python does. FTS5 folds by its own Unicode table, which differs from
  str.lower for some letters (e.g. Cherokee, U+0130 which lowers to two characters):
  a run containing such a character, or its lowercase, could miss a row that matches
  exactly, so it is left out. Each run is a phrase; all must match (a superset of the
  exact answer, since every run is a substring of q.lower()). The newest transactions
  are not in the table yet (migration 0017_search_batches: the trigger indexes them 16
  at a time): every id above search_indexed.upto is a candidate too, a rowid range
  which the exact condition then reads: at most 15 rows as postings come in (more
  for a while only after explicit ids skipped a multiple of 16, e.g. a restore of
  books with deletions, until the next one is inserted).

A q with no usable fragment or run (e.g. "77": under 3 characters) gets no narrowing:
the listing's ordered walk, exact and cheap for common words, as before.
"""

from __future__ import annotations

import functools
import sqlite3

from sqlalchemy import Integer, column, func, text

from ...models import Transaction

FTS_TABLE = "transaction_search"
# The mark (migration 0017_search_batches): every transaction with id <= upto is in
# FTS_TABLE, none above it.
MARK_TABLE = "search_indexed"
UPTO = f"(SELECT upto FROM {MARK_TABLE} WHERE id = 1)"
# The tail (the transactions above the mark) into the index: check runs it before
# FTS5's integrity check (derived.search_index_differences). Then MARK_ALL.
INDEX_TAIL = (
    f"INSERT INTO {FTS_TABLE} (rowid, description)"
    f" SELECT id, description FROM transactions WHERE id > {UPTO}"
)
# The descriptions' ASCII words (migration 0026_sqlite_description_words: FTS5 over
# the view WORDS_SOURCE, kept in the same batches under the same mark), read by the
# statements' history suggestion (banking/rules.py, `described`).
WORDS_TABLE = "transaction_words"
WORDS_SOURCE = "transaction_words_source"
WORDS_TAIL = (
    f"INSERT INTO {WORDS_TABLE} (rowid, words)"
    f" SELECT id, words FROM {WORDS_SOURCE} WHERE id > {UPTO}"
)
# Every transaction is indexed (after INDEX_TAIL, or after FTS5's 'rebuild'): the mark
# to the newest id. Never lowered: a mark above every id is still true.
MARK_ALL = (
    f"UPDATE {MARK_TABLE} SET upto = max(upto, (SELECT coalesce(max(id), 0) FROM transactions))"
    " WHERE id = 1"
)
MIN_RUN = 3
LIKE_ESCAPE = "\\"
# Every letter with a lowercase mapping lies below U+20000 (the last cased script,
# Adlam, ends at U+1E943; planes 2 and up hold CJK, tags and private use);
# test_books_search checks this against the running Python's Unicode tables.
CASED_BELOW = 0x20000


def indexable(dialect: str, needle: str) -> bool:
    """Can the index narrow this q at all? (Else the ordered walk alone answers it.)"""
    if dialect == "postgresql":
        return len(needle) >= MIN_RUN
    return bool(safe_runs(needle))


def like_pattern(fragment: str) -> str:
    """A LIKE pattern matching descriptions that contain fragment (%, _, \\ literal)."""
    escaped = (
        fragment.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2)
        .replace("%", LIKE_ESCAPE + "%")
        .replace("_", LIKE_ESCAPE + "_")
    )
    return f"%{escaped}%"


def words(needle: str) -> list[str]:
    """The runs of letters and digits in needle, at least MIN_RUN long."""
    found, current = [], []
    for ch in needle + " ":
        if ch.isalnum():
            current.append(ch)
            continue
        if len(current) >= MIN_RUN:
            found.append("".join(current))
        current = []
    return found


def rarest_word(needle: str, sample: list[str]) -> str | None:
    """The word of needle found in the fewest sample descriptions (longest on a tie),
    or None when needle has no word or even the rarest is in a quarter of the sample."""
    candidates = words(needle)
    if not candidates:
        return None
    counts = {w: sum(w in d for d in sample) for w in candidates}
    word = min(candidates, key=lambda w: (counts[w], -len(w)))
    return None if counts[word] * 4 > len(sample) else word


def postgresql_condition(needle: str, sample: list[str]):
    """The indexable condition narrowing q on PostgreSQL, or None.

    Without a rare word, the whole of q (at least MIN_RUN characters) as the pattern:
    the planner then weighs the index against the ordered walk itself.
    """
    fragment = rarest_word(needle, sample)
    if fragment is None:
        if len(needle) < MIN_RUN:
            return None
        fragment = needle
    return func.lower(Transaction.description).like(like_pattern(fragment), escape=LIKE_ESCAPE)


@functools.cache
def _unsafe_characters() -> frozenset[str] | None:
    """Characters a q run must not contain: FTS5's trigram tokenizer (case_sensitive 0)
    folds some letter differently from str.lower, so a description holding it could
    match exactly and be missed by the index.

    Probed once per process on an in-memory FTS5 table of this SQLite library (its fold
    table depends on the version): for every character whose str.lower differs from it,
    the row "ab" + character must match the phrase "ab" + its lowercase (both in
    isolation and after a letter, for Greek final sigma). Where not, every character of
    the lowercase is unsafe. None: this SQLite has no FTS5 trigram tokenizer.
    """
    conn = sqlite3.connect(":memory:")
    try:
        try:
            conn.execute(
                "CREATE VIRTUAL TABLE probe USING fts5(t, tokenize='trigram case_sensitive 0')"
            )
        except sqlite3.OperationalError:
            return None
        unsafe: set[str] = set()
        for code in range(CASED_BELOW):
            if 0xD800 <= code <= 0xDFFF:
                continue
            ch = chr(code)
            lowers = {ch.lower(), ("a" + ch).lower()[1:]}
            if lowers == {ch}:
                continue
            conn.execute("DELETE FROM probe")
            conn.execute("INSERT INTO probe (rowid, t) VALUES (1, ?)", ("ab" + ch + "cd",))
            for low in lowers:
                if len(low) != 1:
                    unsafe.update(low)
                    continue
                for phrase in ("ab" + low, "b" + low + "c", low + "cd"):
                    hit = conn.execute(
                        "SELECT count(*) FROM probe WHERE probe MATCH ?", (_phrase(phrase),)
                    ).fetchone()[0]
                    if not hit:
                        unsafe.add(low)
        return frozenset(unsafe)
    finally:
        conn.close()


def has_sqlite_table(connection) -> bool:
    return FTS_TABLE in _sqlite_tables(connection)


def has_words_table(connection) -> bool:
    return WORDS_TABLE in _sqlite_tables(connection)


def _sqlite_tables(connection) -> set[str]:
    """Which of FTS_TABLE, MARK_TABLE and WORDS_TABLE this SQLite has (a schema before
    0017: no mark; before 0026: no words)."""
    found = connection.execute(
        text(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (:fts, :mark, :words)"
        ),
        {"fts": FTS_TABLE, "mark": MARK_TABLE, "words": WORDS_TABLE},
    )
    return set(found.scalars())


def index_tail(connection) -> None:
    """SQLite: index the transactions above the mark, in both tables kept under it
    (the words' too when present), and raise it (flush only)."""
    connection.execute(text(INDEX_TAIL))
    if has_words_table(connection):
        connection.execute(text(WORDS_TAIL))
    connection.execute(text(MARK_ALL))


def mark_all_indexed(connection) -> None:
    """SQLite: every transaction is in the index now ('rebuild'): the mark follows."""
    connection.execute(text(MARK_ALL))


def _phrase(run: str) -> str:
    return '"' + run.replace('"', '""') + '"'


def safe_runs(needle: str) -> list[str]:
    """The runs of needle (at least MIN_RUN characters) without an unsafe character."""
    unsafe = _unsafe_characters()
    if unsafe is None:
        return []
    found, current = [], []
    for ch in needle + "\x00":
        if ch != "\x00" and ch not in unsafe:
            current.append(ch)
            continue
        if len(current) >= MIN_RUN:
            found.append("".join(current))
        current = []
    return found


def sqlite_condition(connection, needle: str):
    """The condition narrowing q on SQLite (ids the trigram table matches, or above the
    mark: not indexed yet), or None (also when the migration found no trigram tokenizer
    and made no table). SQLite answers it by rowid: a lookup per id of the IN list,
    whose tail part is one rowid range (id > upto), not a scan (test_books_search
    checks the plan)."""
    runs = safe_runs(needle)
    if not runs:
        return None
    tables = _sqlite_tables(connection)
    if FTS_TABLE not in tables:
        return None
    # One IN list (the matches UNION ALL the tail), not "IN (...) OR id > upto": SQLite
    # plans that OR as a walk of the (occurred_on, id) index, filtering every row.
    # Without the mark (the schema of 0010 to 0016) every row is indexed: no tail.
    tail = f" UNION ALL SELECT id FROM transactions WHERE id > {UPTO}"
    candidates = (
        text(
            f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH :search_runs"
            + (tail if MARK_TABLE in tables else "")
        )
        .bindparams(search_runs=" ".join(_phrase(r) for r in runs))
        .columns(column("rowid", Integer))
    )
    return Transaction.id.in_(candidates)
