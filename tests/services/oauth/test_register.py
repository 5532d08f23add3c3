"""POST /oauth/register, the Dynamic client table (24 h reaping, 20-client cap), and
redirect URI matching."""

from datetime import timedelta

import pytest

from app.extensions import db
from app.models import DeviceRecord, OAuthClient
from app.services.oauth import clients
from tests.services.oauth.flow import assert_oauth_error


def register(client, uris=("https://app.example/callback",), **extra):
    body = {"redirect_uris": list(uris)} if uris is not None else {}
    body.update(extra)
    return client.post("/oauth/register", json=body)


def dynamic_ids(app) -> set[str]:
    with app.app_context():
        return set(
            db.session.scalars(db.select(OAuthClient.id).where(OAuthClient.dynamic.is_(True)))
        )


def test_registration_answers_rfc7591_without_a_secret(app, client, clock):
    response = register(
        client, ["http://127.0.0.1/cb", "https://app.example/cb"], client_name="My App"
    )
    assert response.status_code == 201
    assert response.headers["Cache-Control"] == "no-store"
    body = response.get_json()
    assert body["client_id"].startswith("dyn_") and len(body["client_id"]) > 20
    assert body == {
        "client_id": body["client_id"],
        "client_id_issued_at": int(clock().timestamp()),
        "client_name": "My App",
        "redirect_uris": ["http://127.0.0.1/cb", "https://app.example/cb"],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "application_type": "native",
    }
    assert dynamic_ids(app) == {body["client_id"]}


def stored_application_type(app, client_id: str) -> str:
    with app.app_context():
        return db.session.get(OAuthClient, client_id).application_type


@pytest.mark.parametrize("given", ["native", "web"])
def test_application_type_is_accepted_stored_and_returned(app, client, given):
    response = register(client, application_type=given)
    assert response.status_code == 201
    body = response.get_json()
    assert body["application_type"] == given
    assert stored_application_type(app, body["client_id"]) == given


@pytest.mark.parametrize("body", [{}, {"application_type": None}], ids=["absent", "null"])
def test_application_type_defaults_to_native(app, client, body):
    response = register(client, **body)
    assert response.status_code == 201
    assert response.get_json()["application_type"] == "native"
    assert stored_application_type(app, response.get_json()["client_id"]) == "native"


@pytest.mark.parametrize("given", ["browser", "Native", "WEB", "", " web", 1, True, ["web"], {}])
def test_other_application_types_are_invalid_client_metadata(app, client, given):
    body = assert_oauth_error(register(client, application_type=given), "invalid_client_metadata")
    assert "application_type" in body["error_description"]
    assert dynamic_ids(app) == set()


@pytest.mark.parametrize(
    "uri",
    [
        "http://127.0.0.1/callback",
        "http://127.0.0.1:8080/cb",
        "http://[::1]/cb",
        "http://[::1]:9/cb?x=1",
        "https://app.example/cb",
        "https://app.example:8443/a/b",
    ],
)
def test_allowed_redirect_uris(client, uri):
    assert register(client, [uri]).status_code == 201


@pytest.mark.parametrize(
    "uri",
    [
        "http://localhost/cb",
        "http://localhost:8080/cb",
        "http://app.example/cb",
        "http://127.0.0.1/cb#frag",
        "https://app.example/cb#",
        "https://user@app.example/cb",
        "https://user:pw@app.example/cb",
        "http://user@127.0.0.1/cb",
        "myapp://callback",
        "com.example.app:/cb",
        "https://app.example/c b",
        "https://app.example/cb\n",
        " https://a.example/",
        "https:///cb",
        "https://[::1/cb",
        "https://app.example:xx/cb",
        "https://app.example:/cb",
        "",
        42,
        None,
        "https://app.example/caf\u00e9",
    ],
)
def test_refused_redirect_uris(app, client, uri):
    assert_oauth_error(register(client, [uri]), "invalid_redirect_uri")
    assert dynamic_ids(app) == set()


def test_redirect_uris_required_and_at_most_five(app, client):
    assert_oauth_error(register(client, None), "invalid_redirect_uri")
    assert_oauth_error(register(client, []), "invalid_redirect_uri")
    assert_oauth_error(
        client.post("/oauth/register", json={"redirect_uris": "https://a.example/"}),
        "invalid_redirect_uri",
    )
    six = [f"https://app.example/cb{i}" for i in range(6)]
    assert_oauth_error(register(client, six), "invalid_redirect_uri")
    assert register(client, six[:5]).status_code == 201


@pytest.mark.parametrize(
    "given, stored",
    [
        (None, "Unnamed client"),
        ("", "Unnamed client"),
        ("  \u202e\u2066 ", "Unnamed client"),
        ("  Bank  ", "Bank"),
        ("Evil\u202egnp.exe", "Evilgnp.exe"),
        ("A\u200eB\u200fC\u2028D\u2029E\u2066F\u2069G\u202aH", "ABCDEFGH"),
        ("Tab\there\x00\x1b[31m", "Tabhere[31m"),
        ("x" * 61, "x" * 60),
        ("\u00e9" * 70, "\u00e9" * 60),
    ],
)
def test_client_name_is_cleaned_and_capped(client, given, stored):
    extra = {} if given is None else {"client_name": given}
    assert register(client, **extra).get_json()["client_name"] == stored


def test_non_string_name_is_invalid_request(client):
    assert_oauth_error(register(client, client_name=["x"]), "invalid_request")


