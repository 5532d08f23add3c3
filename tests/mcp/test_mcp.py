"""The tool endpoint, spoken to as raw JSON-RPC 2.0 over POST /mcp (docs/mcp.md
"Methods" and "Errors")."""

from __future__ import annotations

import json
import time

import pytest

from app.errors import GENERIC_500


def error_of(reply) -> tuple[int, str]:
    assert "result" not in reply, reply
    return reply["error"]["code"], reply["error"]["message"]


@pytest.fixture
def books(make_account):
    return {
        "checking": make_account("Checking", "asset"),
        "salary": make_account("Salary", "income"),
        "groceries": make_account("Groceries", "expense"),
    }


def stored_transactions(api):
    response = api.get("/transactions")
    assert response.status_code == 200
    return response.get_json()


# --- the handshake -------------------------------------------------------------------------


def test_initialize_echoes_the_client_protocol_version(rpc):
    result = rpc.request("initialize", {"protocolVersion": "2025-03-26", "capabilities": {}})[
        "result"
    ]
    assert result["protocolVersion"] == "2025-03-26"
    assert result["capabilities"] == {"tools": {}}
    assert set(result) == {"protocolVersion", "capabilities", "serverInfo", "instructions"}
    assert result["serverInfo"]["name"] == "ledger-service"
    assert isinstance(result["serverInfo"]["version"], str) and result["serverInfo"]["version"]


def test_initialize_without_a_version_answers_2025_06_18(rpc):
    assert rpc.request("initialize", {})["result"]["protocolVersion"] == "2025-06-18"
    assert rpc.request("initialize")["result"]["protocolVersion"] == "2025-06-18"


def test_initialize_ignores_a_protocol_version_that_is_not_a_string(rpc):
    for odd in (20250618, "", None, ["2025-06-18"]):
        result = rpc.request("initialize", {"protocolVersion": odd})["result"]
        assert result["protocolVersion"] == "2025-06-18"


def test_instructions_say_reports_are_sign_adjusted_and_shown_as_given(rpc):
    text = rpc.request("initialize", {})["result"]["instructions"]
    assert "already sign-adjusted" in text
    assert "exactly as given" in text
    assert "never flip" in text


def test_ping_answers_an_empty_object(rpc):
    assert rpc.request("ping")["result"] == {}


# --- tools/list ----------------------------------------------------------------------------


def test_tools_list_has_the_six_tools_with_required_arguments(rpc, spec_tools):
    listed = {tool["name"]: tool for tool in rpc.request("tools/list")["result"]["tools"]}
    assert set(listed) == spec_tools and len(listed) == 6
    for tool in listed.values():
        assert tool["inputSchema"]["type"] == "object"
        assert tool["description"]
        assert "fn" not in tool
    schema = {name: tool["inputSchema"] for name, tool in listed.items()}
    assert schema["list_accounts"]["properties"] == {}
    assert "required" not in schema["account_balances"]
    assert set(schema["account_balances"]["properties"]) == {"from", "to"}
    assert schema["income_statement"]["required"] == ["from", "to"]
    assert schema["balance_sheet"]["required"] == ["as_of"]
    assert "required" not in schema["list_transactions"]
    record = schema["record_transaction"]
    assert record["required"] == ["occurred_on", "description", "entries"]
    entry = record["properties"]["entries"]["items"]
    assert entry["required"] == ["account_id", "amount_cents"]
    assert entry["properties"]["amount_cents"]["type"] == "integer"


def test_record_transaction_description_teaches_the_sign_convention(rpc):
    listed = {tool["name"]: tool for tool in rpc.request("tools/list")["result"]["tools"]}
    text = listed["record_transaction"]["description"]
    assert "debit positive, credit negative" in text
    assert "sum to exactly 0" in text
    assert (
        "spending from a bank account on a cost): positive (+cents) on the expense account, "
        "negative (-cents) on the asset (bank) account" in text
    )
    assert (
        "money received): positive (+cents) on the asset account, negative (-cents) "
        "on the income account" in text
    )
    for name in ("account_balances", "income_statement", "balance_sheet"):
        assert "never flip a sign" in listed[name]["description"]


