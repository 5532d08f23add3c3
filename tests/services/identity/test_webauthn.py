"""Passkey registration: the real py_webauthn code path against a software authenticator."""

import pytest

from app.extensions import db
from tests.services.identity.auth_rows import challenges, passkeys, session_is_full
from tests.support import WEB_ORIGIN

# the options ---------------------------------------------------------------------


def test_registration_options(signin, client):
    signin.password()
    response = client.post("/auth/webauthn/register/begin")
    assert response.status_code == 200
    options = response.get_json()
    assert options["rp"] == {"name": "Ledger", "id": "localhost"}
    assert options["user"]["name"] == "alice@example.com"
    assert "alice" not in options["user"]["id"]  # the handle is opaque
    assert options["attestation"] == "none"
    assert options["authenticatorSelection"]["userVerification"] == "required"
    assert {"type": "public-key", "alg": -7} in options["pubKeyCredParams"]
    assert options["excludeCredentials"] == []
    assert len(options["challenge"]) >= 43


def test_authentication_options_list_the_users_passkeys(signin, client):
    signin.full()
    signin.register(name="second")
    client.post("/auth/logout")
    signin.password()
    options = client.post("/auth/webauthn/auth/begin").get_json()
    assert options["rpId"] == "localhost"
    assert options["userVerification"] == "required"
    assert {c["id"] for c in options["allowCredentials"]} == set(signin.authenticator.credentials)


def test_registration_excludes_existing_credentials(signin, client):
    signin.full()
    options = client.post("/auth/webauthn/register/begin").get_json()
    assert [c["id"] for c in options["excludeCredentials"]] == list(
        signin.authenticator.credentials
    )


def test_rp_id_and_origin_follow_web_origin(app_config, app, make_user):
    from app import create_app
    from tests.authenticator import SoftAuthenticator
    from tests.testkit import SignIn

    make_user()
    other = create_app({**app_config, "WEB_ORIGIN": "https://Books.Example.org/"})
    try:
        signin = SignIn(other.test_client(), SoftAuthenticator())  # localhost RP and origin
        signin.password()
        options = signin.client.post("/auth/webauthn/register/begin").get_json()
        assert options["rp"]["id"] == "books.example.org"
        # right origin, the old RP ID; then the right RP ID from the options, the old origin
        assert (
            signin.register(rp_id="localhost", origin="https://books.example.org").status_code
            == 400
        )
        assert signin.register().status_code == 400
        signin.authenticator = SoftAuthenticator("books.example.org", "https://books.example.org")
        assert signin.register().status_code == 200
    finally:
        with other.app_context():
            db.engine.dispose()


# registration: success and refusals ----------------------------------------------------


def test_first_registration_enrols_and_names_the_passkey(app, signin, authenticator):
    signin.password()
    assert signin.register(name="  Work laptop\u202e ").status_code == 200
    (key,) = passkeys(app)
    assert key.name == "Work laptop"
    assert key.credential_id == next(iter(authenticator.credentials))
    assert key.sign_count == 0


@pytest.mark.parametrize(
    "knobs",
    [
        {"user_verified": False},
        {"origin": "http://evil.example:38080"},
        {"origin": "http://localhost:38081"},  # the API's own origin is not the web app's
        {"rp_id": "evil.example"},
        {"challenge": "bm90IHRoZSBjaGFsbGVuZ2U"},
        {"cross_origin": True},  # run in a frame of another origin (py_webauthn ignores it)
    ],
    ids=[
        "no-user-verification",
        "wrong-origin",
        "api-origin",
        "wrong-rp-id",
        "other-challenge",
        "cross-origin",
    ],
)
def test_registration_refusals(app, signin, client, knobs):
    signin.password()
    response = signin.register(**knobs)
    assert response.status_code == 400
    assert set(response.get_json()) == {"error"}
    assert passkeys(app) == [] and not session_is_full(app)
    assert "Set-Cookie" not in response.headers


def test_registration_challenge_is_single_use(app, signin, client, authenticator):
    signin.password()
    options = client.post("/auth/webauthn/register/begin").get_json()
    body = authenticator.create(options, user_verified=False)
    assert client.post("/auth/webauthn/register/finish", json=body).status_code == 400
    # the refused attempt spent the challenge: a correct answer to it is now refused too
    good = authenticator.create(options)
    assert client.post("/auth/webauthn/register/finish", json=good).status_code == 400
    assert challenges(app) == [] and passkeys(app) == []


