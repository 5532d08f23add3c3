"""POST /import: the web app's bank-statement import, previewed (dry run) or posted
all or nothing through the import service, with possible duplicates flagged."""


def _row(day, description, bank, other, cents):
    return {
        "occurred_on": day,
        "description": description,
        "entries": [
            {"account_id": bank, "amount_cents": cents},
            {"account_id": other, "amount_cents": -cents},
        ],
    }


def _listing(api):
    response = api.get("/transactions")
    assert response.status_code == 200
    return response.get_json()


def test_a_dry_run_flags_duplicates_and_row_errors_and_stores_nothing(api, make_account, post_tx):
    bank = make_account("Bank", "asset")
    dues = make_account("Dues", "income")
    stored = post_tx("2026-03-01", "Dues from Ann", (bank, 5000), (dues, -5000)).get_json()["id"]
    before = _listing(api)
    rows = [
        _row("2026-03-02", "ANN SUBS", bank, dues, 5000),  # 1 day after the stored one
        _row("2026-03-20", "Grant", bank, dues, 100000),
        _row("2026-03-21", "Broken", bank, 999999, 100),  # no such account
        {"occurred_on": "2026-02-30", "description": "x", "entries": []},
    ]
    response = api.post("/import", json={"transactions": rows, "dry_run": True})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["dry_run"] is True and body["imported"] == 0
    by_row = {r["row"]: r for r in body["rows"]}
    assert by_row[1] == {"row": 1, "error": None, "possible_duplicates": [stored]}
    assert by_row[2] == {"row": 2, "error": None, "possible_duplicates": []}
    assert by_row[3]["error"].startswith("row 3: ")
    assert by_row[4]["error"].startswith("row 4: ") and "occurred_on" in by_row[4]["error"]
    assert _listing(api) == before  # nothing stored by a preview


def test_an_import_stores_every_row_or_none(api, make_account, post_tx):
    bank = make_account("Bank", "asset")
    dues = make_account("Dues", "income")
    rent = make_account("Rent", "expense")
    good = [
        _row("2026-04-01", "Subs", bank, dues, 2500),
        _row("2026-04-02", "Hall", bank, rent, -9000),
    ]

    # A bad row anywhere: 400 naming it, nothing stored.
    bad = [*good, _row("2026-04-03", "Typo", bank, 999999, 100)]
    response = api.post("/import", json={"transactions": bad})
    assert response.status_code == 400
    assert response.get_json()["error"].startswith("row 3: ")
    assert _listing(api) == []
    response = api.post(
        "/import", json={"transactions": [*good, _row("2026-04-31", "Y", bank, rent, 5)]}
    )
    assert response.status_code == 400 and response.get_json()["error"].startswith("row 3: ")
    assert _listing(api) == []

    response = api.post("/import", json={"transactions": good, "dry_run": False})
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert body["imported"] == 2 and body["dry_run"] is False
    ids = [r["transaction_id"] for r in body["rows"]]
    listing = {tx["id"]: tx for tx in _listing(api)}
    assert sorted(listing) == sorted(ids)
    hall = listing[ids[1]]
    assert hall["description"] == "Hall" and hall["occurred_on"] == "2026-04-02"
    assert sorted((e["account_id"], e["amount_cents"]) for e in hall["entries"]) == [
        (bank, -9000),
        (rent, 9000),
    ]
    # The same rows again: each is flagged as a possible duplicate of the stored one.
    again = api.post("/import", json={"transactions": good, "dry_run": True}).get_json()
    assert [r["possible_duplicates"] for r in again["rows"]] == [[ids[0]], [ids[1]]]


def test_malformed_requests_are_refused(api, make_account):
    bank = make_account("Bank", "asset")
    dues = make_account("Dues", "income")
    ok = [_row("2026-04-01", "Subs", bank, dues, 2500)]
    for body, needle in [
        ({}, "transactions"),
        ({"transactions": []}, "transactions"),
        ({"transactions": "nope"}, "transactions"),
        ({"transactions": ok, "dry_run": "yes"}, "dry_run"),
        ({"transactions": [1]}, "row 1"),
        ({"transactions": [ok[0]] * 5001}, "5000"),
    ]:
        response = api.post("/import", json=body)
        assert response.status_code == 400, body
        assert needle in response.get_json()["error"]
    assert _listing(api) == []
    response = api.post("/import", data="x", headers={"Content-Type": "text/csv"})
    assert response.status_code == 415


def test_import_needs_a_credential(client):
    response = client.post("/import", json={"transactions": [], "dry_run": True})
    assert response.status_code == 401


def test_a_row_with_replaces_is_refused_and_nothing_changes(api, make_account, post_tx):
    """An import adds what the bank saw; a correction is one POST /transactions with
    `replaces` (docs/ledger.md, "Corrections in one step"). A row carrying one is 400
    naming the row, in a preview and in an import, and nothing is stored or deleted."""
    bank = make_account("Bank", "asset")
    dues = make_account("Dues", "income")
    stored = post_tx("2026-03-01", "Dues", (bank, 5000), (dues, -5000)).get_json()["id"]
    before = _listing(api)
    row = {**_row("2026-03-02", "Dues again", bank, dues, 5000), "replaces": stored}
    for dry_run in (True, False):
        response = api.post("/import", json={"transactions": [row], "dry_run": dry_run})
        if dry_run:
            assert response.status_code == 200, response.get_json()
            error = response.get_json()["rows"][0]["error"]
        else:
            assert response.status_code == 400, response.get_json()
            error = response.get_json()["error"]
        assert error == "row 1: replaces is not taken by an import"
    assert _listing(api) == before
