"""The audit trail (issue 19): one hash-chained event per change, GET /audit, /audit/head.

The chain is re-computed here independently of the service, from the served JSON:
hash = sha256(previous hash + canonical JSON of the event without its hash).
"""

from __future__ import annotations

import hashlib

from sqlalchemy import text

from app import store
from app.extensions import db
from app.services.oauth import tokens
from tests.services.ledger.audit_chain import ZEROS, all_events, assert_chain, tx_body
from tests.support import SESSION_COOKIE
from tests.testkit import ApiClient, Rpc


def client_name(app, client_id: str) -> str:
    with app.app_context():
        name = db.session.execute(
            text("SELECT name FROM oauth_clients WHERE id = :c"), {"c": client_id}
        ).scalar_one()
        db.session.rollback()
        return name


def stored_entries(app, tx_id: int) -> list[dict]:
    with app.app_context():
        rows = db.session.execute(
            text(
                "SELECT id, account_id, amount_cents FROM entries"
                " WHERE transaction_id = :t ORDER BY id"
            ),
            {"t": tx_id},
        ).all()
        db.session.rollback()
    return [{"id": r[0], "account_id": r[1], "amount_cents": r[2]} for r in rows]


def test_every_change_over_http_is_one_event_naming_user_via_and_client(app, api, post_tx):
    bank = api.post("/accounts", json={"name": "Bank", "kind": "asset"}).get_json()["id"]
    food = api.post("/accounts", json={"name": "Café ☕", "kind": "expense"}).get_json()["id"]
    posted = post_tx("2026-03-01", "Beans «fair»", (food, 450), (bank, -450))
    tx_id = posted.get_json()["id"]
    entries = stored_entries(app, tx_id)
    assert api.put("/settings", json={"book_style": "club"}).status_code == 200
    assert api.delete(f"/transactions/{tx_id}").status_code == 204

    items = all_events(api)
    assert [i["action"] for i in items] == [
        "account.created",
        "account.created",
        "transaction.posted",
        "settings.changed",
        "transaction.deleted",
    ]
    cli_name = client_name(app, "svc-cli")
    for item in items:
        assert item["user_email"] == "alice@example.com"
        assert item["via"] == "api"
        assert (item["client_id"], item["client_name"]) == ("svc-cli", cli_name)
        assert item["at"] == "2026-11-21T12:00:00Z"
    assert items[1]["object"] == {
        "account": {"id": food, "name": "Café ☕", "kind": "expense", "archived": False}
    }
    whole = {
        "transaction": {
            "id": tx_id,
            "occurred_on": "2026-03-01",
            "description": "Beans «fair»",
            "entries": entries,
        }
    }
    assert [e["amount_cents"] for e in entries] == [450, -450]
    assert items[2]["object"] == whole
    assert items[3]["object"] == {"settings": {"book_style": "club"}}
    assert items[4]["object"] == whole  # the deleted transaction, kept whole
    assert_chain(items)


def test_refused_changes_make_no_event(api, make_account, post_tx):
    bank = make_account("Bank", "asset")
    assert post_tx("2026-03-01", "unbalanced", (bank, 5), (bank, -4)).status_code == 400
    assert post_tx("2026-03-01", "ghost", (bank, 5), (999, -5)).status_code == 400
    assert api.post("/accounts", json={"name": "Bank", "kind": "asset"}).status_code == 400
    assert api.delete("/transactions/12345").status_code == 404
    assert api.put("/settings", json={"book_style": "odd"}).status_code == 422
    assert [i["action"] for i in all_events(api)] == ["account.created"]


def test_a_cookie_session_is_via_web_without_a_client(app, session_client, mint):
    browser = session_client(mfa_complete=True)
    assert browser.put("/settings", json={"book_style": "club"}).status_code == 200
    assert browser.post("/accounts", json={"name": "Bank", "kind": "asset"}).status_code == 201
    page = browser.get("/audit").get_json()
    assert [
        (i["action"], i["via"], i["user_email"], i["client_id"], i["client_name"])
        for i in reversed(page["items"])
    ] == [
        ("settings.changed", "web", "alice@example.com", None, None),
        ("account.created", "web", "alice@example.com", None, None),
    ]


