"""GET /accounts/{id}/register, cleared marks and reconciliation (docs/ledger.md "Books at
scale"), on both stores: running balances against a plain recomputation, paging, refusals."""

from __future__ import annotations

import threading

import pytest


@pytest.fixture
def card_books(make_account, post_tx):
    """A liability (card) with 12 entries over 5 days, several per day, plus a bank."""
    card = make_account("Visa", "liability")
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    amounts = [1200, 300, -500, 4500, 75, 990, -2000, 310, 45, 6000, 120, 999]
    for i, cents in enumerate(amounts):
        day = f"2026-0{1 + i % 3}-{10 + i // 3:02d}"  # not posted in date order
        r = post_tx(day, f"spend {i}", (food, cents), (card, -cents))
        assert r.status_code == 201
    post_tx("2026-01-15", "salary", (bank, 10000), (food, -10000))
    return {"card": card, "bank": bank, "food": food}


def expected_register(api, account_id, sign):
    """Every entry of the account from the plain listing, newest first, with balances."""
    entries = []
    for tx in api.get("/transactions").get_json():
        entries.extend(
            (tx["occurred_on"], tx["id"], e["amount_cents"], tx["description"])
            for e in tx["entries"]
            if e["account_id"] == account_id
        )
    entries.sort(key=lambda x: (x[0], x[1]))  # entry ids follow transaction ids here
    running, out = 0, []
    for day, tx_id, cents, description in entries:
        running += cents
        out.append((day, tx_id, cents, sign * running, description))
    return list(reversed(out))


def walk(api, account_id, limit, extra=""):
    items, cursor = [], None
    while True:
        url = f"/accounts/{account_id}/register?limit={limit}{extra}"
        body = api.get(url + (f"&cursor={cursor}" if cursor else "")).get_json()
        items.extend(body["items"])
        cursor = body["next_cursor"]
        if cursor is None:
            return items, body


@pytest.mark.parametrize("limit", [1, 5, 100])
def test_register_running_balances_are_sign_adjusted_on_every_page(api, card_books, limit):
    items, body = walk(api, card_books["card"], limit)
    expected = expected_register(api, card_books["card"], -1)
    got = [
        (
            i["occurred_on"],
            i["transaction_id"],
            i["amount_cents"],
            i["balance_cents"],
            i["description"],
        )
        for i in items
    ]
    assert got == expected
    assert body["account"] == {
        "id": card_books["card"],
        "name": "Visa",
        "kind": "liability",
        "archived": False,
    }
    assert body["balance_cents"] == expected[0][3]
    assert body["cleared_balance_cents"] == 0
    balances = {b["account"]: b["cents"] for b in api.get("/reports/balances").get_json()}
    assert body["balance_cents"] == balances["Visa"]
    assert all(i["cleared"] is False and i["reconciled"] is False for i in items)
    keys = [(i["occurred_on"], i["entry_id"]) for i in items]
    assert keys == sorted(keys, reverse=True)


def test_register_window_keeps_whole_history_balances(api, card_books):
    expected = expected_register(api, card_books["card"], -1)
    items, body = walk(api, card_books["card"], 2, "&from=2026-02-01&to=2026-02-28")
    inside = [e for e in expected if "2026-02-01" <= e[0] <= "2026-02-28"]
    assert [(i["occurred_on"], i["balance_cents"]) for i in items] == [(e[0], e[3]) for e in inside]
    assert body["balance_cents"] == expected[0][3]


def test_register_without_limit_gives_the_first_100(api, make_account, post_tx):
    bank = make_account("Bank", "asset")
    gift = make_account("Gifts", "income")
    for i in range(105):
        post_tx(f"2026-05-{1 + i % 28:02d}", f"g{i}", (bank, 1), (gift, -1))
    body = api.get(f"/accounts/{gift}/register").get_json()
    assert len(body["items"]) == 100 and body["next_cursor"] is not None
    assert body["balance_cents"] == 105 and body["items"][0]["balance_cents"] == 105
    rest = api.get(f"/accounts/{gift}/register?cursor={body['next_cursor']}").get_json()
    assert len(rest["items"]) == 5 and rest["next_cursor"] is None
    assert rest["items"][-1]["balance_cents"] == 1


