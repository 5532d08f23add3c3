"""`verify` replays the bank statements (issue 43; docs/statements.md, "Checking"), on
both stores: a statement's header, each of its lines, a reconciliation, and an entry's
bank reference and cleared mark, changed, added or removed behind the service, is
named (exit 1); books left alone after posting, matching, ignoring, correcting,
reconciling and deleting verify; and books whose older events carry less still verify,
checked for what their events carry."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from app import store
from app.extensions import db
from app.services.banking import lines
from app.services.errors import ServiceError
from app.services.ledger import audit
from tests.services.banking.stand_in import line, statement_file, upload_statement
from tests.testkit import events, restored_backup

pytestmark = pytest.mark.usefixtures("stand_in_reader")


def act(api, sid, *lines):
    done = api.post(f"/statements/{sid}/lines", json={"lines": list(lines)})
    assert done.status_code == 200, done.get_json()
    return done.get_json()


def sql(app, statement, **params):
    with app.app_context(), db.engine.begin() as conn:
        result = conn.execute(text(statement), params)
        return result.all() if result.returns_rows else []


def verify(runner):
    result = runner.invoke(args=["verify"])
    return result.exit_code, result.output.strip()


def correct(api, books, original, account="dues"):
    """The 5.00 posted from line 1 corrected: the cost on `account` instead."""
    response = api.post(
        "/transactions",
        json={
            "occurred_on": "2026-03-02",
            "description": "Shop, corrected",
            "entries": [
                {"account_id": books[account], "amount_cents": 500},
                {"account_id": books["bank"], "amount_cents": -500},
            ],
            "replaces": original,
        },
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def file_the_month(app, api, books, post_tx) -> dict:
    """A statement of three lines, each dealt with, one posting corrected, the account
    reconciled to the statement; a second statement uploaded and deleted; a waiting
    line whose transaction is deleted. The ids the tests tamper with."""
    by_hand = post_tx("2026-03-03", "Shop by hand", (books["bank"], -6), (books["food"], 6))
    by_hand = by_hand.get_json()["id"]
    data = statement_file(
        line("2026-03-02", -500, "Shop", "R-1", memo="card"),
        line("2026-03-03", -6, "Shop"),
        line("2026-03-04", -700, "Gym", "R-3"),
        closing_balance_cents=-506,
        closing_balance_on="2026-03-31",
        opening_balance_cents=0,
    )
    sid = upload_statement(api, books["bank"], data).get_json()["id"]
    done = act(
        api,
        sid,
        {"line_id": 1, "action": "post", "account_id": books["food"]},
        {"line_id": 2, "action": "match"},
        {"line_id": 3, "action": "ignore"},
    )
    assert [x["status"] for x in done["lines"]] == ["posted", "matched", "ignored"]
    posted = correct(api, books, done["lines"][0]["transaction_id"])
    made = api.post(f"/statements/{sid}/reconcile")
    assert made.status_code == 201, made.get_json()

    gone = upload_statement(api, books["bank"], statement_file(line("2026-04-09", 1)))
    assert api.delete(f"/statements/{gone.get_json()['id']}").status_code == 204
    # A waiting line whose candidate is deleted: the line then names no transaction.
    other = post_tx("2026-04-03", "to delete", (books["bank"], -9), (books["food"], 9))
    other = other.get_json()["id"]
    waiting = upload_statement(api, books["bank"], statement_file(line("2026-04-03", -9)))
    waiting = waiting.get_json()
    assert waiting["lines"][0]["status"] == "match", waiting
    assert api.delete(f"/transactions/{other}").status_code == 204

    rows = sql(
        app,
        "SELECT e.id, e.transaction_id, e.account_id FROM entries e ORDER BY e.id",
    )
    bank_entry = {tx: entry for entry, tx, account in rows if account == books["bank"]}
    food_entry = next(
        entry for entry, tx, account in rows if tx == by_hand and account != books["bank"]
    )
    (rec,) = sql(app, "SELECT id FROM reconciliations")
    api.get("/audit/head")  # seal: the trail as anyone who reads it leaves it
    return {
        "sid": sid,
        "waiting": waiting["id"],
        "posted": posted,
        "by_hand": by_hand,
        "posted_entry": bank_entry[posted],
        "matched_entry": bank_entry[by_hand],
        "food_entry": food_entry,
        "rec": rec[0],
        "card": books["card"],
        "bank": books["bank"],
    }


@pytest.fixture
def month(app, api, books, post_tx):
    return file_the_month(app, api, books, post_tx)


def test_books_left_alone_verify_after_every_kind_of_line_action(runner, api, month):
    code, output = verify(runner)
    assert code == 0, output
    assert ", 2 statements" in output
    # Every line action left an event saying what became of the line.
    names = [e["action"] for e in events(api, oldest_first=True)]
    for action in ("statement_line.posted", "statement_line.matched", "statement_line.ignored"):
        assert names.count(action) == 1, names


def test_an_ignored_line_is_an_event_carrying_the_line(api, month):
    [ignored] = [e for e in events(api) if e["action"] == "statement_line.ignored"]
    assert ignored["object"] == {
        "line": {
            "statement_id": month["sid"],
            "line_id": 3,
            "booked_on": "2026-03-04",
            "amount_cents": -700,
            "payee": "Gym",
            "memo": None,
            "bank_ref": "R-3",
            "status": "ignored",
            "transaction_id": None,
        }
    }


# (what is changed behind the service, the SQL, what verify's message says)
TAMPERING = {
    "line amount": (
        "UPDATE statement_lines SET amount_cents = -501 WHERE statement_id = :sid AND line_id = 1",
        "statement {sid} line 1: amount_cents is -501 in the ledger but -500 after event seq",
    ),
    "line status": (
        "UPDATE statement_lines SET status = 'new' WHERE statement_id = :sid AND line_id = 3",
        "statement {sid} line 3: status is 'new' in the ledger but 'ignored' after event seq",
    ),
    "line payee": (
        "UPDATE statement_lines SET payee = 'Other', payee_key = 'other'"
        " WHERE statement_id = :sid AND line_id = 1",
        "statement {sid} line 1: payee is 'Other' in the ledger but 'Shop' after event seq",
    ),
    "line memo": (
        "UPDATE statement_lines SET memo = NULL WHERE statement_id = :sid AND line_id = 1",
        "statement {sid} line 1: memo is None in the ledger but 'card' after event seq",
    ),
    "line bank reference": (
        "UPDATE statement_lines SET bank_ref = 'R-7' WHERE statement_id = :sid AND line_id = 3",
        "statement {sid} line 3: bank_ref is 'R-7' in the ledger but 'R-3' after event seq",
    ),
    "line transaction": (
        "UPDATE statement_lines SET transaction_id = :by_hand"
        " WHERE statement_id = :sid AND line_id = 1",
        "statement {sid} line 1: transaction_id is {by_hand} in the ledger but {posted} after"
        " event seq",
    ),
    "line removed": (
        "DELETE FROM statement_lines WHERE statement_id = :sid AND line_id = 3",
        "statement {sid} line 3 (event seq",
    ),
    "line added": (
        "INSERT INTO statement_lines (statement_id, line_id, booked_on, amount_cents, status)"
        " VALUES (:sid, 4, '2026-03-05', -1, 'ignored')",
        "statement {sid} line 4 is in the ledger but not in event seq",
    ),
    "statement account": (
        "UPDATE statements SET account_id = :card WHERE id = :sid",
        "statement {sid}: account_id is {card} in the ledger but {bank} in event seq",
    ),
    "closing balance": (
        "UPDATE statements SET closing_balance_cents = 999 WHERE id = :sid",
        "statement {sid}: closing_balance_cents is 999 in the ledger but -506 in event seq",
    ),
    "closing date": (
        "UPDATE statements SET closing_balance_on = '2026-03-30' WHERE id = :sid",
        "statement {sid}: closing_balance_on is '2026-03-30' in the ledger but '2026-03-31'",
    ),
    "bank account": (
        "UPDATE statements SET bank_account = 'DE00' WHERE id = :sid",
        "statement {sid}: bank_account is 'DE00' in the ledger but 'NL91 ABNA 0417 1643 00'",
    ),
    "statements.size": (
        "UPDATE statements SET size = size + 1 WHERE id = :sid",
        "statement {sid}: its size is",
    ),
    "reconciliation balance": (
        "UPDATE reconciliations SET closing_balance_cents = 1 WHERE id = :rec",
        "reconciliation {rec}: closing_balance_cents is 1 in the ledger but -506 in event seq",
    ),
    "reconciliation date": (
        "UPDATE reconciliations SET statement_date = '2026-03-30' WHERE id = :rec",
        "reconciliation {rec}: statement_date is '2026-03-30' in the ledger but '2026-03-31'",
    ),
    "reconciliation account": (
        "UPDATE reconciliations SET account_id = :card WHERE id = :rec",
        "reconciliation {rec}: account_id is {card} in the ledger but {bank} in event seq",
    ),
    "reconciliation who": (
        "UPDATE reconciliations SET created_by = NULL WHERE id = :rec",
        "reconciliation {rec}: created_by is None in the ledger but user",
    ),
    "reconciliation when": (
        "UPDATE reconciliations SET created_at = '2020-01-01 00:00:00' WHERE id = :rec",
        "reconciliation {rec}: created_at is '2020-01-01T00:00:00Z' in the ledger but",
    ),
    "reconciliation added": (
        "INSERT INTO reconciliations (account_id, statement_date, closing_balance_cents,"
        " entry_count, created_at) VALUES (:bank, '2026-04-30', -506, 0, '2026-05-01 00:00:00')",
        "(account {bank}, statement date 2026-04-30, closing balance -506) is in the ledger"
        " but no event recorded it",
    ),
    "reconciliation removed": (
        "DELETE FROM reconciliations WHERE id = :rec",
        "reconciliation {rec} (event seq",
    ),
    "entry bank reference changed": (
        "UPDATE entries SET bank_ref = 'R-9' WHERE id = :posted_entry",
        "entry {posted_entry}: bank_ref is 'R-9' in the ledger but 'R-1' after event seq",
    ),
    "entry bank reference removed": (
        "UPDATE entries SET bank_ref = NULL WHERE id = :posted_entry",
        "entry {posted_entry}: bank_ref is None in the ledger but 'R-1' after event seq",
    ),
    "entry bank reference added": (
        "UPDATE entries SET bank_ref = 'R-3' WHERE id = :food_entry",
        "entry {food_entry}: bank_ref is 'R-3' in the ledger but None and no event gave it one",
    ),
    "entry cleared mark flipped": (
        "UPDATE entries SET cleared = true WHERE id = :food_entry",
        "entry {food_entry}: cleared=True, reconciled=False in the ledger but cleared=False",
    ),
}


@pytest.mark.parametrize("kind", list(TAMPERING))
def test_a_change_behind_the_service_is_named(runner, app, month, kind):
    statement, said = TAMPERING[kind]
    sql(app, statement, **{k: v for k, v in month.items() if f":{k}" in statement})
    code, output = verify(runner)
    assert code == 1, output
    assert said.format(**month) in output, output
    assert "outside the service" in output, output


def test_a_waiting_line_whose_transaction_is_put_back_is_named(runner, app, month):
    """The waiting line's candidate was deleted, so the line names none; naming it
    again behind the service (it is gone) or naming another transaction is a change."""
    sql(
        app,
        "UPDATE statement_lines SET transaction_id = :t WHERE statement_id = :s",
        t=month["by_hand"],
        s=month["waiting"],
    )
    code, output = verify(runner)
    assert code == 1
    assert f"statement {month['waiting']} line 1: transaction_id is {month['by_hand']}" in output
    assert "but None after event seq" in output


def test_a_statement_added_with_lines_behind_the_service_is_named(runner, app, month):
    sql(
        app,
        "INSERT INTO statements (id, account_id, format, size, sha256, created_at,"
        " content_bytes) VALUES (77, :a, 'ofx', 1, :h, '2026-01-01 00:00:00', :c)",
        a=month["bank"],
        h="2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881",
        c=b"x",
    )
    code, output = verify(runner)
    assert code == 1 and "statement 77 is in the ledger but no event uploaded it" in output


# --- books whose events were written before verify replayed statements ---------------

NEW_HEADER_KEYS = (
    "currency",
    "period_from",
    "period_to",
    "opening_balance_cents",
    "closing_balance_cents",
    "closing_balance_on",
    "created_at",
)


def as_before(record):
    """audit.record writing the events as the service did before issue 43: an upload
    without its lines or figures, no line events, a reconciliation without its row,
    a correction without the bank references its kept entries took."""

    def older(action, obj, *args, **kwargs):
        if action.startswith("statement_line."):
            return None
        obj = dict(obj)
        if action.startswith("statement."):
            obj.pop("lines", None)
            obj["statement"] = {
                k: v for k, v in obj["statement"].items() if k not in NEW_HEADER_KEYS
            }
        obj.pop("reconciliation", None)
        obj.pop("kept_bank_refs", None)
        return record(action, obj, *args, **kwargs)

    return older


def test_books_from_before_verify_replayed_statements_still_verify(
    runner, app, api, books, post_tx, monkeypatch
):
    """An older trail is checked for what it carries: the file, account, format, bank
    account and the number of lines of each statement; the account, date, balance and
    number of entries of each reconciliation. What it never carried (a line's fields,
    the bank references its lines left) is not compared; lines acted on since are."""
    older = as_before(audit.record)
    monkeypatch.setattr(audit, "record", older)
    monkeypatch.setattr(audit, "record_many", lambda events: [older(*e) for e in events])
    month = file_the_month(app, api, books, post_tx)
    later = upload_statement(
        api,
        books["bank"],
        statement_file(
            line("2026-05-02", -8, "Late", "R-8"), line("2026-05-03", -4, "Late", "R-4")
        ),
    ).get_json()["id"]
    act(api, later, {"line_id": 1, "action": "post", "account_id": books["food"]})
    monkeypatch.undo()
    uploaded = [e for e in events(api) if e["action"] == "statement.uploaded"]
    assert all("lines" not in e["object"] for e in uploaded)
    code, output = verify(runner)
    assert code == 0, output

    # Acted on after the upgrade: the line's event carries it from now on.
    act(api, later, {"line_id": 2, "action": "post", "account_id": books["food"]})
    assert verify(runner)[0] == 0
    api.get("/audit/head")  # seal
    where = "WHERE statement_id = :s AND line_id = 2"
    sql(app, f"UPDATE statement_lines SET amount_cents = -9 {where}", s=later)
    code, output = verify(runner)
    assert code == 1 and f"statement {later} line 2: amount_cents is -9" in output, output
    sql(app, f"UPDATE statement_lines SET amount_cents = -4 {where}", s=later)

    # What the old events carry is still compared.
    for statement, said in (
        (
            "DELETE FROM statement_lines WHERE statement_id = :sid AND line_id = 3",
            "statement {sid}: 2 lines in the ledger but 3 in event seq",
        ),
        (
            "UPDATE statements SET account_id = :card WHERE id = :sid",
            "statement {sid}: account_id is {card} in the ledger but {bank} in event seq",
        ),
        (
            "UPDATE reconciliations SET closing_balance_cents = 1 WHERE id = :rec",
            "reconciliation {rec} (account {bank}, statement date 2026-03-31, closing balance"
            " 1) is in the ledger but no event recorded it",
        ),
        ("DELETE FROM reconciliations WHERE id = :rec", "the reconciliation of event seq"),
    ):
        with app.app_context(), db.engine.connect() as conn:
            snapshot = {
                table: conn.execute(text(f"SELECT * FROM {table}")).mappings().all()
                for table in ("statement_lines", "statements", "reconciliations")
            }
        sql(app, statement, **{k: v for k, v in month.items() if f":{k}" in statement})
        code, output = verify(runner)
        assert code == 1, (statement, output)
        assert said.format(**month) in output, output
        restore(app, snapshot)
        assert verify(runner)[0] == 0


def restore(app, snapshot):
    """Put the rows of `snapshot` back as they were (the tampering undone)."""
    with app.app_context(), db.engine.begin() as conn:
        for table in ("reconciliations", "statement_lines", "statements"):
            conn.execute(text(f"DELETE FROM {table}"))
        for table in ("statements", "statement_lines", "reconciliations"):
            for row in snapshot[table]:
                columns = ", ".join(row)
                values = ", ".join(f":{c}" for c in row)
                conn.execute(text(f"INSERT INTO {table} ({columns}) VALUES ({values})"), dict(row))


# slow: a restore into a new PostgreSQL database (created, migrated, dropped) takes seconds
@pytest.mark.parametrize("target", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def test_restored_books_replay_their_statements(runner, month, app_config, tmp_path, target):
    """A backup restored into either store keeps the lines, reconciliations and bank
    references the trail replays: verify passes there (restored_backup runs it) and
    still names a line changed afterwards."""
    with restored_backup(runner, app_config, tmp_path, target, "ledger_verify_lines_") as (
        restored,
        cli,
        verified,
    ):
        assert ", 2 statements" in verified, verified
        sql(
            restored,
            "UPDATE statement_lines SET status = 'new' WHERE statement_id = :s AND line_id = 3",
            s=month["sid"],
        )
        result = cli.invoke(args=["verify"])
        assert result.exit_code == 1
        assert f"statement {month['sid']} line 3: status is 'new'" in result.output
        with restored.app_context():
            db.session.remove()
            db.engine.dispose()


def test_a_refused_request_leaves_no_line_event(runner, app, api, books):
    """A request refused part way (its second line names no account) writes none of the
    line events its first line gathered, neither then nor with the next unit of work on
    the same session (the service's units, one after the other in one context)."""
    sid = upload_statement(
        api, books["bank"], statement_file(line("2026-03-02", -5, "A"), line("2026-03-03", -6))
    ).get_json()["id"]
    refused = {
        "lines": [
            {"line_id": 1, "action": "ignore"},
            {"line_id": 2, "action": "post", "account_id": 999},
        ]
    }
    with app.app_context():
        with pytest.raises(ServiceError):
            store.run_unit(lines.act, sid, refused, None)
        store.run_unit(lines.act, sid, {"lines": [{"line_id": 2, "action": "ignore"}]}, None)
    [ignored] = [e for e in events(api) if e["action"].startswith("statement_line.")]
    assert ignored["object"]["line"]["line_id"] == 2
    code, output = verify(runner)
    assert code == 0, output


def test_a_statement_whose_upload_waits_to_be_sealed_is_replayed(
    runner, app, api, books, dialect, monkeypatch
):
    """PostgreSQL: an upload's event still waiting to be sealed (here sealing is
    impossible, as on a read-only replica) carries the lines verify compares."""
    if dialect != "postgresql":
        pytest.skip("PostgreSQL only: SQLite appends every event to the chain at once")
    from app.services.ledger.audit import writing

    monkeypatch.setattr(writing, "SEAL_EVERY", 2**62)
    monkeypatch.setattr(audit, "seal", lambda: 0)
    data = statement_file(line("2026-03-02", -5, "Shop", "R-1"))
    sid = upload_statement(api, books["bank"], data).get_json()["id"]
    (waiting,) = sql(app, "SELECT count(*) FROM audit_pending WHERE action = 'statement.uploaded'")
    assert waiting[0] == 1
    code, output = verify(runner)
    assert code == 0 and "written but not yet sealed" in output, output
    sql(
        app,
        "UPDATE statement_lines SET payee = 'Else', payee_key = 'else' WHERE statement_id = :s",
        s=sid,
    )
    code, output = verify(runner)
    assert code == 1
    assert f"statement {sid} line 1: payee is 'Else' in the ledger but 'Shop'" in output


def test_a_reconciliation_whose_person_was_deleted_still_verifies(runner, app, month, make_user):
    """`ledger-service user rm` leaves a reconciliation's created_by null (its person is
    gone): that is the service's own change. A person made since with the same id is
    another person, so the null still stands; another user's id put there is named."""
    assert runner.invoke(args=["user", "rm", "alice@example.com"]).exit_code == 0
    (row,) = sql(app, "SELECT created_by FROM reconciliations WHERE id = :r", r=month["rec"])
    assert row[0] is None
    code, output = verify(runner)
    assert code == 0, output
    make_user("bob@example.com")
    ((bob,),) = sql(app, "SELECT id FROM users WHERE email = 'bob@example.com'")
    assert verify(runner)[0] == 0
    sql(app, "UPDATE reconciliations SET created_by = :b WHERE id = :r", b=bob, r=month["rec"])
    code, output = verify(runner)
    assert code == 1
    assert (
        f"reconciliation {month['rec']}: created_by is user {bob} (bob@example.com) in the "
        "ledger but user " in output
    ), output
    assert "(alice@example.com) in event seq" in output


def undo_a_month(app, api, books, post_tx) -> dict:
    """A statement's lines posted, matched and ignored, then each undone; sealed."""
    typed = post_tx("2026-05-03", "Shop by hand", (books["bank"], -600), (books["food"], 600))
    typed = typed.get_json()["id"]
    data = statement_file(
        line("2026-05-02", -500, "Gym", "U-1"),
        line("2026-05-03", -600, "Shop", "U-2"),
        line("2026-05-04", -700, "Cafe", "U-3"),
    )
    sid = upload_statement(api, books["bank"], data).get_json()["id"]
    act(
        api,
        sid,
        {"line_id": 1, "action": "post", "account_id": books["food"]},
        {"line_id": 2, "action": "match"},
        {"line_id": 3, "action": "ignore"},
    )
    undone = act(api, sid, *({"line_id": n, "action": "undo"} for n in (1, 2, 3)))
    assert [x["status"] for x in undone["lines"]] == ["new", "match", "new"]
    (entry,) = sql(
        app,
        "SELECT id FROM entries WHERE transaction_id = :t AND account_id = :a",
        t=typed,
        a=books["bank"],
    )
    api.get("/audit/head")
    return {"sid": sid, "typed": typed, "entry": entry[0]}


UNDO_TAMPERING = {
    "reference given back": (
        "UPDATE entries SET bank_ref = 'U-2' WHERE id = :entry",
        "entry {entry}: bank_ref is 'U-2' in the ledger but None after event seq",
    ),
    "cleared again": (
        "UPDATE entries SET cleared = true WHERE id = :entry",
        "entry {entry}",
    ),
    "match put back": (
        "UPDATE statement_lines SET status = 'matched', transaction_id = :typed"
        " WHERE statement_id = :sid AND line_id = 2",
        "statement {sid} line 2: status is 'matched' in the ledger but 'new' after event seq",
    ),
}


def test_undone_lines_verify(runner, app, api, books, post_tx):
    undo_a_month(app, api, books, post_tx)
    code, output = verify(runner)
    assert code == 0, output
    assert len(events(api, "statement_line.undone")) == 3


@pytest.mark.parametrize("kind", list(UNDO_TAMPERING))
def test_a_change_behind_the_service_after_undo_is_named(runner, app, api, books, post_tx, kind):
    done = undo_a_month(app, api, books, post_tx)
    statement, said = UNDO_TAMPERING[kind]
    sql(app, statement, **{k: v for k, v in done.items() if f":{k}" in statement})
    code, output = verify(runner)
    assert code == 1, output
    assert said.format(**done) in output, output
