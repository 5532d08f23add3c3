"""The one JSON body parser (app/json_provider.parse_body) on every route family.

Nesting too deep for the parser and a lone surrogate (an escaped \\ud800 to \\udfff
without its pair: text no database column can hold) used to reach the handlers and
fail as 500 (MCP: -32603). Now: 400 {error} on the ledger, auth and OAuth JSON routes,
-32700 on the tool endpoint, and nothing is stored.
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import LoginThrottle, OAuthClient, Session, User
from tests.services.oauth.flow import OAuthFlow
from tests.support import PASSWORD
from tests.testkit import row_count

NOT_JSON = {"error": "the request body is not valid JSON"}
NOT_UNICODE = {
    "error": "the request body is not valid Unicode: it contains a lone surrogate"
    " (\\ud800 to \\udfff)"
}
JSON = {"Content-Type": "application/json"}
DEEP = [b"[" * 100_000, b'{"name": ' + b"[" * 100_000, b"[" * 50_000 + b"]" * 50_000]


def lone(template: str, *surrogates: str) -> bytes:
    """The template as a JSON body, each ~ replaced by the escape of a lone surrogate."""
    for escape in surrogates or ("\\ud800",):
        template = template.replace("~", escape, 1)
    return template.encode()


def post(client, path, body: bytes):
    return client.post(path, data=body, headers=JSON)


# --- ledger routes ---------------------------------------------------------------------


@pytest.mark.parametrize("body", DEEP)
@pytest.mark.parametrize("path", ["/accounts", "/transactions"])
def test_ledger_routes_refuse_too_deep_json_with_400(api, path, body):
    response = post(api, path, body)
    assert response.status_code == 400
    assert response.get_json() == NOT_JSON
    assert api.get("/accounts").get_json() == []


@pytest.mark.parametrize(
    "body",
    [
        lone('{"name": "Bank ~", "kind": "asset"}'),
        lone('{"name": "Bank ~", "kind": "asset"}', "\\udfff"),
        lone('{"name": "Bank", "kind": "asset", "n~te": 1}'),  # even an ignored key
        lone('{"name": "~~", "kind": "asset"}', "\\udc00", "\\ud800"),  # a reversed pair
        '{"name": "Bank \ud800", "kind": "asset"}'.encode("utf-8", "surrogatepass"),  # raw
    ],
)
def test_a_lone_surrogate_in_an_account_is_400_and_stores_nothing(api, body):
    response = post(api, "/accounts", body)
    assert response.status_code == 400
    assert response.get_json() in (NOT_UNICODE, NOT_JSON)
    assert api.get("/accounts").get_json() == []


def test_a_lone_surrogate_in_a_transaction_is_400_and_stores_nothing(api, make_account):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    body = (
        '{"occurred_on": "2026-11-20", "description": "caf~", "entries": ['
        f'{{"account_id": {food}, "amount_cents": 250}},'
        f'{{"account_id": {bank}, "amount_cents": -250}}]}}'
    )
    response = post(api, "/transactions", lone(body))
    assert response.status_code == 400
    assert response.get_json() == NOT_UNICODE
    assert api.get("/transactions").get_json() == []
    # A proper pair (an emoji) is text like any other.
    paired = post(api, "/transactions", lone(body, "\\ud83d\\ude00"))
    assert paired.status_code == 201, paired.get_json()
    (stored,) = api.get("/transactions").get_json()
    assert stored["description"] == "caf\U0001f600"


# --- auth routes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        DEEP[0],
        lone('{"email": "alice@example.com~", "password": "x"}'),
        lone('{"email": "alice@example.com", "password": "~"}'),
    ],
)
def test_login_refuses_deep_json_and_lone_surrogates_and_counts_nothing(
    app, client, make_user, body
):
    make_user()
    response = post(client, "/auth/login", body)
    assert response.status_code == 400
    assert set(response.get_json()) == {"error"}
    assert row_count(app, LoginThrottle) == 0 and row_count(app, Session) == 0


@pytest.mark.parametrize(
    "body",
    [DEEP[1], lone(f'{{"current_password": "{PASSWORD}", "new_password": "a new secret ~"}}')],
)
def test_password_change_refuses_deep_json_and_lone_surrogates(app, session_client, body):
    client = session_client(mfa_complete=True)
    with app.app_context():
        before = db.session.execute(select(User.password_hash)).scalar_one()
    response = post(client, "/auth/password", body)
    assert response.status_code == 400
    assert set(response.get_json()) == {"error"}
    with app.app_context():
        assert db.session.execute(select(User.password_hash)).scalar_one() == before
    assert client.get("/accounts").status_code == 200  # the session did not end


# --- OAuth JSON routes -----------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        DEEP[0],
        lone('{"redirect_uris": ["https://app.example/cb"], "client_name": "App ~"}'),
        lone('{"redirect_uris": ["https://app.example/cb~"]}'),
    ],
)
def test_register_refuses_deep_json_and_lone_surrogates(app, client, body):
    response = post(client, "/oauth/register", body)
    assert response.status_code == 400
    assert set(response.get_json()) == {"error"}
    with app.app_context():
        assert (
            db.session.execute(
                select(func.count()).where(OAuthClient.dynamic.is_(True))
            ).scalar_one()
            == 0
        )


@pytest.mark.parametrize("field", ["state", "redirect_uri", None])
def test_approve_refuses_deep_json_and_lone_surrogates(app, client, session_client, field):
    from app.models import AuthorizationCode

    flow = OAuthFlow(client, session_client).human()
    if field is None:
        body = DEEP[1]
    else:
        params = flow.params()
        params[field] += "~"
        body = lone(json.dumps({**params, "approve": True}))
    response = post(client, "/oauth/authorize/approve", body)
    assert response.status_code == 400
    assert set(response.get_json()) == {"error"}
    assert row_count(app, AuthorizationCode) == 0


def test_device_approve_refuses_a_lone_surrogate(app, client, session_client):
    flow = OAuthFlow(client, session_client).human()
    started = flow.device_start().get_json()
    body = lone(json.dumps({"user_code": started["user_code"] + "~", "approve": True}))
    response = post(client, "/oauth/device/approve", body)
    assert response.status_code == 400
    assert set(response.get_json()) == {"error"}
    with app.app_context():
        assert db.session.execute(select(Session.device_attempts)).scalar_one() == 0


# --- the tool endpoint -----------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    DEEP + [b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ' + b"[" * 100_000],
)
def test_mcp_too_deep_is_32700(rpc, body):
    response = rpc.post(data=body, headers=JSON)
    assert response.status_code == 200
    assert response.get_json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "parse error: the body is not valid JSON"},
    }


@pytest.mark.parametrize("where", ["description", "key", "method", "id"])
def test_mcp_lone_surrogate_is_32700_and_records_nothing(rpc, api, make_account, where):
    bank = make_account("Bank", "asset")
    food = make_account("Food", "expense")
    arguments = {
        "occurred_on": "2026-11-20",
        "description": "caf~" if where == "description" else "cafe",
        "entries": [
            {"account_id": food, "amount_cents": 250},
            {"account_id": bank, "amount_cents": -250},
        ],
    }
    if where == "key":
        arguments["n~te"] = 1
    message = {
        "jsonrpc": "2.0",
        "id": "req-~" if where == "id" else 1,
        "method": "tools/call~" if where == "method" else "tools/call",
        "params": {"name": "record_transaction", "arguments": arguments},
    }
    response = rpc.post(data=lone(json.dumps(message)), headers=JSON)
    assert response.status_code == 200
    assert response.get_json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32700,
            "message": "parse error: the body is not valid Unicode: it contains a lone"
            " surrogate (\\ud800 to \\udfff)",
        },
    }
    assert api.get("/transactions").get_json() == []
