"""Discovery documents and the seeded first-party clients."""

from tests.services.oauth.flow import API_ORIGIN, DEVICE_GRANT


def test_protected_resource_document(client):
    response = client.get("/.well-known/oauth-protected-resource")
    assert response.status_code == 200
    assert response.get_json() == {
        "resource": API_ORIGIN,
        "authorization_servers": [API_ORIGIN],
        "bearer_methods_supported": ["header"],
    }


def test_authorization_server_document(client):
    response = client.get("/.well-known/oauth-authorization-server")
    assert response.status_code == 200
    assert response.get_json() == {
        "issuer": API_ORIGIN,
        "authorization_endpoint": f"{API_ORIGIN}/oauth/authorize",
        "token_endpoint": f"{API_ORIGIN}/oauth/token",
        "device_authorization_endpoint": f"{API_ORIGIN}/oauth/device_authorization",
        "registration_endpoint": f"{API_ORIGIN}/oauth/register",
        "revocation_endpoint": f"{API_ORIGIN}/oauth/revoke",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", DEVICE_GRANT],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": True,
    }


def test_documents_follow_the_configured_canonical_origin(app_config):
    from app import create_app

    app = create_app({**app_config, "API_ORIGIN": "HTTPS://Ledger.Example.ORG/"})
    body = app.test_client().get("/.well-known/oauth-authorization-server").get_json()
    assert body["issuer"] == "https://ledger.example.org"
    assert body["token_endpoint"] == "https://ledger.example.org/oauth/token"


def test_first_party_clients_are_seeded(api):
    for client_id in ("svc-cli", "svc-desktop"):
        response = api.get("/oauth/client_info", query_string={"client_id": client_id})
        assert response.status_code == 200
        body = response.get_json()
        assert body["id"] == client_id
        assert body["dynamic"] is False
        assert body["first_use"] is True
        assert body["redirect_uris"] == ["http://127.0.0.1/callback"]
        assert body["name"]
