"""One bank line is booked once (docs/statements.md, "Acting on the lines"): two
requests at once that would give the same bank reference and amount to an entry of
one account (two statements of one file, or one statement; `post` or `match`): one is
done, the other is 409 naming the line and changes nothing. Behind the requests stands
a key in the database, entries (account_id, bank_ref, amount_cents) where bank_ref is
set (migration 0021), on both stores."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from app.extensions import db
from app.services.banking import status
from tests.services.banking.line_steps import act, snapshot, sql
from tests.services.banking.stand_in import downloaded_again, line, statement_file, upload_statement

pytestmark = pytest.mark.usefixtures("stand_in_reader")

ROUNDS = 4


def bank_entries_holding(app, account_id: int, ref: str) -> list:
    return sql(
        app,
        "SELECT transaction_id, amount_cents FROM entries"
        " WHERE account_id = :a AND bank_ref = :r ORDER BY id",
        a=account_id,
        r=ref,
    )


def at_once(app, api, requests: list[tuple[int, list[dict]]]) -> list:
    """POST /statements/{id}/lines for each (statement id, lines), all released at
    once from a barrier, each by its own client (its own connection): the answers, in
    the order given."""
    barrier = threading.Barrier(len(requests))
    answers: list = [None] * len(requests)
    headers = {"Authorization": f"Bearer {api.token}"}

    def one(i: int, sid: int, lines: list[dict]) -> None:
        client = app.test_client()
        barrier.wait()
        response = client.post(f"/statements/{sid}/lines", headers=headers, json={"lines": lines})
        answers[i] = (response.status_code, response.get_json())

    threads = [threading.Thread(target=one, args=(i, *asked)) for i, asked in enumerate(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert all(answer is not None for answer in answers), answers
    return answers


def one_done_one_refused(answers: list, line_id: int) -> tuple[int, int]:
    """(index of the request done, index of the one refused): exactly one 200 and one
    409 whose {error} names the line, with no store's words in it."""
    codes = sorted(code for code, _ in answers)
    assert codes == [200, 409], answers
    done = next(i for i, (code, _) in enumerate(answers) if code == 200)
    refused = answers[1 - done][1]
    assert set(refused) == {"error"}, refused
    assert refused["error"].startswith(f"line {line_id}: "), refused
    for word in ("UNIQUE", "constraint", "entries", "psycopg", "sqlite", "uq_"):
        assert word not in refused["error"], refused
    return done, 1 - done


def file_of_round(n: int, download: int = 0) -> bytes:
    """A month's file: line 1 someone else's, line 2 the contested bank line; the
    `download`th download of it (other bytes, the same lines)."""
    data = statement_file(
        line("2026-03-02", 700 + n, "Member", f"M-{n}"),
        line("2026-03-05", -2500, "Shop", f"R-{n}"),
    )
    return downloaded_again(data, download)


@pytest.mark.parametrize(
    "actions",
    [("post", "post"), ("match", "post"), ("post", "match"), ("match", "match")],
    ids=lambda a: "+".join(a),
)
def test_two_statements_of_one_file_book_the_line_once(app, api, books, post_tx, actions):
    """The same file uploaded twice (both statements' lines wait: neither is posted
    yet), and the same line acted on from both at once: exactly one is done."""
    expected = 0  # bank entries of -25.00: the ones made by hand, and one per posting done
    for n in range(ROUNDS):
        by_hand = None
        if "match" in actions:
            expected += 1
            made = post_tx("2026-03-04", "shop", (books["bank"], -2500), (books["food"], 2500))
            by_hand = made.get_json()["id"]
        sids = [
            upload_statement(api, books["bank"], file_of_round(n, i)).get_json()["id"]
            for i, _ in enumerate(actions)
        ]
        asked = [
            {"line_id": 2, "action": "post", "account_id": books["food"]}
            if action == "post"
            else {"line_id": 2, "action": "match", "transaction_id": by_hand}
            for action in actions
        ]
        pairs = [(sid, [wanted]) for sid, wanted in zip(sids, asked, strict=True)]
        answers = at_once(app, api, pairs)
        done, refused = one_done_one_refused(answers, 2)

        held = bank_entries_holding(app, books["bank"], f"R-{n}")
        assert len(held) == 1 and held[0][1] == -2500, held
        winner = answers[done][1]["lines"][1]
        assert winner["status"] == ("posted" if actions[done] == "post" else "matched")
        assert held[0][0] == winner["transaction_id"]
        expected += actions[done] == "post"
        # The refused request changed nothing: its line still waits as stored, and no
        # transaction of its posting stayed; read now, it is the winner's duplicate.
        loser = api.get(f"/statements/{sids[refused]}").get_json()["lines"][1]
        assert (loser["status"], loser["transaction_id"]) == (
            "duplicate",
            winner["transaction_id"],
        ), loser
        stored = sql(
            app,
            "SELECT status FROM statement_lines WHERE statement_id = :s AND line_id = 2",
            s=sids[refused],
        )[0][0]
        assert stored in ("new", "match"), stored
        booked = sql(
            app,
            "SELECT count(*) FROM entries WHERE account_id = :a AND amount_cents = -2500",
            a=books["bank"],
        )[0][0]
        assert booked == expected, (n, booked, expected)


