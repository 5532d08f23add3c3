"""GET /transactions and list_transactions: filters, keyset paging, the cursor's rules
(docs/ledger.md "Books at scale"). Every test runs on SQLite and PostgreSQL."""

from __future__ import annotations

import threading

import pytest


@pytest.fixture
def books(make_account, post_tx):
    """30 transactions over 10 days (3 a day), two accounts each; amounts 100..129."""
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    fun = make_account("Fun", "expense")
    ids = []
    for i in range(30):
        day = f"2026-03-{1 + i // 3:02d}"
        target = food if i % 2 else fun
        words = ["Äpfel vom Markt", "STRASSE fee", "coffee"][i % 3]
        r = post_tx(day, f"{words} #{i}", (target, 100 + i), (bank, -(100 + i)))
        assert r.status_code == 201, r.get_json()
        ids.append(r.get_json()["id"])
    return {"bank": bank, "food": food, "fun": fun, "ids": ids}


def order_key(tx):
    return (tx["occurred_on"], tx["id"])


def all_pages(api, query: str, limit: int, marks: dict | None = None):
    """Every page's items as SPEC's transactions, and how many pages; each item's
    reconciled_account_ids go into marks (without marks: they must be empty)."""
    seen, cursor, pages = [], None, 0
    while True:
        url = f"/transactions?limit={limit}{query}" + (f"&cursor={cursor}" if cursor else "")
        r = api.get(url)
        assert r.status_code == 200, r.get_json()
        body = r.get_json()
        assert set(body) == {"items", "next_cursor"}
        assert len(body["items"]) <= limit
        # A page's items are SPEC's transactions plus document_count (no receipts here).
        assert all(item.pop("document_count") == 0 for item in body["items"])
        for item in body["items"]:
            reconciled = item.pop("reconciled_account_ids")
            if marks is None:
                assert reconciled == []
            else:
                marks[item["id"]] = reconciled
        seen.extend(body["items"])
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            return seen, pages


def test_without_limit_the_answer_is_specs_array(api, books):
    r = api.get("/transactions")
    assert r.status_code == 200
    body = r.get_json()
    assert isinstance(body, list) and len(body) == 30
    assert body == sorted(body, key=order_key, reverse=True)


def test_pages_walk_the_whole_listing_in_order(api, books):
    whole = api.get("/transactions").get_json()
    paged, pages = all_pages(api, "", 7)
    assert paged == whole
    assert pages == 5  # 7+7+7+7+2


def test_last_page_exactly_full_has_null_cursor(api, books):
    body = api.get("/transactions?limit=30").get_json()
    assert len(body["items"]) == 30 and body["next_cursor"] is None
    body = api.get("/transactions?limit=500").get_json()
    assert len(body["items"]) == 30 and body["next_cursor"] is None


@pytest.mark.parametrize("limit", ["0", "501", "-1", "ten", "1.5", "", " 5"])
def test_limit_outside_1_to_500_is_refused(api, books, limit):
    r = api.get(f"/transactions?limit={limit}")
    assert r.status_code == 400  # an empty value too: present, but not an integer
    assert "limit" in r.get_json()["error"]


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage",
        "c1.abc.def",
        "c2.WyJ0cmFuc2FjdGlvbnMiXQ.AAAA",
        "c1.WyJ0cmFuc2FjdGlvbnMiLCJ4IiwiMjAyNi0wMS0wMSIsMV0.AAAAAAAAAAAAAAAA",
        "x" * 600,
    ],
)
def test_a_cursor_the_service_did_not_issue_is_400(api, books, cursor):
    r = api.get(f"/transactions?limit=5&cursor={cursor}")
    assert r.status_code == 400
    assert "cursor" in r.get_json()["error"]


def test_an_edited_cursor_is_refused(api, books):
    cursor = api.get("/transactions?limit=5").get_json()["next_cursor"]
    version, body, check = cursor.split(".")
    tampered = ".".join([version, body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1], check])
    r = api.get(f"/transactions?limit=5&cursor={tampered}")
    assert r.status_code == 400 and "cursor" in r.get_json()["error"]


def test_a_cursor_is_bound_to_its_filters(api, books):
    cursor = api.get("/transactions?limit=5&q=coffee").get_json()["next_cursor"]
    assert api.get(f"/transactions?limit=5&q=coffee&cursor={cursor}").status_code == 200
    r = api.get(f"/transactions?limit=5&q=fee&cursor={cursor}")
    assert r.status_code == 400 and "cursor" in r.get_json()["error"]
    # A register's cursor is not a listing's either.
    reg = api.get(f"/accounts/{books['bank']}/register?limit=5").get_json()["next_cursor"]
    assert api.get(f"/transactions?limit=5&cursor={reg}").status_code == 400
    assert api.get(f"/accounts/{books['bank']}/register?limit=5&cursor={cursor}").status_code == 400


def test_cursor_without_limit_is_refused(api, books):
    cursor = api.get("/transactions?limit=5").get_json()["next_cursor"]
    r = api.get(f"/transactions?cursor={cursor}")
    assert r.status_code == 400 and "cursor" in r.get_json()["error"]


