"""Accounts: creation, ordering, validation and the 401 challenge."""

import pytest

KINDS = ["asset", "liability", "equity", "income", "expense"]


def test_empty_list(api):
    response = api.get("/accounts")
    assert response.status_code == 200
    assert response.get_json() == []


def test_create_returns_the_account(api):
    response = api.post("/accounts", json={"name": "  Bank  ", "kind": "asset"})
    assert response.status_code == 201
    body = response.get_json()
    assert body == {"id": body["id"], "name": "Bank", "kind": "asset", "archived": False}
    assert isinstance(body["id"], int)
    assert api.get("/accounts").get_json() == [body]


def test_listing_is_ordered_by_kind_then_name(api, make_account):
    for name, kind in [
        ("Rent", "expense"),
        ("Bank", "asset"),
        ("Cash", "asset"),
        ("Salary", "income"),
        ("Card", "liability"),
        ("Opening", "equity"),
        ("Food", "expense"),
    ]:
        make_account(name, kind)
    listed = [(a["kind"], a["name"]) for a in api.get("/accounts").get_json()]
    assert listed == sorted(listed)
    assert listed[0] == ("asset", "Bank")


@pytest.mark.parametrize("name", ["", "   ", "\t\n"])
def test_blank_name_is_refused(api, name):
    response = api.post("/accounts", json={"name": name, "kind": "asset"})
    assert response.status_code == 400
    assert "name is required" in response.get_json()["error"]
    assert api.get("/accounts").get_json() == []


def test_missing_name_is_refused(api):
    response = api.post("/accounts", json={"kind": "asset"})
    assert response.status_code == 400
    assert "name is required" in response.get_json()["error"]


def test_duplicate_name_is_refused_in_our_words(api, make_account):
    make_account("Food", "expense")
    response = api.post("/accounts", json={"name": "Food", "kind": "asset"})
    assert response.status_code == 400
    assert response.get_json() == {"error": "an account named 'Food' already exists"}
    assert len(api.get("/accounts").get_json()) == 1


@pytest.mark.parametrize("kind", ["Asset", "ASSET", "revenue", "", None, 3, ["asset"]])
def test_unknown_kind_is_refused_naming_the_kinds(api, kind):
    response = api.post("/accounts", json={"name": "X", "kind": kind})
    assert response.status_code == 400
    message = response.get_json()["error"]
    for allowed in KINDS:
        assert allowed in message
    assert api.get("/accounts").get_json() == []


def test_each_kind_is_accepted(api):
    for kind in KINDS:
        assert api.post("/accounts", json={"name": kind.title(), "kind": kind}).status_code == 201


def test_non_string_name_is_refused(api):
    response = api.post("/accounts", json={"name": 12, "kind": "asset"})
    assert response.status_code == 400
    assert "name" in response.get_json()["error"]


def test_overlong_name_is_refused(api):
    response = api.post("/accounts", json={"name": "x" * 201, "kind": "asset"})
    assert response.status_code == 400
    assert "at most 200" in response.get_json()["error"]


def test_body_that_is_not_json_is_415(api):
    response = api.post(
        "/accounts",
        data="name=Bank&kind=asset",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 415
    assert "error" in response.get_json()
    assert api.get("/accounts").get_json() == []


@pytest.mark.parametrize("raw", ["{not json", '["a list"]', "null", '"text"'])
def test_malformed_or_non_object_json_is_400(api, raw):
    response = api.post("/accounts", data=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert "error" in response.get_json()


def test_unknown_fields_are_ignored(api):
    response = api.post("/accounts", json={"name": "Bank", "kind": "asset", "colour": "blue"})
    assert response.status_code == 201