# --- transport rules -----------------------------------------------------------------------


def test_notification_gets_an_empty_202(rpc):
    response = rpc.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert response.status_code == 202
    assert response.data == b""


def test_a_tools_call_sent_as_notification_records_nothing(rpc, api, books):
    response = rpc.post(
        {
            "jsonrpc": "2.0",
            "method": "tools/call",
            "params": {
                "name": "record_transaction",
                "arguments": {
                    "occurred_on": "2026-01-05",
                    "description": "Pay",
                    "entries": [
                        {"account_id": books["checking"], "amount_cents": 500},
                        {"account_id": books["salary"], "amount_cents": -500},
                    ],
                },
            },
        }
    )
    assert response.status_code == 202 and response.data == b""
    assert stored_transactions(api) == []


def test_a_response_object_from_the_client_gets_202(rpc):
    response = rpc.post({"jsonrpc": "2.0", "id": 7, "result": {}})
    assert response.status_code == 202 and response.data == b""


def test_get_and_delete_answer_405(api, client):
    for call in (api.get, api.delete, client.get):
        response = call("/mcp")
        assert response.status_code == 405
        assert "POST" in response.headers["Allow"]


def test_without_a_credential_the_endpoint_answers_the_401_challenge(client):
    response = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 401
    assert response.get_json() == {"error": "authentication required"}
    assert response.headers["WWW-Authenticate"] == (
        'Bearer resource_metadata="http://localhost:38081/.well-known/oauth-protected-resource"'
    )


def test_a_half_session_is_refused(session_client):
    client = session_client(mfa_complete=False)
    response = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 401


def test_a_full_session_may_call_tools_but_only_with_a_json_body(session_client):
    client = session_client(mfa_complete=True)
    ok = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert ok.status_code == 200 and ok.get_json()["result"] == {}
    body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    for content_type in ("text/plain", "application/x-www-form-urlencoded"):
        refused = client.post("/mcp", data=body, content_type=content_type)
        assert refused.status_code == 415
        assert "application/json" in refused.get_json()["error"]


def test_unknown_method_is_32601(rpc):
    assert error_of(rpc.request("resources/list"))[0] == -32601
    code, message = error_of(rpc.request("server/discover2", {}))
    assert code == -32601
    assert "server/discover2" in message


def test_unknown_tool_is_32602(rpc):
    code, message = error_of(rpc.call("delete_everything", {}))
    assert code == -32602
    assert "delete_everything" in message


@pytest.mark.parametrize(
    "params, fragment",
    [
        ({}, "'name'"),
        ({"name": 5}, "'name'"),
        ({"name": "list_accounts", "arguments": []}, "'arguments'"),
        ({"name": "list_accounts", "arguments": "x"}, "'arguments'"),
    ],
)
def test_malformed_tools_call_params_are_32602(rpc, params, fragment):
    code, message = error_of(rpc.request("tools/call", params))
    assert code == -32602 and fragment in message


def test_params_as_an_array_is_32602(rpc):
    assert error_of(rpc.request("tools/call", ["list_accounts"]))[0] == -32602


@pytest.mark.parametrize(
    "payload, echoed_id",
    [
        ([], None),
        ([{"jsonrpc": "2.0", "id": 1, "method": "ping"}], None),
        ("ping", None),
        (42, None),
        (None, None),
        ({"id": 3, "method": "ping"}, 3),
        ({"jsonrpc": "1.0", "id": 3, "method": "ping"}, 3),
        ({"jsonrpc": "2.0", "id": "a", "params": {}}, "a"),
        ({"jsonrpc": "2.0", "id": 3, "method": 17}, 3),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": "x"}, 3),
    ],
)
def test_not_a_jsonrpc_request_object_is_32600_with_http_200(rpc, payload, echoed_id):
    response = rpc.post(data=json.dumps(payload), headers={"Content-Type": "application/json"})
    assert response.status_code == 200
    reply = response.get_json()
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] == echoed_id
    assert reply["error"]["code"] == -32600


