"""OAUTH_CLIENT_COMPAT: off, the documented rules hold exactly
(docs/oauth.md); on, localhost redirects count as loopback and
a missing `resource` on authorize, approve and token means the canonical API origin."""

import pytest

from tests.services.oauth.flow import API_ORIGIN, assert_oauth_error

LOCALHOST_CB = "http://localhost:33418/callback"


@pytest.fixture(params=[False, True], ids=["compat-off", "compat-on"])
def compat(request):
    return request.param


@pytest.fixture
def app_config(app_config, compat):
    return {**app_config, "OAUTH_CLIENT_COMPAT": compat}


def register_localhost(client):
    return client.post("/oauth/register", json={"redirect_uris": [LOCALHOST_CB]})


def test_localhost_redirect_registration(client, compat):
    response = register_localhost(client)
    if compat:
        assert response.status_code == 201
    else:
        assert_oauth_error(response, "invalid_redirect_uri")


def test_localhost_redirect_matches_on_any_port_only_in_compat(app, client, oauth, compat):
    # A client stored with a localhost URI (registered while compat was on).
    import json

    from app import store
    from app.extensions import db
    from app.models import OAuthClient
    from app.services import clock

    with app.app_context():
        db.session.add(
            OAuthClient(
                id="dyn_local",
                name="Desk",
                dynamic=True,
                redirect_uris=json.dumps([LOCALHOST_CB]),
                created_at=clock.now(),
            )
        )
        store.commit()
    for uri, ok in (
        (LOCALHOST_CB, True),
        ("http://localhost:9/callback", compat),
        ("http://localhost:9/other", False),
        ("http://127.0.0.1:9/callback", False),
        ("http://user@localhost:9/callback", False),
    ):
        response = client.get(
            "/oauth/authorize", query_string=oauth.params(client_id="dyn_local", redirect_uri=uri)
        )
        assert response.status_code == (303 if ok else 400), uri
    oauth.human()
    response = oauth.approve(
        True, client_id="dyn_local", redirect_uri="http://localhost:4711/callback"
    )
    if not compat:
        assert_oauth_error(response, "invalid_request")
        return
    pair = oauth.pair(client_id="dyn_local", redirect_uri="http://localhost:4711/callback")
    assert oauth.works(pair["access_token"])


def test_first_party_client_localhost_redirect(client, oauth, compat):
    """svc-cli registered 127.0.0.1: a localhost redirect is a different host either way."""
    response = client.get(
        "/oauth/authorize", query_string=oauth.params(redirect_uri="http://localhost:5/callback")
    )
    assert_oauth_error(response, "invalid_request")


def test_missing_resource_on_authorize(client, oauth, compat):
    response = client.get("/oauth/authorize", query_string=oauth.params(resource=None))
    if compat:
        assert response.status_code == 303
    else:
        assert response.status_code == 400 and response.mimetype == "text/plain"


def test_missing_resource_on_approve_and_token(app, oauth, compat):
    oauth.human()
    response = oauth.approve(True, resource=None)
    if not compat:
        assert_oauth_error(response, "invalid_request")
        return
    assert response.status_code == 200
    pair = oauth.pair(resource=None)
    assert oauth.works(pair["access_token"])
    from app.extensions import db
    from app.models import Token
    from app.services import crypto

    with app.app_context():
        assert db.session.get(Token, crypto.digest(pair["access_token"])).audience == API_ORIGIN


def test_wrong_resource_is_refused_either_way(client, oauth, compat):
    response = client.get(
        "/oauth/authorize", query_string=oauth.params(resource="http://localhost:1")
    )
    assert_oauth_error(response, "invalid_request")


def test_token_endpoint_accepts_a_missing_resource_either_way(oauth, compat):
    # `resource` is optional at the token endpoint (docs/openapi.yaml); compat changes nothing there
    # except what a missing one means (the canonical origin, which is the only audience).
    oauth.human()
    assert oauth.exchange(oauth.code()).status_code == 200