def test_register_refusals(api, card_books):
    card = card_books["card"]
    assert api.get("/accounts/999/register").status_code == 404
    assert api.get("/accounts/999/register").get_json() == {"error": "no such account"}
    for beyond in (2**31, 2**63, 2**64):  # past the INTEGER id column, and past 64 bits
        r = api.get(f"/accounts/{beyond}/register")
        assert (r.status_code, r.get_json()) == (404, {"error": "no such account"}), beyond
    for query, word in [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("from=2026-02-30", "from"),
        ("to=1800-01-01", "to"),
        ("from=2026-03-01&to=2026-02-01", "to"),
        ("limit=5&cursor=nope", "cursor"),
    ]:
        r = api.get(f"/accounts/{card}/register?{query}")
        assert r.status_code == 400, query
        assert word in r.get_json()["error"]
    other = api.get(f"/accounts/{card_books['bank']}/register?limit=1").get_json()
    food = api.get(f"/accounts/{card_books['food']}/register?limit=1").get_json()
    assert (
        api.get(f"/accounts/{card}/register?limit=1&cursor={food['next_cursor']}").status_code
        == 400
    )
    assert other["next_cursor"] is None


def entry_ids(api, account_id):
    return [i["entry_id"] for i in api.get(f"/accounts/{account_id}/register").get_json()["items"]]


def test_clearing_and_reconciling_a_statement(api, card_books, post_tx):
    card = card_books["card"]
    items = api.get(f"/accounts/{card}/register").get_json()["items"]
    january = [i for i in items if i["occurred_on"] < "2026-02-01"]
    ids = [i["entry_id"] for i in january]
    r = api.post(f"/accounts/{card}/cleared", json={"entry_ids": ids, "cleared": True})
    assert r.status_code == 204 and r.data == b""
    body = api.get(f"/accounts/{card}/register").get_json()
    cleared_total = -sum(i["amount_cents"] for i in january)
    assert body["cleared_balance_cents"] == cleared_total
    assert {i["entry_id"] for i in body["items"] if i["cleared"]} == set(ids)

    wrong = api.post(
        f"/accounts/{card}/reconciliations",
        json={"statement_date": "2026-01-31", "closing_balance_cents": cleared_total + 25},
    )
    assert wrong.status_code == 409
    assert wrong.get_json()["difference_cents"] == 25 and wrong.get_json()["error"]
    assert not any(
        i["reconciled"] for i in api.get(f"/accounts/{card}/register").get_json()["items"]
    )

    ok = api.post(
        f"/accounts/{card}/reconciliations",
        json={"statement_date": "2026-01-31", "closing_balance_cents": cleared_total},
    )
    assert ok.status_code == 201
    assert ok.get_json() == {
        "statement_date": "2026-01-31",
        "closing_balance_cents": cleared_total,
        "entries": sorted(ids),
    }
    after = api.get(f"/accounts/{card}/register").get_json()["items"]
    assert {i["entry_id"] for i in after if i["reconciled"]} == set(ids)

    # A reconciled entry cannot be uncleared, nor its transaction deleted; nothing changes.
    r = api.post(f"/accounts/{card}/cleared", json={"entry_ids": [ids[0]], "cleared": False})
    assert r.status_code == 409 and "reconciled" in r.get_json()["error"]
    tx = january[0]["transaction_id"]
    r = api.delete(f"/transactions/{tx}")
    assert r.status_code == 409 and "reconciled" in r.get_json()["error"]
    assert any(t["id"] == tx for t in api.get("/transactions").get_json())
    # Reconciling the same statement again matches and adds nothing.
    again = api.post(
        f"/accounts/{card}/reconciliations",
        json={"statement_date": "2026-01-31", "closing_balance_cents": cleared_total},
    )
    assert again.status_code == 201 and again.get_json()["entries"] == []
    # An unreconciled transaction still deletes.
    feb = [i for i in after if i["occurred_on"] >= "2026-02-01"][0]["transaction_id"]
    assert api.delete(f"/transactions/{feb}").status_code == 204