def test_registration_body_must_be_json(client):
    response = client.post(
        "/oauth/register", data="redirect_uris=x", content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 415


def test_twenty_dynamic_clients_at_most(app, client):
    for _ in range(20):
        assert register(client).status_code == 201
    assert_oauth_error(register(client), "temporarily_unavailable", 429)
    assert len(dynamic_ids(app)) == 20


def test_unused_clients_older_than_24h_are_reaped_before_the_cap(app, client, clock, oauth):
    old = [register(client).get_json()["client_id"] for _ in range(20)]
    clock.advance(hours=24)
    # Exactly 24 h is not "older than 24 hours".
    assert_oauth_error(register(client), "temporarily_unavailable", 429)
    clock.advance(1)
    fresh = register(client)
    assert fresh.status_code == 201
    assert dynamic_ids(app) == {fresh.get_json()["client_id"]}
    assert not set(old) & dynamic_ids(app)


def test_reaping_spares_used_and_referenced_clients_and_takes_device_codes(
    app, client, clock, oauth
):
    used = register(client, ["https://u.example/cb"]).get_json()["client_id"]
    coded = register(client, ["https://c.example/cb"]).get_json()["client_id"]
    tokened = register(client, ["https://t.example/cb"]).get_json()["client_id"]
    with_device = register(client, ["https://d.example/cb"]).get_json()["client_id"]
    idle = register(client).get_json()["client_id"]
    oauth.human()
    oauth.approve(True, client_id=used, redirect_uri="https://u.example/cb")
    oauth.code(client_id=coded, redirect_uri="https://c.example/cb")  # the code row stays
    oauth.pair(client_id=tokened, redirect_uri="https://t.example/cb")
    with app.app_context():
        # `used` keeps only its first-use stamp; the other two keep only their rows.
        db.session.execute(
            db.delete(clients.AuthorizationCode).where(clients.AuthorizationCode.client_id == used)
        )
        db.session.execute(
            db.update(OAuthClient)
            .where(OAuthClient.id.in_([coded, tokened]))
            .values(first_used_at=None)
        )
        db.session.commit()
    assert oauth.device_start(client_id=with_device).status_code == 200
    clock.advance(hours=25)
    assert_oauth_error(register(client, None), "invalid_redirect_uri")  # even a refusal reaps
    assert dynamic_ids(app) == {used, coded, tokened}
    with app.app_context():
        assert db.session.query(DeviceRecord).count() == 0
    assert idle not in dynamic_ids(app) and with_device not in dynamic_ids(app)


def test_a_client_used_once_is_never_reaped(app, client, clock, oauth):
    cid = register(client, ["https://u.example/cb"]).get_json()["client_id"]
    oauth.human()
    oauth.approve(True, client_id=cid, redirect_uri="https://u.example/cb")
    with app.app_context():
        db.session.execute(db.delete(clients.AuthorizationCode))
        db.session.commit()
    clock.advance(days=30)
    register(client)
    assert cid in dynamic_ids(app)


# --- redirect matching (authorize and approve) ------------------------------------------


@pytest.mark.parametrize(
    "registered, presented, matches",
    [
        ("http://127.0.0.1/callback", "http://127.0.0.1/callback", True),
        ("http://127.0.0.1/callback", "http://127.0.0.1:51234/callback", True),
        ("http://127.0.0.1:8000/callback", "http://127.0.0.1:9/callback", True),
        ("http://[::1]/cb", "http://[::1]:4000/cb", True),
        ("http://127.0.0.1/callback", "http://127.0.0.1:51234/callback/", False),
        ("http://127.0.0.1/callback", "http://127.0.0.1:51234/other", False),
        ("http://127.0.0.1/callback", "http://127.0.0.1:51234/callback?x=1", False),
        ("http://127.0.0.1/callback", "http://[::1]:51234/callback", False),
        ("http://127.0.0.1/callback", "http://localhost:51234/callback", False),
        ("http://127.0.0.1/callback", "http://127.0.0.1:/callback", False),
        ("http://127.0.0.1/callback", "http://127.0.0.1:x/callback", False),
        ("http://127.0.0.1/callback", "https://127.0.0.1/callback", False),
        ("http://127.0.0.1/callback", "http://evil@127.0.0.1:5/callback", False),
        ("http://127.0.0.1/callback", "http://127.0.0.1:5@evil.example/callback", False),
        ("http://u@127.0.0.1/cb", "http://u@127.0.0.1/cb", True),
        ("http://u@127.0.0.1/cb", "http://u@127.0.0.1:5/cb", False),
        ("http://localhost/cb", "http://localhost:5/cb", False),
        ("https://app.example/cb", "https://app.example:443/cb", False),
        ("https://app.example/cb", "https://APP.example/cb", False),
    ],
)
def test_redirect_matching(app, registered, presented, matches):
    with app.app_context():
        assert clients.redirect_matches(registered, presented) is matches


def test_first_party_loopback_redirect_on_any_port(client, oauth):
    for uri in (
        "http://127.0.0.1/callback",
        "http://127.0.0.1:1/callback",
        "http://127.0.0.1:65535/callback",
    ):
        query = oauth.params(redirect_uri=uri)
        assert client.get("/oauth/authorize", query_string=query).status_code == 303


def test_reaped_client_expiry_boundary_constant():
    assert timedelta(hours=24) == clients.UNUSED_CLIENT_TTL