def test_an_oauth_client_is_named_and_mcp_is_via_mcp(app, client, make_user):
    user_id = make_user()
    registered = client.post(
        "/oauth/register",
        json={"redirect_uris": ["http://127.0.0.1/cb"], "client_name": "Budget Bot"},
    ).get_json()
    with app.app_context():
        pair = tokens.issue_pair(user_id, registered["client_id"])
        store.commit()
    bot = ApiClient(client, pair["access_token"])
    bank = bot.post("/accounts", json={"name": "Bank", "kind": "asset"}).get_json()["id"]
    food = bot.post("/accounts", json={"name": "Food", "kind": "expense"}).get_json()["id"]
    result = Rpc(bot).result(
        "record_transaction",
        tx_body("2026-04-01", "by the assistant", (food, 100), (bank, -100)),
    )
    items = all_events(bot)
    assert [(i["action"], i["via"], i["client_id"], i["client_name"]) for i in items] == [
        ("account.created", "api", registered["client_id"], "Budget Bot"),
        ("account.created", "api", registered["client_id"], "Budget Bot"),
        ("transaction.posted", "mcp", registered["client_id"], "Budget Bot"),
    ]
    assert items[2]["object"]["transaction"]["id"] == result["id"]
    assert items[2]["object"]["transaction"]["entries"] == stored_entries(app, result["id"])
    assert_chain(items)


def test_cli_import_is_via_import_one_event_per_transaction(app, api, runner, tmp_path):
    journal = tmp_path / "books.journal"
    journal.write_text(
        "2026-01-02 Rent\n    expenses:Rent  500.00\n    assets:Bank  -500.00\n\n"
        "2026-01-03 Pay\n    assets:Bank  900.00\n    income:Salary  -900.00\n",
        encoding="utf-8",
    )
    result = runner.invoke(args=["import", str(journal), "--format", "hledger"])
    assert result.exit_code == 0, result.output
    items = all_events(api)
    assert sorted(i["action"] for i in items) == sorted(
        ["account.created"] * 3 + ["transaction.imported"] * 2
    )
    assert {(i["via"], i["user_email"], i["client_id"]) for i in items} == {("import", None, None)}
    imported = [i["object"]["transaction"] for i in items if i["action"] == "transaction.imported"]
    assert [t["description"] for t in imported] == ["Rent", "Pay"]
    for tx in imported:
        assert tx["entries"] == stored_entries(app, tx["id"])
    again = runner.invoke(args=["import", str(journal), "--format", "hledger"])
    assert again.exit_code == 0 and len(all_events(api)) == 5  # duplicates skipped: no event
    dry = runner.invoke(args=["import", str(journal), "--format", "hledger", "--dry-run"])
    assert dry.exit_code == 0 and len(all_events(api)) == 5
    assert_chain(all_events(api))


def test_paging_newest_first_with_cursor_filters_and_refusals(api, make_account, clock):
    for n in range(5):
        make_account(f"A{n}", "asset")
        clock.advance(days=1)  # at: 11-21 .. 11-25
    first = api.get("/audit?limit=2").get_json()
    assert [i["seq"] for i in first["items"]] == [5, 4]
    second = api.get(f"/audit?limit=2&cursor={first['next_cursor']}").get_json()
    assert [i["seq"] for i in second["items"]] == [3, 2]
    third = api.get(f"/audit?limit=2&cursor={second['next_cursor']}").get_json()
    assert [i["seq"] for i in third["items"]] == [1] and third["next_cursor"] is None

    window = api.get("/audit?from=2026-11-22&to=2026-11-23").get_json()
    assert [i["seq"] for i in window["items"]] == [3, 2]
    assert [i["at"][:10] for i in window["items"]] == ["2026-11-23", "2026-11-22"]
    by_action = api.get("/audit?action=account.created&limit=500").get_json()
    assert len(by_action["items"]) == 5
    assert api.get("/audit?action=transaction.posted").get_json() == {
        "items": [],
        "next_cursor": None,
    }

    for bad in ("0", "501", "ten", "-1", "2.5"):
        refused = api.get(f"/audit?limit={bad}")
        assert refused.status_code == 400 and "limit" in refused.get_json()["error"]
    for bad in ("nonsense", "YTEuMy5hYmM", first["next_cursor"] + "x"):
        refused = api.get(f"/audit?limit=2&cursor={bad}")
        assert refused.status_code == 400 and "cursor" in refused.get_json()["error"]
    # A cursor is tied to its filters: another listing's cursor is refused.
    other = api.get(f"/audit?limit=2&action=account.created&cursor={first['next_cursor']}")
    assert other.status_code == 400
    unknown = api.get("/audit?action=account.deleted")
    assert unknown.status_code == 400 and "action" in unknown.get_json()["error"]
    assert api.get("/audit?from=2026-13-01").status_code == 400
    assert api.get("/audit?from=2026-11-25&to=2026-11-01").status_code == 400


