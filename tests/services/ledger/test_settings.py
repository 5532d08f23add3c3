"""The instance-wide settings row."""

import pytest


def test_defaults_to_personal(api):
    response = api.get("/settings")
    assert response.status_code == 200
    assert response.get_json() == {"book_style": "personal"}


def test_switch_to_club_and_back(api):
    response = api.put("/settings", json={"book_style": "club"})
    assert response.status_code == 200
    assert response.get_json() == {"book_style": "club"}
    assert api.get("/settings").get_json() == {"book_style": "club"}
    assert api.put("/settings", json={"book_style": "personal"}).get_json() == {
        "book_style": "personal"
    }


@pytest.mark.parametrize("value", ["Club", "business", "", None, 1, ["club"]])
def test_unknown_style_is_422_and_changes_nothing(api, value):
    api.put("/settings", json={"book_style": "club"})
    response = api.put("/settings", json={"book_style": value})
    assert response.status_code == 422
    assert "club" in response.get_json()["error"] and "personal" in response.get_json()["error"]
    assert api.get("/settings").get_json() == {"book_style": "club"}


def test_style_changes_no_figure(api, make_account, post_tx):
    bank, food = make_account("Bank", "asset"), make_account("Food", "expense")
    post_tx("2026-01-01", "x", (food, 250), (bank, -250))
    before = api.get("/reports/balances").get_json()
    api.put("/settings", json={"book_style": "club"})
    assert api.get("/reports/balances").get_json() == before


def test_non_json_body_is_415(api):
    response = api.put("/settings", data="book_style=club", headers={"Content-Type": "text/plain"})
    assert response.status_code == 415
    assert api.get("/settings").get_json() == {"book_style": "personal"}
