"""POST /import's dry run (the web app's import preview) answers, row for row, what
the real import and the books answer for the same rows, and writes nothing: no
transaction, no audit event, no sequence moved (docs/web.md, "Import")."""

import pytest

from app.services.errors import RANGE_MESSAGE

MAX = 2**63 - 1
LOCKED_THROUGH = "2026-01-31"


def _row(day, description, *entries):
    return {
        "occurred_on": day,
        "description": description,
        "entries": [{"account_id": a, "amount_cents": c} for a, c in entries],
    }


@pytest.fixture
def books(api, make_account, post_tx, session_client) -> dict:
    """Accounts, a few stored postings (one near the 64-bit edge), a lock date."""
    ids = {name: make_account(name, kind) for name, kind in _ACCOUNTS}
    stored = post_tx("2026-03-01", "Dues from Ann", (ids["Bank"], 5000), (ids["Dues"], -5000))
    ids["stored"] = stored.get_json()["id"]
    # X holds 1 on 2026-05-05 and the whole range on 2026-06-01 (day and month rows).
    for day, cents in (("2026-05-05", 1), ("2026-06-01", MAX)):
        assert post_tx(day, "Edge", (ids["X"], cents), (ids["Y"], -cents)).status_code == 201
    assert api.put(f"/accounts/{ids['Old']}", json={"archived": True}).status_code == 200
    person = session_client(mfa_complete=True)  # the lock date takes a full session
    assert person.put("/books/lock", json={"locked_through": LOCKED_THROUGH}).status_code == 200
    return ids


_ACCOUNTS = [("Bank", "asset"), ("Dues", "income"), ("Old", "expense")]
_ACCOUNTS += [("X", "asset"), ("Y", "equity")]


def _file(ids) -> list:
    """Good rows among every kind of refusal, with what each answers (None: taken)."""
    bank, dues, old, x, y = (ids[k] for k in ("Bank", "Dues", "Old", "X", "Y"))
    locked = f"the books are locked through {LOCKED_THROUGH}: nothing dated on or before "
    return [
        (_row("2026-03-02", "ANN SUBS", (bank, 5000), (dues, -5000)), None),
        (_row("2026-03-03", "Typo", (bank, 100), (999999, -100)), "unknown account_id 999999"),
        (
            _row("2026-03-04", "Closed", (bank, 100), (old, -100)),
            f"account_id {old} is archived and takes no new entries",
        ),
        (_row("2026-01-15", "Old news", (bank, 100), (dues, -100)), locked),
        # Locked and unknown: the lock is named first; two bad accounts: the lowest id.
        (_row("2026-01-16", "Both", (bank, 100), (999999, -100)), locked),
        (_row("2026-03-05", "Two bad", (999999, 100), (old, -100)), f"account_id {old} is"),
        (_row("2026-03-05", "Zero", (old, 100), (0, -100)), "unknown account_id 0"),
        (_row("2026-03-06", "Off", (bank, 100), (dues, -99)), "entries must sum to 0"),
        (_row("2026-02-30", "No day", (bank, 100), (dues, -100)), "'occurred_on' must be"),
        (_row("2026-03-07", "x" * 2001, (bank, 1), (dues, -1)), "at most 2000 characters"),
        (_row("2026-03-07", "   ", (bank, 1), (dues, -1)), "description is required"),
        (_row("2026-03-08", "One", (bank, 100)), "at least 2 entries; got 1"),
        (
            _row(
                "2026-03-08",
                "None",
            ),
            "at least 2 entries; got 0",
        ),
        (_row("2026-03-09", "Huge", (bank, 2**63), (dues, -(2**63))), "out of range"),
        # The whole range on a fresh day fits; one cent more on that day does not,
        # because the row before it is posted first.
        (_row("2026-04-10", "Edge", (x, MAX), (y, -MAX)), None),
        (_row("2026-04-10", "Over", (x, 1), (dues, -1)), RANGE_MESSAGE),
        # X's month of June already holds the whole range: the day fits, the month not.
        (_row("2026-06-20", "Month", (x, 1), (dues, -1)), RANGE_MESSAGE),
        # Two entries of one account that cancel: SQLite adds them one by one (1 + MAX
        # leaves the range), PostgreSQL adds their sum (0): each store's own answer.
        (_row("2026-05-05", "Swing", (x, MAX), (y, -MAX), (x, -MAX), (y, MAX)), "store"),
        # More entries than one INSERT takes (1,000): PostgreSQL sums each statement's
        # entries apart, so X's +MAX in the first cannot wait for its -MAX in the second.
        (_row("2026-05-05", "Long", *_long(x, y)), RANGE_MESSAGE),
        (
            {**_row("2026-03-10", "Fix", (bank, 1), (dues, -1)), "replaces": ids["stored"]},
            "replaces",
        ),
        (7, "must be an object"),
        # An id beyond the accounts' 32-bit ids is unknown like any other.
        (_row("2026-03-24", "Far", (bank, 1), (2**40, -1)), f"unknown account_id {2**40}"),
        (_row("2026-03-25", "Grant", (bank, 100000), (dues, -100000)), None),
    ]