def test_head_names_the_newest_event_and_zero_before_any(api, make_account):
    assert api.get("/audit/head").get_json() == {"seq": 0, "hash": ZEROS}
    make_account("Bank", "asset")
    make_account("Cash", "asset")
    newest = api.get("/audit?limit=1").get_json()["items"][0]
    assert api.get("/audit/head").get_json() == {"seq": 2, "hash": newest["hash"]}


def test_audit_needs_the_full_tier(client, session_client):
    for path in ("/audit", "/audit/head"):
        assert client.get(path).status_code == 401
    half = session_client(mfa_complete=False)
    assert half.get("/audit").status_code == 401
    half.delete_cookie(SESSION_COOKIE, domain="localhost")


def test_concurrent_posts_give_gapless_seq_and_one_chain(app, api, make_account, dialect):
    """Writers in parallel threads (PostgreSQL really runs them at once)."""
    from concurrent.futures import ThreadPoolExecutor

    from app.services.ledger import transactions

    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")

    def post(n: int) -> int:
        with app.app_context(), store.writing():
            try:
                return store.run_unit(
                    transactions.record_transaction,
                    "2026-05-01",
                    f"parallel {n}",
                    [
                        {"account_id": food, "amount_cents": n + 1},
                        {"account_id": bank, "amount_cents": -(n + 1)},
                    ],
                    created_by=None,
                )
            finally:
                db.session.remove()

    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = list(pool.map(post, range(64)))
    items = all_events(api)
    assert len(items) == 2 + 64
    assert_chain(items)
    posted = [i["object"]["transaction"]["id"] for i in items[2:]]
    assert sorted(posted) == sorted(ids)


def test_odd_limits_and_forged_cursors_are_400_never_500(api, make_account):
    from app.services.ledger import cursors

    make_account("Bank", "asset")
    for bad in ("٣", "00000000000000000000001", "1e2", " 5"):
        assert api.get("/audit", query_string={"limit": bad}).status_code == 400
    # A cursor built with the (public) key for a seq beyond 64 bits: refused, not a 500.
    import base64
    import hmac

    seq = 10**30
    tag = hmac.new(cursors.SEQ_KEY, f"{seq}|||".encode(), hashlib.sha256).hexdigest()[:20]
    forged = base64.urlsafe_b64encode(f"a1.{seq}.{tag}".encode()).decode().rstrip("=")
    refused = api.get("/audit", query_string={"cursor": forged})
    assert refused.status_code == 400 and "cursor" in refused.get_json()["error"]
    assert api.get("/audit", query_string={"cursor": "é✓"}).status_code == 400


def test_any_description_and_amount_hash_alike_on_both_stores(app, api, make_account, post_tx):
    """The PostgreSQL fast path builds the event's JSON in the database: the served event
    must still be exactly the canonical JSON of the posting (escapes, non-ASCII, signs)."""
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    tricky = 'q"uote \\ back\nnew\ttab \x01 é ☕ 😀 \u2028 </script>'
    big = 2**62
    tx_id = post_tx("2026-12-31", tricky, (food, big), (bank, -big)).get_json()["id"]
    items = all_events(api)
    assert items[-1]["object"] == {
        "transaction": {
            "id": tx_id,
            "occurred_on": "2026-12-31",
            "description": tricky.strip(),
            "entries": stored_entries(app, tx_id),
        }
    }
    assert_chain(items)


def test_the_first_event_of_a_trail_without_a_head_row(app, api, post_tx):
    """Books whose accounts came in by SQL (no events, no head row yet): the first
    posting starts the chain at seq 1 (the head row is made on the way)."""
    with app.app_context(), db.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO accounts (id, name, kind, name_key)"
                " VALUES (1, 'A', 'asset', 'a'), (2, 'B', 'expense', 'b')"
            )
        )
    first = post_tx("2026-01-01", "first", (2, 5), (1, -5)).get_json()["id"]
    second = post_tx("2026-01-02", "second", (2, 6), (1, -6)).get_json()["id"]
    items = all_events(api)
    assert [i["object"]["transaction"]["id"] for i in items] == [first, second]
    assert_chain(items)
    assert api.get("/audit/head").get_json()["seq"] == 2


def test_an_empty_limit_is_400_naming_it(api):
    """`?limit=` is a limit that is not an integer, as on GET /transactions (it was
    served as if left out)."""
    response = api.get("/audit?limit=")
    assert response.status_code == 400
    assert "'limit'" in response.get_json()["error"]