@pytest.mark.parametrize(
    "body", [b"{not json", b"", b'{"jsonrpc": "2.0", "id": 1', b"\xff\xfe", b"NaN", b"[1, 2"]
)
def test_unparseable_json_is_32700_with_http_200(rpc, body):
    response = rpc.post(data=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 200
    assert response.get_json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "parse error: the body is not valid JSON"},
    }


def test_a_bearer_caller_without_a_content_type_is_still_answered(api):
    response = api.post("/mcp", data=b'{"jsonrpc": "2.0", "id": 9, "method": "ping"}')
    assert response.status_code == 200
    assert response.get_json() == {"jsonrpc": "2.0", "id": 9, "result": {}}


def test_string_ids_are_echoed(rpc):
    response = rpc.post({"jsonrpc": "2.0", "id": "req-1", "method": "ping"})
    assert response.get_json() == {"jsonrpc": "2.0", "id": "req-1", "result": {}}


# --- tool results --------------------------------------------------------------------------


def test_result_shape_is_pretty_text_plus_structured_content(rpc, books):
    result = rpc.call("list_accounts")["result"]
    assert set(result) == {"content", "structuredContent"}
    assert result["structuredContent"] == {
        "result": [
            {"id": books["checking"], "name": "Checking", "kind": "asset", "archived": False},
            {"id": books["groceries"], "name": "Groceries", "kind": "expense", "archived": False},
            {"id": books["salary"], "name": "Salary", "kind": "income", "archived": False},
        ]
    }
    [content] = result["content"]
    assert content["type"] == "text"
    assert content["text"] == json.dumps(result["structuredContent"]["result"], indent=2)
    assert "\n  " in content["text"]


def test_record_transaction_stores_and_answers_recorded_true(rpc, api, books):
    reply = rpc.call(
        "record_transaction",
        {
            "occurred_on": "2026-01-05",
            "description": "  January pay  ",
            "entries": [
                {"account_id": books["checking"], "amount_cents": 250000},
                {"account_id": books["salary"], "amount_cents": -250000},
            ],
        },
    )
    structured = reply["result"]["structuredContent"]
    assert structured["recorded"] is True
    assert isinstance(structured["id"], int)
    assert json.loads(reply["result"]["content"][0]["text"]) == structured
    [stored] = stored_transactions(api)
    assert stored["id"] == structured["id"]
    assert stored["description"] == "January pay"
    assert stored["occurred_on"] == "2026-01-05"
    assert stored["created_by_email"] == "alice@example.com"
    assert [(e["account_id"], e["amount_cents"]) for e in stored["entries"]] == [
        (books["checking"], 250000),
        (books["salary"], -250000),
    ]
    balances = rpc.result("account_balances")
    assert {"account": "Checking", "cents": 250000} in balances
    assert {"account": "Salary", "cents": 250000} in balances


@pytest.mark.parametrize(
    "entries, message",
    [
        ([("checking", 500), ("salary", -400)], "entries must sum to 0; the 2 entries sum to 100"),
        ([("checking", 0)], "a transaction needs at least 2 entries; got 1"),
        ([("checking", 500)], "a transaction needs at least 2 entries; got 1"),
        ([], "a transaction needs at least 2 entries; got 0"),
    ],
)
def test_unbalanced_or_single_legged_records_nothing(rpc, api, books, entries, message):
    reply = rpc.call(
        "record_transaction",
        {
            "occurred_on": "2026-01-05",
            "description": "Bad",
            "entries": [{"account_id": books[a], "amount_cents": c} for a, c in entries],
        },
    )
    assert error_of(reply) == (-32602, message)
    assert stored_transactions(api) == []


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"description": "x", "entries": []}, "occurred_on is required"),
        ({"occurred_on": "5 Jan", "description": "x", "entries": []}, "'occurred_on' must be"),
        ({"occurred_on": "2026-01-05", "description": "   ", "entries": []}, "description is"),
        ({"occurred_on": "2026-01-05", "description": "x"}, "entries is required"),
        ({"occurred_on": "2026-01-05", "description": "x", "entries": {}}, "'entries' must be"),
    ],
)
def test_record_transaction_argument_errors_are_32602(rpc, api, books, arguments, message):
    code, text = error_of(rpc.call("record_transaction", arguments))
    assert code == -32602
    assert text.startswith(message)
    assert stored_transactions(api) == []