def _long(x, y) -> list:
    first = [(x, MAX), *[(y, 0)] * 998, (y, -MAX)]  # the first 1,000 entries
    return [*first, (x, -MAX), (y, MAX)]


def _dry_run(api, rows) -> list:
    response = api.post("/import", json={"transactions": rows, "dry_run": True})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["dry_run"] is True and body["imported"] == 0
    assert [r["row"] for r in body["rows"]] == list(range(1, len(rows) + 1))
    return body["rows"]


def _imported_alone(api, number, row) -> str | None:
    """The real import of this one row now (committed when taken): its error as the
    import of the whole file would name it (row `number`), None when it was stored.
    A refusal of the books themselves is also what POST /transactions answers."""
    response = api.post("/import", json={"transactions": [row], "dry_run": False})
    if response.status_code == 201:
        return None
    assert response.status_code == 400, response.get_json()
    error = response.get_json()["error"]
    assert error.startswith("row 1: "), error
    said = error.removeprefix("row 1: ")
    if isinstance(row, dict) and "replaces" not in row:
        direct = api.post("/transactions", json=row)
        assert direct.status_code in (400, 409), direct.get_json()
        assert direct.get_json()["error"] == said
    return f"row {number}: {said}"


def test_a_dry_run_answers_each_row_as_the_real_import_does(api, books, dialect):
    ids = books
    cases = _file(ids)
    rows = [row for row, _ in cases]
    preview = _dry_run(api, rows)
    for number, (answer, (row, expected)) in enumerate(zip(preview, cases, strict=True), start=1):
        if expected == "store":
            expected = RANGE_MESSAGE if dialect == "sqlite" else None
        if expected is None:
            assert answer["error"] is None, answer
        else:
            assert answer["error"].startswith(f"row {number}: "), answer
            assert expected in answer["error"], (expected, answer)
        # The real import of the rows in turn (each taken row stored before the next).
        assert answer["error"] == _imported_alone(api, number, row), (number, row)


def test_the_rows_a_dry_run_takes_are_imported_with_its_possible_duplicates(api, books):
    ids = books
    rows = [row for row, _ in _file(ids)]
    preview = _dry_run(api, rows)
    assert preview[0]["possible_duplicates"] == [ids["stored"]]
    taken = [
        (row, answer) for row, answer in zip(rows, preview, strict=True) if answer["error"] is None
    ]
    response = api.post("/import", json={"transactions": [row for row, _ in taken]})
    assert response.status_code == 201, response.get_json()
    imported = response.get_json()["rows"]
    assert [r["possible_duplicates"] for r in imported] == [
        answer["possible_duplicates"] for _, answer in taken
    ]


def test_the_real_import_of_the_file_names_the_row_the_dry_run_names(api, books):
    ids = books
    rows = [row for row, _ in _file(ids)]
    preview = _dry_run(api, rows)
    # A row that cannot be a posting at all (row 9, an impossible day) is named before
    # any row the books refuse; without such rows, the first refused row.
    readable = [row for row, answer in zip(rows, preview, strict=True) if not _unreadable(answer)]
    expected = [a["error"] for a in _dry_run(api, readable) if a["error"]][0]
    for body, error in ((rows, preview[8]["error"]), (readable, expected)):
        response = api.post("/import", json={"transactions": body})
        assert response.status_code == 400
        assert response.get_json()["error"] == error
    assert expected == "row 2: unknown account_id 999999"


def _unreadable(answer) -> bool:
    error = answer["error"] or ""
    return any(
        needle in error
        for needle in ("'occurred_on'", "out of range", "must be an object", "replaces")
    )


def test_a_dry_run_writes_nothing(api, books, post_tx):
    ids = books
    rows = [row for row, _ in _file(ids)]
    bank, dues = ids["Bank"], ids["Dues"]
    first = post_tx("2026-03-11", "Before", (bank, 1), (dues, -1)).get_json()
    listing = api.get("/transactions").get_json()
    trail = api.get("/audit?limit=500").get_json()
    head = api.get("/audit/head").get_json()
    balances = api.get("/reports/balances").get_json()
    for _ in range(2):
        _dry_run(api, rows)
    assert api.get("/transactions").get_json() == listing
    assert api.get("/audit?limit=500").get_json() == trail
    assert api.get("/audit/head").get_json() == head
    assert api.get("/reports/balances").get_json() == balances
    # No sequence moved: the next posting's ids follow the last one stored before.
    then = post_tx("2026-03-12", "After", (bank, 1), (dues, -1)).get_json()
    assert then["id"] == first["id"] + 1
    events = api.get("/audit?limit=2").get_json()["items"]  # newest first
    assert events[0]["seq"] == events[1]["seq"] + 1
    posted = [event["object"]["transaction"] for event in events]
    after, before = (sorted(e["id"] for e in tx["entries"]) for tx in posted)
    assert [tx["id"] for tx in posted] == [then["id"], first["id"]]
    assert after[0] == before[-1] + 1