def test_registration_replay_is_refused(app, signin, client, authenticator):
    signin.password()
    options = client.post("/auth/webauthn/register/begin").get_json()
    body = authenticator.create(options)
    assert client.post("/auth/webauthn/register/finish", json=body).status_code == 200
    replay = client.post("/auth/webauthn/register/finish", json=body)
    assert replay.status_code == 400
    assert len(passkeys(app)) == 1


def test_registration_challenge_expires_after_five_minutes(app, signin, client, clock):
    signin.password()
    options = client.post("/auth/webauthn/register/begin").get_json()
    clock.advance(300)
    body = signin.authenticator.create(options)
    response = client.post("/auth/webauthn/register/finish", json=body)
    assert response.status_code == 400
    assert "expired" in response.get_json()["error"]
    assert passkeys(app) == []


def test_registration_just_inside_five_minutes_works(signin, client, clock):
    signin.password()
    options = client.post("/auth/webauthn/register/begin").get_json()
    clock.advance(299)
    body = signin.authenticator.create(options)
    assert client.post("/auth/webauthn/register/finish", json=body).status_code == 200


def test_finish_without_begin_is_refused(signin, client, authenticator):
    signin.password()
    fake = {"challenge": "AAAA", "rp": {"id": "localhost"}, "user": {"id": "AAAA"}}
    response = client.post("/auth/webauthn/register/finish", json=authenticator.create(fake))
    assert response.status_code == 400


def test_second_enrolment_from_a_half_session_is_403(app, signin, client, authenticator):
    signin.full()
    client.post("/auth/logout")
    signin.password()
    begin = client.post("/auth/webauthn/register/begin")
    assert begin.status_code == 403 and set(begin.get_json()) == {"error"}
    # finish too, even with a challenge that a registration begin had stored earlier
    signin.full()  # full again via the passkey
    options = client.post("/auth/webauthn/register/begin").get_json()
    body = authenticator.create(options)
    client.post("/auth/logout")
    signin.password()
    finish = client.post("/auth/webauthn/register/finish", json=body)
    assert finish.status_code == 403
    assert len(passkeys(app)) == 1 and not session_is_full(app)


def test_full_session_may_add_more_passkeys(app, signin):
    signin.full()
    assert signin.register(name="phone").status_code == 200
    assert sorted(k.name for k in passkeys(app)) == ["Passkey 1", "phone"]


def test_malformed_finish_bodies_are_400(app, signin, client):
    signin.password()
    for body in ({}, {"id": 5}, {"id": "x", "rawId": "x", "type": "public-key", "response": {}}):
        client.post("/auth/webauthn/register/begin")
        response = client.post("/auth/webauthn/register/finish", json=body)
        assert response.status_code == 400, body
        assert set(response.get_json()) == {"error"}
    client.post("/auth/webauthn/register/begin")
    assert client.post("/auth/webauthn/register/finish", data="x").status_code == 415
    assert client.post("/auth/webauthn/register/finish", json=[1]).status_code == 400


def test_begin_refuses_a_form_body(signin, client):
    signin.password()
    assert client.post("/auth/webauthn/register/begin", data={"a": "b"}).status_code == 415
    empty_form = {"data": b"", "content_type": "application/x-www-form-urlencoded"}
    assert client.post("/auth/webauthn/register/begin", **empty_form).status_code == 415
    assert client.post("/auth/webauthn/auth/begin", **empty_form).status_code == 415
    assert client.post("/auth/webauthn/register/begin").status_code == 200


def test_origin_is_compared_exactly(signin):
    signin.password()
    assert signin.register(origin=WEB_ORIGIN + "/").status_code == 400


def test_credential_ids_longer_than_webauthn_allows_are_refused(app, signin):
    signin.password()
    assert signin.register(id_length=1024).status_code == 400
    assert passkeys(app) == []
    assert signin.register(id_length=1023).status_code == 200


def test_elevating_a_session_that_ended_meanwhile_is_refused(app, make_user):
    from app.services.errors import UnauthenticatedError
    from app.services.identity import sessions

    user_id = make_user()
    with app.app_context():
        cookie = sessions.create(user_id)
        session_id = sessions.lookup(cookie).id
        sessions.end(session_id)
        with pytest.raises(UnauthenticatedError):
            sessions.elevate(session_id)