def test_one_statement_acted_on_twice_at_once_books_the_line_once(app, api, books):
    for n in range(ROUNDS):
        sid = upload_statement(api, books["bank"], file_of_round(n)).get_json()["id"]
        posted = [
            {"line_id": 1, "action": "ignore"},
            {"line_id": 2, "action": "post", "account_id": books["food"]},
        ]
        answers = at_once(app, api, [(sid, posted), (sid, posted[1:])])
        one_done_one_refused(answers, 2)
        assert len(bank_entries_holding(app, books["bank"], f"R-{n}")) == 1


def test_a_stale_read_meets_the_key_and_is_409_naming_the_line(app, api, books, monkeypatch):
    """What a request racing another sees, made certain: its read of the references
    held comes before the other's commit (here: the first read answers nothing). The
    key refuses the mark; the answer is 409 naming the line and the transaction now
    holding the reference, and the request's posting is undone with it."""
    first, second = (
        upload_statement(api, books["bank"], file_of_round(0, i)).get_json()["id"] for i in (0, 1)
    )
    post = {"line_id": 2, "action": "post", "account_id": books["food"]}
    done = act(api, first, post)
    assert done.status_code == 200, done.get_json()
    holder = done.get_json()["lines"][1]["transaction_id"]

    real = status.holders
    calls: list[int] = []

    def stale_then_real(account_id, refs):
        # The request's reads (the lines worked out, the references its actions take)
        # before the other's commit; the refusal's own read after it.
        calls.append(account_id)
        return {} if len(calls) <= 2 else real(account_id, refs)

    monkeypatch.setattr(status, "holders", stale_then_real)
    before = snapshot(app)
    refused = act(api, second, {"line_id": 1, "action": "ignore"}, post)
    assert refused.status_code == 409, refused.get_json()
    assert refused.get_json() == {
        "error": f"line 2: transaction {holder} of the account has come to hold its bank "
        "reference 'R-0' meanwhile: the line is a duplicate"
    }
    assert snapshot(app) == before
    assert len(calls) == 3


def test_the_database_refuses_a_second_entry_with_the_same_key(app, books, post_tx):
    """The key itself, below the service: an account's entries hold one bank reference
    with one amount at most once. The same reference with another amount, or in another
    account, and any number of entries without one, are other keys."""
    made = [
        post_tx("2026-03-02", f"t{i}", (books[acct], cents), (books["food"], -cents))
        for i, (acct, cents) in enumerate(
            [("bank", 2500), ("bank", 2500), ("bank", 2600), ("card", 2500)]
        )
    ]
    tx = [m.get_json()["id"] for m in made]

    def give(tx_id: int, account: str, ref: str) -> None:
        with app.app_context(), db.engine.begin() as conn:
            conn.execute(
                text(
                    "UPDATE entries SET cleared = true, bank_ref = :r"
                    " WHERE transaction_id = :t AND account_id = :a"
                ),
                {"r": ref, "t": tx_id, "a": books[account]},
            )

    give(tx[0], "bank", "R-1")
    give(tx[2], "bank", "R-1")  # another amount
    give(tx[3], "card", "R-1")  # another account
    with pytest.raises(IntegrityError):
        give(tx[1], "bank", "R-1")
    holding = bank_entries_holding(app, books["bank"], "R-1")
    assert [row[0] for row in holding] == [tx[0], tx[2]]
