"""POST /oauth/token with authorization_code: the authorization
code's table (app/services/oauth/codes.py; docs/oauth.md "Authorization code with PKCE"),
row by row."""

import pytest

from app.extensions import db
from app.models import AuthorizationCode, Token
from tests.services.oauth.flow import (
    API_ORIGIN,
    FORM,
    REDIRECT,
    assert_oauth_error,
    change_alice_password,
)

NOT_REDEEMABLE = "the authorization code is not redeemable"


def code_rows(app) -> int:
    with app.app_context():
        return db.session.query(AuthorizationCode).count()


def test_redeem_issues_an_access_and_refresh_pair(app, oauth, clock):
    oauth.human()
    response = oauth.exchange(oauth.code())
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    body = response.get_json()
    assert set(body) == {"access_token", "token_type", "expires_in", "refresh_token"}
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600
    assert body["access_token"].startswith("svc_") and body["refresh_token"].startswith("svc_")
    assert len(body["access_token"]) == 4 + 43  # 256 bits, base64url
    assert oauth.works(body["access_token"])
    assert code_rows(app) == 0
    with app.app_context():
        rows = {t.kind: t for t in db.session.query(Token)}
        refresh, access = rows["refresh"], rows["access"]
        assert refresh.parent_id is None and access.parent_id == refresh.id
        assert refresh.family_id == refresh.id == access.family_id
        assert refresh.audience == access.audience == API_ORIGIN
        assert (access.expires_at - clock()).total_seconds() == 3600
        assert (refresh.expires_at - clock()).days == 60
        assert refresh.client_id == "svc-cli"


def test_the_access_token_lasts_one_hour(oauth, clock):
    oauth.human()
    access = oauth.pair()["access_token"]
    clock.advance(3599)
    assert oauth.works(access)
    clock.advance(1)
    assert not oauth.works(access)


def test_a_refresh_token_is_not_a_bearer_credential(oauth):
    oauth.human()
    assert not oauth.works(oauth.pair()["refresh_token"])


def test_code_within_60_seconds_redeems(oauth, clock):
    oauth.human()
    code = oauth.code()
    clock.advance(59)
    assert oauth.exchange(code).status_code == 200


@pytest.mark.parametrize("elapsed", [60, 61, 3600])
def test_code_expires_after_60_seconds(oauth, clock, elapsed):
    oauth.human()
    code = oauth.code()
    clock.advance(elapsed)
    body = assert_oauth_error(oauth.exchange(code), "invalid_grant")
    assert body["error_description"] == NOT_REDEEMABLE


def test_replay_is_refused(oauth):
    oauth.human()
    code = oauth.code()
    assert oauth.exchange(code).status_code == 200
    assert_oauth_error(oauth.exchange(code), "invalid_grant")


@pytest.mark.parametrize(
    "mismatch",
    [
        {"client_id": "svc-desktop"},
        {"client_id": "no-such-client"},
        {"redirect_uri": "http://127.0.0.1:53683/callback"},
        {"redirect_uri": "http://127.0.0.1/callback"},
        {"code_verifier": "wrong-verifier-" + "x" * 40},
    ],
)
def test_any_mismatch_kills_the_code_even_for_its_holder(app, oauth, mismatch):
    oauth.human()
    code = oauth.code()
    body = assert_oauth_error(oauth.exchange(code, **mismatch), "invalid_grant")
    assert body["error_description"] == NOT_REDEEMABLE
    assert code_rows(app) == 0
    assert_oauth_error(oauth.exchange(code), "invalid_grant")  # the right request, too late


@pytest.mark.parametrize("how", ["http", "cli"])
def test_a_password_change_kills_the_users_unredeemed_codes(app, oauth, runner, how):
    oauth.human("bob@example.com")
    bobs = oauth.code()
    oauth.human()
    alices = oauth.code()
    change_alice_password(how, oauth.client, runner)
    assert code_rows(app) == 1  # bob's, in the same unit of work as the change
    body = assert_oauth_error(oauth.exchange(alices), "invalid_grant")
    assert body["error_description"] == NOT_REDEEMABLE
    assert oauth.exchange(bobs).status_code == 200  # another user's grant is untouched


def test_wrong_resource_is_invalid_request_and_kills_the_code(app, oauth):
    oauth.human()
    code = oauth.code()
    assert_oauth_error(oauth.exchange(code, resource="http://localhost:9999"), "invalid_request")
    assert code_rows(app) == 0
    assert_oauth_error(oauth.exchange(code), "invalid_grant")


def test_missing_verifier_is_invalid_request_and_kills_the_code(app, oauth):
    oauth.human()
    code = oauth.code()
    assert_oauth_error(oauth.exchange(code, code_verifier=None), "invalid_request")
    assert_oauth_error(oauth.exchange(code), "invalid_grant")


@pytest.mark.parametrize("resource", [API_ORIGIN, API_ORIGIN + "/", "HTTP://LOCALHOST:38081"])
def test_resource_may_be_given_at_the_token_endpoint(oauth, resource):
    oauth.human()
    assert oauth.exchange(oauth.code(), resource=resource).status_code == 200


def test_unknown_code_is_invalid_grant(oauth):
    assert_oauth_error(oauth.exchange("not-a-code"), "invalid_grant")


def test_token_endpoint_wants_a_form_body(client, app, oauth):
    oauth.human()
    code = oauth.code()
    response = client.post("/oauth/token", json={"grant_type": "authorization_code", "code": code})
    assert response.status_code == 415
    assert response.mimetype == "text/plain"
    assert response.headers["Cache-Control"] == "no-store"
    assert code_rows(app) == 1  # nothing happened to the code


def test_token_endpoint_without_grant_type_is_plain_422(client):
    response = client.post("/oauth/token", data={"code": "x"}, content_type=FORM)
    assert response.status_code == 422
    assert response.mimetype == "text/plain"
    assert "grant_type" in response.get_data(as_text=True)


@pytest.mark.parametrize("grant_type", ["password", "client_credentials", "implicit", ""])
def test_unsupported_grant_type(oauth, grant_type):
    assert_oauth_error(oauth.token(grant_type=grant_type), "unsupported_grant_type", 400)


def test_redirect_uri_must_repeat_the_exact_one_approved(oauth):
    oauth.human()
    # Approved with port 53682; the port-agnostic rule is for authorize, not redemption.
    code = oauth.code()
    assert_oauth_error(oauth.exchange(code, redirect_uri=REDIRECT + "/"), "invalid_grant")
