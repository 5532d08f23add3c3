"""The OAuth error table (docs/oauth.md "Errors"): every code with its status, the shape,
and the generic 500."""

import pytest
from sqlalchemy.exc import OperationalError

from app.services.oauth import codes, errors
from tests.services.oauth.flow import assert_oauth_error

TABLE = [
    (errors.InvalidRequest, "invalid_request", 400),
    (errors.InvalidGrant, "invalid_grant", 400),
    (errors.InvalidClient, "invalid_client", 401),
    (errors.InvalidRedirectUri, "invalid_redirect_uri", 400),
    (errors.UnsupportedGrantType, "unsupported_grant_type", 400),
    (errors.AuthorizationPending, "authorization_pending", 400),
    (errors.SlowDown, "slow_down", 400),
    (errors.AccessDenied, "access_denied", 400),
    (errors.ExpiredToken, "expired_token", 400),
    (errors.TemporarilyUnavailable, "temporarily_unavailable", 429),
    (errors.ServerError, "server_error", 500),
]


@pytest.mark.parametrize("cls, code, status", TABLE)
def test_each_error_class_carries_its_code_and_status(cls, code, status):
    err = cls("why")
    assert (err.error, err.status, err.description) == (code, status, "why")
    assert err.commit is False


def test_the_session_only_refusal_is_403_invalid_client():
    err = errors.session_only_refusal()
    assert (err.error, err.status) == ("invalid_client", 403)


def test_a_data_store_failure_is_a_generic_server_error(
    generic_500, app, oauth, monkeypatch, caplog
):
    oauth.human()
    code = oauth.code()

    def broken(*args, **kwargs):
        raise OperationalError("INSERT INTO tokens (id) VALUES (%s)", {}, Exception("disk full"))

    monkeypatch.setattr(codes, "issue_pair", broken)
    response = oauth.exchange(code)
    body = assert_oauth_error(response, "server_error", 500)
    assert body["error_description"] == errors.GENERIC_SERVER_ERROR
    text = response.get_data(as_text=True).lower()
    assert "insert" not in text and "tokens" not in text and "disk full" not in text
    assert "disk full" in caplog.text  # the details went to the log
    # The failed unit of work was rolled back: the code was not spent by the fault.
    monkeypatch.undo()
    assert oauth.exchange(code).status_code == 200


def test_every_oauth_error_response_is_no_store_json(client):
    response = client.post(
        "/oauth/token",
        data={"grant_type": "nope"},
        content_type="application/x-www-form-urlencoded",
    )
    assert response.mimetype == "application/json"
    assert set(response.get_json()) == {"error", "error_description"}
    assert response.headers["Cache-Control"] == "no-store"