def test_cleared_refusals_change_nothing(api, card_books):
    card, bank = card_books["card"], card_books["bank"]
    mine = entry_ids(api, card)[:2]
    foreign = entry_ids(api, bank)[0]
    r = api.post(f"/accounts/{card}/cleared", json={"entry_ids": mine + [foreign], "cleared": True})
    assert r.status_code == 400 and str(foreign) in r.get_json()["error"]
    r = api.post(f"/accounts/{card}/cleared", json={"entry_ids": mine + [987654], "cleared": True})
    assert r.status_code == 400
    for body, word in [
        ({"entry_ids": "1", "cleared": True}, "entry_ids"),
        ({"entry_ids": [1.5], "cleared": True}, "entry_ids"),
        ({"entry_ids": mine}, "cleared"),
        ({"entry_ids": mine, "cleared": "yes"}, "cleared"),
    ]:
        r = api.post(f"/accounts/{card}/cleared", json=body)
        assert r.status_code == 400 and word in r.get_json()["error"], body
    assert (
        api.post("/accounts/999/cleared", json={"entry_ids": [], "cleared": True}).status_code
        == 404
    )
    assert api.post(f"/accounts/{card}/cleared", data="x").status_code == 415
    assert api.get(f"/accounts/{card}/register").get_json()["cleared_balance_cents"] == 0


def test_reconciliation_refusals(api, card_books):
    card = card_books["card"]
    url = f"/accounts/{card}/reconciliations"
    for body, word in [
        ({"closing_balance_cents": 0}, "statement_date"),
        ({"statement_date": "2026-01-31"}, "closing_balance_cents"),
        ({"statement_date": "31/01/2026", "closing_balance_cents": 0}, "statement_date"),
        ({"statement_date": "0202-01-31", "closing_balance_cents": 0}, "statement_date"),
        ({"statement_date": "2026-01-31", "closing_balance_cents": 1.0}, "closing_balance_cents"),
        ({"statement_date": "2026-01-31", "closing_balance_cents": "5"}, "closing_balance_cents"),
    ]:
        r = api.post(url, json=body)
        assert r.status_code == 400 and word in r.get_json()["error"], body
    assert (
        api.post(
            "/accounts/999/reconciliations",
            json={"statement_date": "2026-01-31", "closing_balance_cents": 0},
        ).status_code
        == 404
    )
    # Nothing cleared: a zero statement matches and reconciles nothing.
    r = api.post(url, json={"statement_date": "2026-01-31", "closing_balance_cents": 0})
    assert r.status_code == 201 and r.get_json()["entries"] == []


def test_deleting_while_reconciling_never_loses_a_counted_entry(app, api, card_books):
    """A deletion racing a reconciliation: either the deletion is refused (409), or the
    reconciliation did not count the deleted entry; the reconciled figure always holds."""
    card = card_books["card"]
    items = api.get(f"/accounts/{card}/register").get_json()["items"]
    ids = [i["entry_id"] for i in items]
    api.post(f"/accounts/{card}/cleared", json={"entry_ids": ids, "cleared": True})
    total = api.get(f"/accounts/{card}/register").get_json()["cleared_balance_cents"]
    victim = items[0]
    barrier = threading.Barrier(2)
    results = {}
    headers = {"Authorization": f"Bearer {api.token}"}

    def reconcile():
        client = app.test_client()
        barrier.wait()
        results["rec"] = client.post(
            f"/accounts/{card}/reconciliations",
            headers=headers,
            json={"statement_date": "2026-12-31", "closing_balance_cents": total},
        ).status_code

    def delete():
        client = app.test_client()
        barrier.wait()
        results["del"] = client.delete(
            f"/transactions/{victim['transaction_id']}", headers=headers
        ).status_code

    threads = [threading.Thread(target=reconcile), threading.Thread(target=delete)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(results.values()) in ([201, 409], [204, 409])
    body = api.get(f"/accounts/{card}/register").get_json()
    reconciled = [i for i in body["items"] if i["reconciled"]]
    if results["rec"] == 201:
        assert results["del"] == 409
        assert -sum(i["amount_cents"] for i in reconciled) == total
    else:
        assert results["del"] == 204 and reconciled == []


@pytest.mark.parametrize("limit", [1, 2, 3, 7])
def test_register_pages_over_days_emptied_by_deletions(api, make_account, post_tx, limit):
    """Deleted postings leave day rows of 0 with no entries: pages still hold every entry."""
    bank = make_account("Bank", "asset")
    gift = make_account("Gifts", "income")
    ids = []
    for i in range(40):
        r = post_tx(f"2026-02-{1 + i % 20:02d}", f"g{i}", (bank, 10 + i), (gift, -(10 + i)))
        ids.append(r.get_json()["id"])
    for i, tx_id in enumerate(ids):
        if i % 20 in (3, 4, 5, 6, 7, 8, 9, 10, 15):  # whole days emptied
            assert api.delete(f"/transactions/{tx_id}").status_code == 204
    items, _ = walk(api, bank, limit)
    expected = expected_register(api, bank, 1)
    assert [(i["transaction_id"], i["balance_cents"]) for i in items] == [
        (e[1], e[3]) for e in expected
    ]


@pytest.fixture
def mixed_books(make_account, post_tx):
    """Cash (asset): a busy day of 9 entries, a day whose two entries net to 0, two
    entries years back (its active days run out long before the ledger's), and other
    accounts' postings on days in between, some of them back-dated."""
    cash = make_account("Cash", "asset")
    shop = make_account("Shop", "expense")
    pay = make_account("Pay", "income")
    postings = [("1999-12-31", 4000), ("2019-06-15", -250)]
    postings += [("2026-03-03", 100 + i) for i in range(9)]
    postings += [("2026-03-02", 700), ("2026-03-02", -700), ("2026-03-04", 55)]
    for i, (day, cents) in enumerate(postings):
        assert post_tx(day, f"cash {i}", (cash, cents), (shop, -cents)).status_code == 201
        other = f"20{10 + i % 16:02d}-0{1 + i % 9}-1{i % 10}"
        assert post_tx(other, f"other {i}", (shop, 3), (pay, -3)).status_code == 201
    return {"cash": cash, "shop": shop}


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 6, 9, 50])
def test_register_pages_through_busy_days_zero_days_and_a_sparse_past(api, mixed_books, limit):
    cash = mixed_books["cash"]
    expected = expected_register(api, cash, 1)
    items, body = walk(api, cash, limit)
    assert [(i["occurred_on"], i["transaction_id"], i["balance_cents"]) for i in items] == [
        (e[0], e[1], e[3]) for e in expected
    ]
    assert body["balance_cents"] == expected[0][3]
    # A window that starts on the sparse past and ends on the day that nets to 0.
    window = "&from=2019-01-01&to=2026-03-02"
    items, body = walk(api, cash, limit, window)
    inside = [e for e in expected if "2019-01-01" <= e[0] <= "2026-03-02"]
    assert [(i["transaction_id"], i["balance_cents"]) for i in items] == [
        (e[1], e[3]) for e in inside
    ]
    assert body["balance_cents"] == expected[0][3]


