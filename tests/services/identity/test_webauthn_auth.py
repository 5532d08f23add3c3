"""Passkey authentication: the real py_webauthn code path against a software authenticator."""

import pytest

from tests.services.identity.auth_rows import passkeys, session_is_full

# authentication: success and refusals ---------------------------------------------------


@pytest.fixture
def enrolled(signin, client):
    """Alice has one passkey and holds a fresh half-session."""
    signin.full()
    client.post("/auth/logout")
    signin.password()
    return signin


def test_authentication_updates_counter_and_last_use(app, enrolled, clock):
    assert enrolled.assert_passkey(counter=7).status_code == 200
    (key,) = passkeys(app)
    assert key.sign_count == 7 and key.last_used_at == clock()


@pytest.mark.parametrize(
    "knobs",
    [
        {"user_verified": False},
        {"origin": "http://evil.example:38080"},
        {"rp_id": "evil.example"},
        {"unknown_credential": True},
        {"challenge": "bm90IHRoZSBjaGFsbGVuZ2U"},
        {"cross_origin": True},  # run in a frame of another origin (py_webauthn ignores it)
    ],
    ids=[
        "no-user-verification",
        "wrong-origin",
        "wrong-rp-id",
        "unknown-credential",
        "other-challenge",
        "cross-origin",
    ],
)
def test_authentication_refusals(app, enrolled, client, knobs):
    response = enrolled.assert_passkey(**knobs)
    assert response.status_code == 400
    assert set(response.get_json()) == {"error"}
    assert not session_is_full(app)
    assert client.get("/accounts").status_code == 401


def test_counter_flat_or_backwards_after_nonzero_is_refused(app, enrolled, client):
    assert enrolled.assert_passkey(counter=5).status_code == 200
    client.post("/auth/logout")
    enrolled.password()
    assert enrolled.assert_passkey(counter=5).status_code == 400  # flat
    assert enrolled.assert_passkey(counter=4).status_code == 400  # backwards
    assert enrolled.assert_passkey(counter=0).status_code == 400  # back to zero
    assert passkeys(app)[0].sign_count == 5
    assert enrolled.assert_passkey(counter=6).status_code == 200


def test_counter_that_stays_zero_is_accepted(enrolled, client):
    """Authenticators without a counter always report 0: that is not a replay."""
    assert enrolled.assert_passkey(counter=0).status_code == 200
    client.post("/auth/logout")
    enrolled.password()
    assert enrolled.assert_passkey(counter=0).status_code == 200


def test_authentication_replay_is_refused(enrolled, client, authenticator):
    options = client.post("/auth/webauthn/auth/begin").get_json()
    body = authenticator.get(options, counter=0)
    assert client.post("/auth/webauthn/auth/finish", json=body).status_code == 200
    assert client.post("/auth/webauthn/auth/finish", json=body).status_code == 400


def test_authentication_challenge_expires(enrolled, client, authenticator, clock):
    options = client.post("/auth/webauthn/auth/begin").get_json()
    clock.advance(300)
    body = authenticator.get(options)
    assert client.post("/auth/webauthn/auth/finish", json=body).status_code == 400


def test_authentication_challenge_cannot_finish_a_registration(
    app, enrolled, client, authenticator
):
    assert enrolled.assert_passkey().status_code == 200  # full: registration is allowed
    options = client.post("/auth/webauthn/auth/begin").get_json()
    body = authenticator.get(options)
    # answered on the other finish route: the challenge is spent and nothing is enrolled
    assert client.post("/auth/webauthn/register/finish", json=body).status_code == 400
    assert client.post("/auth/webauthn/auth/finish", json=body).status_code == 400
    assert len(passkeys(app)) == 1


def test_another_users_passkey_is_unknown(app, make_user, client, authenticator):
    from tests.testkit import SignIn

    alice = SignIn(client, authenticator)
    make_user()
    alice.full()
    client.post("/auth/logout")
    make_user("bob@example.com")
    bob = SignIn(client, authenticator)
    bob.password("bob@example.com")
    bob.register()  # bob's own passkey, same authenticator
    client.post("/auth/logout")
    bob.password("bob@example.com")
    options = client.post("/auth/webauthn/auth/begin").get_json()
    alices = next(iter(authenticator.credentials))
    body = authenticator.get(options, credential_id=alices)
    assert client.post("/auth/webauthn/auth/finish", json=body).status_code == 400


def test_auth_begin_without_passkeys_is_400(signin, client):
    signin.password()
    response = client.post("/auth/webauthn/auth/begin")
    assert response.status_code == 400 and set(response.get_json()) == {"error"}


def test_webauthn_routes_refuse_bearer_tokens(client, make_user, mint):
    make_user()
    headers = {"Authorization": f"Bearer {mint()}"}
    for path in ("register/begin", "register/finish", "auth/begin", "auth/finish"):
        response = client.post(f"/auth/webauthn/{path}", json={}, headers=headers)
        assert response.status_code == 401, path