def test_q_is_a_case_insensitive_substring_beyond_ascii(api, books):
    found = api.get("/transactions?q=ÄPFEL").get_json()
    assert len(found) == 10 and all("Äpfel" in t["description"] for t in found)
    assert len(api.get("/transactions?q=äpfel vom").get_json()) == 10
    assert len(api.get("/transactions?q=strasse").get_json()) == 10
    assert api.get("/transactions?q=%25").get_json() == []  # no LIKE wildcards
    assert api.get("/transactions?q=_").get_json() == []
    assert [t["id"] for t in api.get("/transactions?q=%2329").get_json()] == [books["ids"][29]]


def test_account_and_amount_filters_combine_with_and(api, books):
    food = api.get(f"/transactions?account_id={books['food']}").get_json()
    assert len(food) == 15
    assert all(any(e["account_id"] == books["food"] for e in t["entries"]) for t in food)
    ranged = api.get("/transactions?min_cents=110&max_cents=119").get_json()
    assert sorted(t["id"] for t in ranged) == books["ids"][10:20]
    both = api.get(
        f"/transactions?account_id={books['food']}&min_cents=110&max_cents=119&q=coffee"
        "&from=2026-03-01&to=2026-03-06"
    ).get_json()
    expected = [
        tx_id
        for i, tx_id in enumerate(books["ids"])
        if i % 2 and 110 <= 100 + i <= 119 and i % 3 == 2 and 1 + i // 3 <= 6
    ]
    assert sorted(t["id"] for t in both) == expected
    assert api.get("/transactions?account_id=999999").get_json() == []
    assert api.get("/transactions?account_id=99999999999").get_json() == []


def test_filtered_pages_equal_the_filtered_list(api, books):
    query = f"&account_id={books['bank']}&min_cents=105&q=e"
    whole = api.get("/transactions?" + query[1:]).get_json()
    paged, _ = all_pages(api, query, 4)
    assert paged == whole and len(whole) > 8


@pytest.mark.parametrize(
    "param,value",
    [
        ("min_cents", "1.5"),
        ("max_cents", "abc"),
        ("account_id", "x"),
        ("min_cents", "99999999999999999999"),
        ("from", "2026-13-01"),
        ("to", "yesterday"),
        ("from", "1899-12-31"),
        ("to", "2201-01-01"),
    ],
)
def test_malformed_values_are_400_naming_the_parameter(api, books, param, value):
    for query in (f"{param}={value}", f"{param}={value}&limit=5"):
        r = api.get(f"/transactions?{query}")
        assert r.status_code == 400, query
        assert f"'{param}'" in r.get_json()["error"]


def test_max_below_min_is_refused(api, books):
    r = api.get("/transactions?min_cents=10&max_cents=5")
    assert r.status_code == 400 and "max_cents" in r.get_json()["error"]


def test_posting_and_deleting_between_pages_never_repeats_or_loses_a_row(api, books, post_tx):
    first = api.get("/transactions?limit=10").get_json()
    seen = [t["id"] for t in first["items"]]
    # A newer posting, one dated inside the unread part, and a deletion of an unread one
    # and of an already seen one.
    post_tx("2026-04-01", "newest", (books["food"], 1), (books["bank"], -1))
    inside = post_tx("2026-03-02", "back-dated", (books["food"], 2), (books["bank"], -2))
    unread_deleted = books["ids"][5]
    assert api.delete(f"/transactions/{unread_deleted}").status_code == 204
    assert api.delete(f"/transactions/{seen[0]}").status_code == 204
    cursor = first["next_cursor"]
    while cursor:
        body = api.get(f"/transactions?limit=10&cursor={cursor}").get_json()
        seen.extend(t["id"] for t in body["items"])
        cursor = body["next_cursor"]
    assert len(seen) == len(set(seen))
    expected_rest = set(books["ids"]) - set(seen[:10]) - {unread_deleted}
    expected_rest.add(inside.get_json()["id"])
    assert set(seen[10:]) == expected_rest


def test_paging_while_another_thread_posts_and_deletes(app, api, books, post_tx):
    stop = threading.Event()
    errors = []

    def churn():
        client = app.test_client()
        headers = {"Authorization": f"Bearer {api.token}"}
        i = 0
        while not stop.is_set() and i < 40:
            r = client.post(
                "/transactions",
                headers=headers,
                json={
                    "occurred_on": f"2026-03-{1 + i % 10:02d}",
                    "description": f"churn {i}",
                    "entries": [
                        {"account_id": books["food"], "amount_cents": 7},
                        {"account_id": books["bank"], "amount_cents": -7},
                    ],
                },
            )
            if r.status_code != 201:
                errors.append(r.get_json())
            elif i % 2:
                client.delete(f"/transactions/{r.get_json()['id']}", headers=headers)
            i += 1

    worker = threading.Thread(target=churn)
    worker.start()
    try:
        seen, cursor = [], None
        while True:
            url = "/transactions?limit=3" + (f"&cursor={cursor}" if cursor else "")
            body = api.get(url).get_json()
            seen.extend(body["items"])
            cursor = body["next_cursor"]
            if cursor is None:
                break
    finally:
        stop.set()
        worker.join(timeout=60)
    assert errors == []
    keys = [order_key(t) for t in seen]
    assert keys == sorted(keys, reverse=True) and len(set(keys)) == len(keys)
    # Every transaction that existed throughout is there exactly once.
    assert set(books["ids"]) <= {t["id"] for t in seen}


