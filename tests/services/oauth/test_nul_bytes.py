"""A NUL character in any text that names something is an unknown name, never a 500.

PostgreSQL's text columns cannot hold NUL (U+0000): comparing one with a parameter that
contains it fails in the driver ("PostgreSQL text fields cannot contain NUL"), which
the service answered with 500 where SQLite simply found nothing. Found by the
10,000-case fuzz run on PostgreSQL (issue 28, docs/reliability.md): `GET
/oauth/client_info` with a generated client_id.
"""

from __future__ import annotations

import pytest

from tests.services.oauth.flow import FORM, assert_oauth_error

NUL_ID = "svc-cli\x00x"


def test_client_info_with_a_nul_in_the_client_id_is_an_unknown_client(oauth, client):
    oauth.human()
    response = client.get("/oauth/client_info", query_string={"client_id": NUL_ID})
    assert_oauth_error(response, "invalid_client", 401)


@pytest.mark.parametrize(
    "form",
    [
        {"grant_type": "refresh_token", "refresh_token": "x", "client_id": NUL_ID},
        {"grant_type": "client_credentials", "client_id": NUL_ID},
    ],
)
def test_the_token_endpoint_with_a_nul_in_the_client_id_never_fails(client, form):
    response = client.post("/oauth/token", data=form, content_type=FORM)
    assert 400 <= response.status_code < 500, response.get_data(as_text=True)


def test_device_authorization_with_a_nul_in_the_client_id_never_fails(client):
    response = client.post(
        "/oauth/device_authorization", data={"client_id": NUL_ID}, content_type=FORM
    )
    assert 400 <= response.status_code < 500, response.get_data(as_text=True)


def test_a_login_with_a_nul_in_the_email_is_refused_not_a_500(client, make_user):
    make_user()
    response = client.post(
        "/auth/login", json={"email": "alice@example.com\x00", "password": "wrong"}
    )
    assert response.status_code == 400, response.get_data(as_text=True)
    assert response.get_json() == {"error": "email must not contain NUL characters"}