def test_unknown_account_and_non_integer_cents_are_32602(rpc, api, books):
    base = {"occurred_on": "2026-01-05", "description": "x"}
    unknown = rpc.call(
        "record_transaction",
        {
            **base,
            "entries": [
                {"account_id": books["checking"], "amount_cents": 100},
                {"account_id": 999999, "amount_cents": -100},
            ],
        },
    )
    assert error_of(unknown) == (-32602, "unknown account_id 999999")
    for bad in (1.5, "100", True, 2**63):
        reply = rpc.call(
            "record_transaction",
            {
                **base,
                "entries": [
                    {"account_id": books["checking"], "amount_cents": bad},
                    {"account_id": books["salary"], "amount_cents": -100},
                ],
            },
        )
        code, message = error_of(reply)
        assert code == -32602 and message.startswith("'entries[0].amount_cents'")
    assert stored_transactions(api) == []


def test_income_statement_with_to_before_from_is_refused(rpc):
    reply = rpc.call("income_statement", {"from": "2026-02-01", "to": "2026-01-31"})
    assert error_of(reply) == (-32602, "'to' must not be before 'from'")


def test_income_statement_needs_both_dates(rpc):
    assert error_of(rpc.call("income_statement", {"to": "2026-01-31"})) == (
        -32602,
        "'from' is required",
    )
    assert error_of(rpc.call("income_statement", {"from": "2026-01-01"})) == (
        -32602,
        "'to' is required",
    )
    assert error_of(rpc.call("income_statement"))[0] == -32602


def test_balance_sheet_needs_as_of(rpc):
    assert error_of(rpc.call("balance_sheet", {})) == (-32602, "'as_of' is required")


@pytest.mark.parametrize(
    "tool, key, value",
    [
        ("account_balances", "from", "2026-13-01"),
        ("account_balances", "to", "yesterday"),
        ("income_statement", "from", "2026/01/01"),
        ("balance_sheet", "as_of", "2026-02-30"),
        ("list_transactions", "to", 20260101),
    ],
)
def test_a_bad_date_is_32602_naming_the_key(rpc, tool, key, value):
    arguments = {"from": "2026-01-01", "to": "2026-12-31"} if tool == "income_statement" else {}
    arguments[key] = value
    code, message = error_of(rpc.call(tool, arguments))
    assert code == -32602
    assert message == f"'{key}' must be a date like 2026-01-31 (YYYY-MM-DD)"


# --- failures that are not the caller's ----------------------------------------------------


def test_an_internal_fault_is_32603_with_no_internal_text(rpc, monkeypatch, caplog):
    from sqlalchemy.exc import OperationalError

    from app.services.ledger import reports

    def broken(*args, **kwargs):
        raise OperationalError("SELECT secret FROM entries", {}, Exception("driver: disk I/O"))

    monkeypatch.setattr(reports, "account_sums", broken)
    response = rpc.post(
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "account_balances"}}
    )
    assert response.status_code == 200
    assert response.get_json() == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": -32603, "message": GENERIC_500},
    }
    for word in (b"SELECT", b"entries", b"driver", b"OperationalError"):
        assert word not in response.data
    assert "SELECT secret FROM entries" in caplog.text  # the details went to the log


