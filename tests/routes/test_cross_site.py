"""Cross-site cookie writes (docs/auth.md, "Cross-site requests"): one rule for every
route, uploads and body-less routes included, applied before any view runs.

A page on another port or a sibling subdomain gets the session cookie attached to its
form posts and body-less fetches. With the cookie, a write (any method but GET, HEAD,
OPTIONS) whose Origin is neither WEB_ORIGIN nor API_ORIGIN is 403; a multipart upload
without Origin is 403; a declared content type other than JSON is 415. Nothing changes.
A bearer token is not attached by a browser, so none of this applies to it.
"""

from __future__ import annotations

import pytest

from app.models import Budget, Document
from tests.routes.route_table import WRITE_METHODS, routes
from tests.support import WEB_ORIGIN
from tests.testkit import BOUNDARY, PDF, multipart, row_count

SIBLINGS = ["http://localhost:9999", "http://evil.localhost:38080", "null"]


def a_receipt() -> dict:
    """The test client's arguments for a one-part upload (tests/testkit.py multipart)."""
    return {
        "data": multipart(PDF, "receipt.pdf", "application/pdf"),
        "content_type": f"multipart/form-data; boundary={BOUNDARY}",
    }


@pytest.fixture
def person(api, session_client):
    """alice's full cookie session (the bearer `api` is alice too)."""
    return session_client(mfa_complete=True)


@pytest.fixture
def spent(make_account, post_tx):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    made = post_tx("2026-03-01", "shop", (food, 500), (bank, -500))
    assert made.status_code == 201
    return made.get_json()["id"]


@pytest.fixture
def budget(api):
    made = api.post("/budgets", json={"name": "Plan 2027", "starts_on": "2027-01-01"})
    assert made.status_code == 201, made.get_json()
    return made.get_json()["id"]


def approved(api, budget_id) -> bool:
    return api.get(f"/budgets/{budget_id}").get_json()["approved_at"] is not None


def test_every_cookie_write_from_a_foreign_origin_is_403(app, person):
    """Walked over the whole URL map, so routes added later are covered too."""
    checked = 0
    for method, rule, url, _view in routes(app):
        if method not in WRITE_METHODS:
            continue
        for origin in SIBLINGS[:1]:
            for kwargs in (
                {},
                {"json": {}},
                a_receipt(),
                {"data": "x", "content_type": "text/plain"},
            ):
                response = person.open(url, method=method, headers={"Origin": origin}, **kwargs)
                assert response.status_code == 403, (method, rule, kwargs)
                assert set(response.get_json()) == {"error"}
                checked += 1
    assert checked > 40


@pytest.mark.parametrize("origin", SIBLINGS)
def test_a_foreign_upload_with_the_cookie_stores_nothing_even_on_a_locked_day(
    app, api, person, spent, origin
):
    assert person.put("/books/lock", json={"locked_through": "2026-03-31"}).status_code == 200
    response = person.post(
        f"/transactions/{spent}/documents", headers={"Origin": origin}, **a_receipt()
    )
    assert response.status_code == 403
    assert set(response.get_json()) == {"error"}
    assert row_count(app, Document) == 0


def test_a_cookie_upload_needs_its_origin(app, person, spent):
    refused = person.post(f"/transactions/{spent}/documents", **a_receipt())
    assert refused.status_code == 403
    assert "Origin" in refused.get_json()["error"]
    assert row_count(app, Document) == 0
    for origin in (WEB_ORIGIN, app.config["API_ORIGIN"]):
        made = person.post(
            f"/transactions/{spent}/documents", headers={"Origin": origin}, **a_receipt()
        )
        assert made.status_code == 201, made.get_json()
    assert row_count(app, Document) == 2


def test_a_bearer_upload_needs_no_origin(app, api, spent):
    assert api.post(f"/transactions/{spent}/documents", **a_receipt()).status_code == 201
    foreign = api.post(
        f"/transactions/{spent}/documents", headers={"Origin": SIBLINGS[0]}, **a_receipt()
    )
    assert foreign.status_code == 201  # a token is never attached by a foreign page


@pytest.mark.parametrize("origin", SIBLINGS)
def test_approving_a_budget_from_a_foreign_origin_is_403(app, api, person, budget, origin):
    for kwargs in ({}, {"data": {}}, {"data": "", "content_type": "text/plain"}):
        response = person.post(f"/budgets/{budget}/approve", headers={"Origin": origin}, **kwargs)
        assert response.status_code == 403, kwargs
    assert not approved(api, budget)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"data": "", "content_type": "text/plain"},
        {"data": "approve", "content_type": "text/plain"},
        # an empty HTML form: urlencoded, Content-Length 0
        {"data": "", "content_type": "application/x-www-form-urlencoded"},
    ],
)
def test_a_body_less_cookie_write_with_a_form_type_is_415(app, api, person, budget, kwargs):
    response = person.post(f"/budgets/{budget}/approve", **kwargs)
    assert response.status_code == 415
    assert set(response.get_json()) == {"error"}
    assert not approved(api, budget)
    deleted = person.delete(f"/budgets/{budget}", **kwargs)
    assert deleted.status_code == 415
    assert row_count(app, Budget) == 1


def test_the_web_apps_own_body_less_writes_still_work(app, api, person, budget):
    assert (
        person.post(f"/budgets/{budget}/approve", headers={"Origin": WEB_ORIGIN}).status_code == 200
    )
    assert approved(api, budget)
    other = api.post("/budgets", json={"name": "Spare", "starts_on": "2028-01-01"}).get_json()
    assert person.delete(f"/budgets/{other['id']}", json={}).status_code == 204
