"""The two discovery documents (RFC 8414 and RFC 9728), built from config."""

from __future__ import annotations

from flask import current_app

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def protected_resource() -> dict:
    origin = current_app.config["API_ORIGIN"]
    return {
        "resource": origin,
        "authorization_servers": [origin],
        "bearer_methods_supported": ["header"],
    }


def authorization_server() -> dict:
    origin = current_app.config["API_ORIGIN"]
    return {
        "issuer": origin,
        "authorization_endpoint": f"{origin}/oauth/authorize",
        "token_endpoint": f"{origin}/oauth/token",
        "device_authorization_endpoint": f"{origin}/oauth/device_authorization",
        "registration_endpoint": f"{origin}/oauth/register",
        "revocation_endpoint": f"{origin}/oauth/revoke",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", DEVICE_GRANT],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": True,  # RFC 9207
        # A client_id may be the https URL of its metadata (services/oauth/metadata_documents)
        "client_id_metadata_document_supported": True,
    }
