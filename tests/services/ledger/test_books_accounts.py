"""PUT /accounts/{id}: rename and archive; names unique after normalisation; archived
accounts refuse new entries on every path (docs/ledger.md "Books at scale")."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text

from app import store
from app.extensions import db
from app.services.errors import ServiceError
from app.services.interchange import importer


def test_rename_and_archive_answer_the_account(api, make_account):
    bank = make_account("Bank", "asset")
    r = api.put(f"/accounts/{bank}", json={"name": "  Main   bank "})
    assert r.status_code == 200
    assert r.get_json() == {"id": bank, "name": "Main   bank", "kind": "asset", "archived": False}
    r = api.put(f"/accounts/{bank}", json={"archived": True})
    assert r.get_json() == {"id": bank, "name": "Main   bank", "kind": "asset", "archived": True}
    assert api.get("/accounts").get_json() == [r.get_json()]
    r = api.put(f"/accounts/{bank}", json={"archived": False, "kind": "asset"})
    assert r.status_code == 200 and r.get_json()["archived"] is False
    # An empty body changes nothing.
    assert api.put(f"/accounts/{bank}", json={}).get_json() == r.get_json()


@pytest.mark.parametrize("clash", ["cash box", "CASH BOX", "  Cash   box ", "cash\tbox"])
def test_names_equal_after_normalising_are_duplicates_in_put_and_post(api, make_account, clash):
    make_account("Cash box", "asset")
    other = make_account("Till", "asset")
    r = api.post("/accounts", json={"name": clash, "kind": "expense"})
    assert r.status_code == 400 and "already exists" in r.get_json()["error"]
    r = api.put(f"/accounts/{other}", json={"name": clash})
    assert r.status_code == 400 and "Cash box" in r.get_json()["error"]
    assert [a["name"] for a in api.get("/accounts").get_json()] == ["Cash box", "Till"]


def test_an_account_may_change_the_case_of_its_own_name(api, make_account):
    box = make_account("cash box", "asset")
    r = api.put(f"/accounts/{box}", json={"name": "Cash Box"})
    assert r.status_code == 200 and r.get_json()["name"] == "Cash Box"


def test_casefolding_goes_beyond_ascii(api, make_account):
    make_account("Straße", "expense")
    assert api.post("/accounts", json={"name": "STRASSE", "kind": "expense"}).status_code == 400
    make_account("Äpfel", "expense")
    assert api.post("/accounts", json={"name": "äpfel", "kind": "expense"}).status_code == 400


@pytest.mark.parametrize(
    "body,word",
    [
        ({"kind": "liability"}, "kind"),
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),
        ({"name": 5}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"archived": "yes"}, "archived"),
        ({"archived": 1}, "archived"),
    ],
)
def test_bad_bodies_are_400_and_change_nothing(api, make_account, body, word):
    bank = make_account("Bank", "asset")
    r = api.put(f"/accounts/{bank}", json=body)
    assert r.status_code == 400 and word in r.get_json()["error"]
    assert api.get("/accounts").get_json() == [
        {"id": bank, "name": "Bank", "kind": "asset", "archived": False}
    ]


def test_put_refusals_unknown_account_and_not_json(api, make_account):
    bank = make_account("Bank", "asset")
    assert api.put("/accounts/999", json={"name": "X"}).status_code == 404
    assert api.put("/accounts/99999999999999", json={"name": "X"}).status_code == 404
    assert api.put(f"/accounts/{bank}", data="name=X").status_code == 415
    r = api.put(f"/accounts/{bank}", data="[1]", headers={"Content-Type": "application/json"})
    assert r.status_code == 400


def test_archived_account_refuses_entries_on_http_and_mcp_but_keeps_history(
    api, rpc, make_account, post_tx
):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    assert post_tx("2026-01-02", "lunch", (food, 500), (bank, -500)).status_code == 201
    api.put(f"/accounts/{food}", json={"archived": True})
    r = post_tx("2026-01-03", "dinner", (food, 700), (bank, -700))
    assert r.status_code == 400
    assert r.get_json() == {"error": f"account_id {food} is archived and takes no new entries"}
    unknown = post_tx("2026-01-03", "dinner", (999, 700), (bank, -700))
    assert unknown.status_code == 400 and "account_id 999" in unknown.get_json()["error"]
    reply = rpc.call(
        "record_transaction",
        {
            "occurred_on": "2026-01-03",
            "description": "dinner",
            "entries": [
                {"account_id": food, "amount_cents": 700},
                {"account_id": bank, "amount_cents": -700},
            ],
        },
    )
    assert reply["error"]["code"] == -32602
    assert reply["error"]["message"].endswith(r.get_json()["error"])
    assert len(api.get("/transactions").get_json()) == 1
    assert {"account": "Food", "cents": 500} in api.get("/reports/balances").get_json()
    register = api.get(f"/accounts/{food}/register").get_json()
    assert [i["amount_cents"] for i in register["items"]] == [500]
    # Opened again, it takes entries.
    api.put(f"/accounts/{food}", json={"archived": False})
    assert post_tx("2026-01-03", "dinner", (food, 700), (bank, -700)).status_code == 201


def test_import_into_an_archived_account_names_the_line(app, api, make_account):
    bank = make_account("Bank", "asset")
    make_account("Food", "expense")
    api.put(f"/accounts/{bank}", json={"archived": True})
    journal = "2026-01-05 shop\n    expenses:Food   5.00\n    assets:Bank\n"
    with app.app_context():
        with pytest.raises(ServiceError) as info:
            importer.import_text(journal, "hledger")
        store.rollback()
    assert info.value.message.startswith("line 1: ") and "archived" in info.value.message
    assert api.get("/transactions").get_json() == []


def test_parallel_renames_to_one_normalised_name_exactly_one_wins(app, api, make_account):
    ids = [make_account(f"Account {i}", "asset") for i in range(6)]
    barrier = threading.Barrier(len(ids))
    statuses: dict[int, int] = {}

    def rename(account_id: int, n: int):
        client = app.test_client()
        barrier.wait()
        r = client.put(
            f"/accounts/{account_id}",
            headers={"Authorization": f"Bearer {api.token}"},
            json={"name": ["petty cash", "Petty Cash", "PETTY  cash"][n % 3]},
        )
        statuses[account_id] = r.status_code

    threads = [threading.Thread(target=rename, args=(a, n)) for n, a in enumerate(ids)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(statuses.values()) == [200] + [400] * 5
    names = [a["name"].casefold() for a in api.get("/accounts").get_json()]
    assert sum(" ".join(n.split()) == "petty cash" for n in names) == 1


def test_parallel_creates_of_one_normalised_name_exactly_one_wins(app, api):
    barrier = threading.Barrier(5)
    statuses = []

    def create(n: int):
        client = app.test_client()
        barrier.wait()
        r = client.post(
            "/accounts",
            headers={"Authorization": f"Bearer {api.token}"},
            json={"name": "Cash Box" if n % 2 else "cash  box", "kind": "asset"},
        )
        statuses.append(r.status_code)

    threads = [threading.Thread(target=create, args=(n,)) for n in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(statuses) == [201, 400, 400, 400, 400]


@pytest.mark.slow  # a new database migrated up from an old revision: seconds (README)
def test_migration_keeps_near_duplicates_that_were_stored_before(scratch_database_url):
    """Books from before 0009 may hold "cash box" and "Cash box": the upgrade succeeds."""
    from flask_migrate import downgrade, upgrade

    from app import create_app

    app = create_app({"DATABASE_URL": scratch_database_url, "TESTING": True})
    with app.app_context():
        store.write_intent.set(True)
        upgrade(revision="0005_device_starts")
        with db.engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO accounts (id, name, kind) VALUES"
                    " (1, 'Cash box', 'asset'), (2, 'cash  box', 'asset'), (3, 'Bank', 'asset')"
                )
            )
        upgrade()
        with db.engine.begin() as conn:
            rows = conn.execute(
                text("SELECT id, name_key, archived FROM accounts ORDER BY id")
            ).all()
        assert [(r[0], r[1], bool(r[2])) for r in rows] == [
            (1, "cash box", False),
            (2, "cash box  #2", False),
            (3, "bank", False),
        ]
        downgrade(revision="0005_device_starts")
        upgrade()
        db.engine.dispose()