def test_register_cleared_balance_and_marks_on_every_page(api, mixed_books):
    cash = mixed_books["cash"]
    items, _ = walk(api, cash, 50)
    chosen = [i for i in items if i["occurred_on"] in ("2026-03-03", "2026-03-02", "1999-12-31")]
    chosen = chosen[::2]
    r = api.post(
        f"/accounts/{cash}/cleared",
        json={"entry_ids": [i["entry_id"] for i in chosen], "cleared": True},
    )
    assert r.status_code == 204
    cleared_ids = {i["entry_id"] for i in chosen}
    want = sum(i["amount_cents"] for i in chosen)
    assert want != 0
    for limit in (1, 4, 50):
        items, cursor = [], None
        while True:
            query = f"/accounts/{cash}/register?limit={limit}"
            body = api.get(query + (f"&cursor={cursor}" if cursor else "")).get_json()
            assert body["cleared_balance_cents"] == want
            items.extend(body["items"])
            cursor = body["next_cursor"]
            if cursor is None:
                break
        assert {i["entry_id"] for i in items if i["cleared"]} == cleared_ids
        assert not any(i["reconciled"] for i in items)
    # The marks are the account's own: the other side of those postings stays uncleared.
    shop_body = api.get(f"/accounts/{mixed_books['shop']}/register?limit=1").get_json()
    assert shop_body["cleared_balance_cents"] == 0