def test_a_failure_after_the_write_rolls_the_write_back(rpc, api, books, monkeypatch):
    from app.mcp import tools
    from app.services.ledger import transactions

    real = transactions.record_transaction

    def write_then_fail(*args, **kwargs):
        real(*args, **kwargs)
        raise RuntimeError("boom after insert")

    monkeypatch.setattr(tools.transactions, "record_transaction", write_then_fail)
    reply = rpc.call(
        "record_transaction",
        {
            "occurred_on": "2026-01-05",
            "description": "Half done",
            "entries": [
                {"account_id": books["checking"], "amount_cents": 100},
                {"account_id": books["salary"], "amount_cents": -100},
            ],
        },
    )
    assert error_of(reply) == (-32603, GENERIC_500)
    monkeypatch.setattr(tools.transactions, "record_transaction", real)
    assert stored_transactions(api) == []


def test_a_non_400_service_refusal_is_32603(rpc, monkeypatch):
    from app.mcp import tools
    from app.services.errors import NotFoundError

    def refuse(args, principal):
        raise NotFoundError("no such row in table secrets")

    monkeypatch.setitem(tools.TOOLS["list_accounts"], "fn", refuse)
    assert error_of(rpc.call("list_accounts")) == (-32603, GENERIC_500)


# --- the 2026-07-28 revision (docs/mcp.md "Protocol revisions") ----------------------------

MODERN = "2026-07-28"


def modern(rpc, method, params=None, *, version=MODERN, headers=None, meta=None):
    """A 2026-07-28 request (testkit.Rpc.post_2026); every response is JSON, sessionless."""
    response = rpc.post_2026(method, params, version=version, headers=headers, meta=meta)
    assert response.is_json, response.data
    assert "Mcp-Session-Id" not in response.headers
    return response


def modern_result(rpc, method, params=None):
    response = modern(rpc, method, params)
    assert response.status_code == 200, response.data
    reply = response.get_json()
    assert "result" in reply, reply
    return reply["result"]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_initialize_echoes_every_handshake_revision(rpc, version):
    result = rpc.request("initialize", {"protocolVersion": version, "capabilities": {}})["result"]
    assert result["protocolVersion"] == version
    assert "resultType" not in result  # the handshake revisions keep their shape exactly


def test_server_discover_matches_the_sdk_schema(rpc):
    from mcp_types import methods
    from mcp_types._v2026_07_28 import DiscoverResultResponse

    response = modern(rpc, "server/discover")
    assert response.status_code == 200
    reply = response.get_json()
    parsed = DiscoverResultResponse.model_validate(reply)
    methods.validate_server_result("server/discover", MODERN, reply["result"])
    result = reply["result"]
    assert result["supportedVersions"] == [MODERN]
    assert result["capabilities"] == {"tools": {}}
    assert result["resultType"] == "complete"
    assert result["cacheScope"] == "private"
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
    assert "already sign-adjusted" in result["instructions"]
    server_info = result["_meta"]["io.modelcontextprotocol/serverInfo"]
    assert server_info["name"] == "ledger-service"
    assert parsed.result.supported_versions == [MODERN]


@pytest.mark.parametrize("version", ["2099-01-01", "2025-06-18", "draft"])
def test_an_unsupported_meta_version_is_32022_listing_what_is_spoken(rpc, version):
    for method in ("server/discover", "tools/list"):
        response = modern(rpc, method, version=version)
        assert response.status_code == 200  # docs/mcp.md "Errors": always HTTP 200
        error = response.get_json()["error"]
        assert error["code"] == -32022
        assert error["data"] == {"supported": [MODERN], "requested": version}


def test_a_request_without_the_envelope_keys_is_32602(rpc):
    for meta in ({}, {"io.modelcontextprotocol/protocolVersion": MODERN}):
        response = modern(rpc, "server/discover", meta=meta)
        assert response.status_code == 200
        code, message = error_of(response.get_json())
        assert code == -32602 and "clientCapabilities" in message
    # server/discover without any _meta (an old-style probe) is the same refusal, fast
    started = time.monotonic()
    code, _ = error_of(rpc.request("server/discover", {"supportedVersions": ["x"]}))
    assert time.monotonic() - started < 1.0
    assert code == -32602