def test_mcp_list_transactions_pages_and_filters_like_http(api, rpc, books):
    assert rpc.result("list_transactions") == api.get("/transactions").get_json()
    page = rpc.result("list_transactions", {"limit": 4, "q": "äpfel"})
    assert page == api.get("/transactions?limit=4&q=äpfel").get_json()
    nxt = rpc.result("list_transactions", {"limit": 4, "q": "äpfel", "cursor": page["next_cursor"]})
    http_next = api.get(f"/transactions?limit=4&q=äpfel&cursor={page['next_cursor']}").get_json()
    assert nxt == http_next
    filtered = rpc.result(
        "list_transactions", {"account_id": books["food"], "min_cents": 110, "max_cents": 120}
    )
    assert (
        filtered
        == api.get(
            f"/transactions?account_id={books['food']}&min_cents=110&max_cents=120"
        ).get_json()
    )


@pytest.mark.parametrize(
    "arguments,word",
    [
        ({"limit": 0}, "limit"),
        ({"limit": 501}, "limit"),
        ({"limit": "many"}, "limit"),
        ({"limit": 5, "cursor": "nope"}, "cursor"),
        ({"min_cents": 1.5}, "min_cents"),
        ({"account_id": True}, "account_id"),
        ({"from": "0202-01-01"}, "from"),
    ],
)
def test_mcp_refuses_what_http_refuses_with_the_same_words(api, rpc, books, arguments, word):
    reply = rpc.call("list_transactions", arguments)
    assert reply["error"]["code"] == -32602
    query = "&".join(f"{k}={v}" for k, v in arguments.items() if not isinstance(v, bool))
    if not any(isinstance(v, (bool, float)) for v in arguments.values()):
        http = api.get(f"/transactions?{query}").get_json()["error"]
        assert reply["error"]["message"].endswith(http)
    assert word in reply["error"]["message"]


def test_mcp_paged_listing_is_identical_in_the_2026_revision(rpc, books):
    old = rpc.call("list_transactions", {"limit": 3, "q": "coffee"})["result"]
    new = rpc.call_2026("list_transactions", {"limit": 3, "q": "coffee"})["result"]
    assert new["structuredContent"] == old["structuredContent"]
    assert new["content"] == old["content"]
    schema = next(
        t for t in rpc.request("tools/list")["result"]["tools"] if t["name"] == "list_transactions"
    )
    assert {"limit", "cursor", "q", "account_id", "min_cents", "max_cents", "from", "to"} == set(
        schema["inputSchema"]["properties"]
    )


@pytest.mark.parametrize("name", ["min_cents", "max_cents", "account_id"])
def test_an_empty_integer_filter_is_refused_naming_it(api, books, name):
    r = api.get(f"/transactions?{name}=")
    assert r.status_code == 400
    assert name in r.get_json()["error"]


def test_a_page_names_each_transactions_reconciled_accounts(api, make_account, post_tx):
    """reconciled_account_ids (issue 47): on every page, the accounts whose entry in the
    transaction is reconciled, ascending; empty otherwise; never in SPEC's plain array."""
    bank = make_account("Bank", "asset")
    card = make_account("Card", "liability")
    food = make_account("Food", "expense")
    paid = post_tx("2026-01-05", "card paid", (card, 5000), (bank, -5000)).get_json()["id"]
    lunch = post_tx("2026-01-06", "lunch", (food, 1200), (card, -1200)).get_json()["id"]
    later = post_tx("2026-02-06", "dinner", (food, 800), (card, -800)).get_json()["id"]
    for account, through in ((bank, "2026-01-31"), (card, "2026-01-31")):
        register = api.get(f"/accounts/{account}/register?to={through}").get_json()
        ids = [i["entry_id"] for i in register["items"]]
        assert (
            api.post(
                f"/accounts/{account}/cleared", json={"entry_ids": ids, "cleared": True}
            ).status_code
            == 204
        )
        closing = api.get(f"/accounts/{account}/register?to={through}").get_json()
        r = api.post(
            f"/accounts/{account}/reconciliations",
            json={
                "statement_date": through,
                "closing_balance_cents": closing["cleared_through_cents"],
            },
        )
        assert r.status_code == 201, r.get_json()
    want = {paid: sorted([bank, card]), lunch: [card], later: []}
    for limit in (1, 3):
        marks: dict = {}
        all_pages(api, "", limit, marks)
        assert marks == want
    filtered = api.get(f"/transactions?limit=5&account_id={food}").get_json()["items"]
    assert {tx["id"]: tx["reconciled_account_ids"] for tx in filtered} == {
        lunch: [card],
        later: [],
    }
    assert all("reconciled_account_ids" not in tx for tx in api.get("/transactions").get_json())