@pytest.mark.parametrize("limit", [1, 50])
def test_cleared_through_is_the_cleared_balance_up_to_to(api, card_books, limit):
    """cleared_through_cents: the cleared entries dated on or before `to` (issue 47: the
    register page reconciles against it instead of reading every later entry), signed
    as the account's figures, the whole cleared balance without `to`, on any page."""
    card = card_books["card"]
    items = api.get(f"/accounts/{card}/register").get_json()["items"]
    # Clear every other entry, on both sides of the cut (2026-02-11).
    chosen = items[::2]
    r = api.post(
        f"/accounts/{card}/cleared",
        json={"entry_ids": [i["entry_id"] for i in chosen], "cleared": True},
    )
    assert r.status_code == 204
    for to in ("2026-01-09", "2026-02-11", "2026-02-12", "2026-03-13", "2027-01-01"):
        # A liability: stored amounts negated.
        want = -sum(i["amount_cents"] for i in chosen if i["occurred_on"] <= to)
        body = api.get(f"/accounts/{card}/register?to={to}&limit={limit}").get_json()
        assert body["cleared_through_cents"] == want, to
        assert body["cleared_balance_cents"] == -sum(i["amount_cents"] for i in chosen)
        if to >= "2026-02-01":
            with_from = api.get(f"/accounts/{card}/register?from=2026-02-01&to={to}")
            assert with_from.get_json()["cleared_through_cents"] == want, to  # not cut by from
    whole = api.get(f"/accounts/{card}/register?limit={limit}").get_json()
    assert whole["cleared_through_cents"] == whole["cleared_balance_cents"] != 0
    assert (
        api.get(f"/accounts/{card_books['bank']}/register?to=2026-01-31").get_json()[
            "cleared_through_cents"
        ]
        == 0
    )


@pytest.mark.parametrize("limit", [5, 50])
def test_a_sparse_accounts_page_is_read_in_one_span_statement(
    api, make_account, post_tx, sql_sent, limit
):
    """Issue 47: however sparse the account (here one entry every 9 days among a busy
    account's daily entries), a page's entries come from one statement over spans of
    growing size, after one statement for the days: no round trip per span. The page
    is the same as the plain recomputation's."""
    sparse = make_account("Savings", "asset")
    busy = make_account("Cash", "asset")
    food = make_account("Food", "expense")
    for i in range(90):
        day = f"2025-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}"
        assert post_tx(day, f"coffee {i}", (food, 300 + i), (busy, -300 - i)).status_code == 201
        if i % 9 == 0:
            assert (
                post_tx(day, f"save {i}", (sparse, 1000 + i), (busy, -1000 - i)).status_code == 201
            )
    sql_sent.clear()
    body = api.get(f"/accounts/{sparse}/register?limit={limit}").get_json()
    reads = [
        s
        for s in sql_sent
        if "ORDER BY t.occurred_on DESC, e.id DESC" in s
        or "row_number() OVER" in s  # the days (not the figures' days before the top)
    ]
    assert len(reads) == 2, reads  # the days, then the entries of every span needed
    want = expected_register(api, sparse, 1)
    got = [(i["occurred_on"], i["transaction_id"], i["amount_cents"]) for i in body["items"]]
    assert got == [(d, t, c) for d, t, c, _b, _desc in want[:limit]]
    assert [i["balance_cents"] for i in body["items"]] == [b for *_x, b, _d in want[:limit]]
    assert (body["next_cursor"] is None) == (len(want) <= limit)


def test_the_first_pages_balances_come_with_its_days_on_postgresql(
    api, dialect, card_books, sql_sent
):
    """Issue 47: the first page of a register (no `to`, no cursor) starts at the
    account's newest entry, whose running balance is the whole balance, so on
    PostgreSQL the whole and cleared balances come with the days' statement and no
    figures statement follows the entries: account, days, entries. The answer is the
    plain recomputation's; a page with `to` or a cursor still reads its figures."""
    card = card_books["card"]
    marked = {"entry_ids": entry_ids(api, card)[1:3], "cleared": True}
    assert api.post(f"/accounts/{card}/cleared", json=marked).status_code == 204
    sql_sent.clear()
    body = api.get(f"/accounts/{card}/register?limit=2").get_json()
    ledger = [s for s in sql_sent if "account_day_balances" in s or "e.amount_cents" in s]
    want = expected_register(api, card, -1)
    assert [(i["transaction_id"], i["balance_cents"]) for i in body["items"]] == [
        (t, b) for _d, t, _c, b, _desc in want[:2]
    ]
    assert body["balance_cents"] == want[0][3]
    if dialect == "postgresql":
        assert len(ledger) == 2 and "account_month_balances" in ledger[0], ledger
    sql_sent.clear()
    rest = api.get(f"/accounts/{card}/register?limit=2&cursor={body['next_cursor']}").get_json()
    assert [i["balance_cents"] for i in rest["items"]] == [b for *_x, b, _d in want[2:4]]
    assert any("m.before" in s for s in sql_sent)  # the figures' own statement
    for key in ("balance_cents", "cleared_balance_cents", "cleared_through_cents"):
        assert body[key] == rest[key], key
    assert body["cleared_balance_cents"] != 0