@pytest.mark.parametrize(
    "method, params, headers",
    [
        ("tools/list", None, {"Mcp-Method": "tools/call"}),
        ("tools/list", None, {"Mcp-Method": None}),
        ("tools/list", None, {"MCP-Protocol-Version": "2025-06-18"}),
        ("tools/list", None, {"MCP-Protocol-Version": None}),
        ("server/discover", None, {"Mcp-Method": "initialize"}),
        ("tools/call", {"name": "list_accounts"}, {"Mcp-Name": "record_transaction"}),
        ("tools/call", {"name": "list_accounts"}, {"Mcp-Name": None}),
    ],
)
def test_headers_that_disagree_with_the_body_are_32020(rpc, api, books, method, params, headers):
    response = modern(rpc, method, params, headers=headers)
    assert response.status_code == 200  # docs/mcp.md "Errors": always HTTP 200
    assert response.get_json()["error"]["code"] == -32020


def test_matching_headers_are_served_including_an_encoded_name(rpc, books):
    from mcp.shared.inbound import encode_header_value

    assert modern_result(rpc, "tools/list")["tools"]
    listed = modern_result(rpc, "tools/call", {"name": "list_accounts"})
    assert listed["resultType"] == "complete"
    # a name HTTP cannot carry verbatim travels base64-wrapped; an unknown tool stays -32602
    odd = "caf\u00e9"
    response = modern(
        rpc, "tools/call", {"name": odd}, headers={"Mcp-Name": encode_header_value(odd)}
    )
    assert response.status_code == 200
    assert error_of(response.get_json())[0] == -32602


def test_the_handshake_methods_are_not_part_of_2026_07_28(rpc):
    for method in ("initialize", "ping"):
        response = modern(rpc, method)
        assert response.status_code == 200
        assert error_of(response.get_json())[0] == -32601


def test_tools_list_carries_cache_hints_in_a_deterministic_order(rpc):
    from mcp_types import methods

    first = modern_result(rpc, "tools/list")
    methods.validate_server_result("tools/list", MODERN, first)
    assert first["ttlMs"] >= 0 and first["cacheScope"] == "private"
    assert first["resultType"] == "complete"
    assert modern_result(rpc, "tools/list") == first
    legacy = rpc.request("tools/list")["result"]
    assert set(legacy) == {"tools"}  # the handshake revisions get no 2026 fields
    assert first["tools"] == legacy["tools"]  # same tools, same order, same schemas
    assert [t["name"] for t in first["tools"]] == [
        "list_accounts",
        "account_balances",
        "income_statement",
        "balance_sheet",
        "list_transactions",
        "record_transaction",
    ]


def test_no_response_ever_carries_a_session_id(rpc, books):
    responses = [
        rpc.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
        rpc.post({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        rpc.post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        rpc.post({"jsonrpc": "2.0", "id": 3, "method": "nope"}),
        modern(rpc, "server/discover"),
        modern(rpc, "tools/call", {"name": "list_accounts"}),
        modern(rpc, "tools/list", version="1999-01-01"),
        modern(rpc, "tools/list", headers={"Mcp-Method": "x"}),
    ]
    assert [r.status_code for r in responses] == [200, 202, 200, 200, 200, 200, 200, 200]
    for response in responses:
        assert "Mcp-Session-Id" not in response.headers  # werkzeug: any letter case


def test_a_rejected_recording_under_2026_07_28_stores_nothing(rpc, api, books):
    arguments = {
        "occurred_on": "2026-01-06",
        "description": "Lopsided",
        "entries": [
            {"account_id": books["checking"], "amount_cents": 100},
            {"account_id": books["salary"], "amount_cents": -99},
        ],
    }
    response = modern(rpc, "tools/call", {"name": "record_transaction", "arguments": arguments})
    assert response.status_code == 200
    assert error_of(response.get_json()) == (
        -32602,
        "entries must sum to 0; the 2 entries sum to 1",
    )
    assert stored_transactions(api) == []
