"""Client ID metadata documents (docs/oauth.md "Client ID metadata
documents"): a client_id that is an https URL is fetched from a real local HTTPS server
(tests/document_server.py, a throwaway CA given as SSL_CERT_FILE), checked, cached in
the database by HTTP caching headers, and refused (401 invalid_client, as an unknown
client) when it cannot be used. The SSRF guard is checked by the server seeing nothing.
"""

from __future__ import annotations

import json
import socket
import threading
from datetime import timedelta
from email.message import Message

import pytest

from app.extensions import db
from app.models import ClientDocument, OAuthClient
from app.services.oauth import document_fetch, metadata_documents
from tests.services.oauth.flow import API_ORIGIN, DEVICE_GRANT, FORM, REDIRECT, assert_oauth_error

DOC = "/clients/assistant.json"


@pytest.fixture
def docs(app, document_server, monkeypatch):
    """The document server, trusted (SSL_CERT_FILE) and reachable (private addresses
    allowed, as on an intranet)."""
    monkeypatch.setenv("SSL_CERT_FILE", str(document_server.ca_file))
    app.config["OAUTH_CIMD_ALLOW_PRIVATE"] = True
    return document_server


def authorize(client, oauth, client_id, **overrides):
    return client.get(
        "/oauth/authorize", query_string=oauth.params(client_id=client_id, **overrides)
    )


def client_info(client, client_id):
    return client.get("/oauth/client_info", query_string={"client_id": client_id})


def device_start(client, client_id):
    return client.post(
        "/oauth/device_authorization",
        data={"client_id": client_id, "resource": API_ORIGIN},
        content_type=FORM,
    )


def client_rows(app) -> set[str]:
    with app.app_context():
        return set(db.session.scalars(db.select(OAuthClient.id)))


def stored_copy(app, url):
    with app.app_context():
        row = db.session.get(ClientDocument, url)
        if row is not None:
            db.session.expunge(row)
        return row


# --- a usable document ---------------------------------------------------------------


def test_a_document_client_is_shown_approved_and_gets_tokens(app, client, oauth, docs, clock):
    url = docs.document(DOC, client_name="  Helper \u202eBot\u2066  ", redirect_uris=[REDIRECT])
    oauth.human()
    hop = authorize(client, oauth, url)
    assert hop.status_code == 303, hop.get_data(as_text=True)
    info = client_info(client, url)
    assert info.status_code == 200
    assert info.get_json() == {
        "id": url,
        "name": "Helper Bot",  # cleaned as for a registration
        "dynamic": True,
        "first_use": True,
        "redirect_uris": [REDIRECT],
    }
    pair = oauth.pair(client_id=url)
    assert pair["access_token"] and pair["refresh_token"]
    assert client_info(client, url).get_json()["first_use"] is False
    # One fetch served all of it (no caching header: kept DEFAULT_LIFETIME, one hour).
    assert docs.requests == [DOC]
    assert docs.request_headers[0]["Host"] == f"127.0.0.1:{docs.port}"
    assert docs.request_headers[0]["Accept"] == "application/json"
    copy = stored_copy(app, url)
    assert (copy.fetched_at, copy.expires_at) == (clock(), clock() + timedelta(hours=1))
    assert json.loads(copy.document) == {
        "client_name": "Helper Bot",
        "redirect_uris": [REDIRECT],
        "application_type": "native",
    }
    # The connection is listed under the document's URL and cleaned name.
    listed = client.get("/auth/tokens").get_json()
    assert [(c["client_id"], c["client_name"]) for c in listed if c["client_id"] == url] == [
        (url, "Helper Bot")
    ]
    # A refresh needs no fetch either.
    refreshed = oauth.token(
        grant_type="refresh_token", refresh_token=pair["refresh_token"], client_id=url
    )
    assert refreshed.status_code == 200
    assert docs.requests == [DOC]


def test_a_document_client_uses_the_device_flow(app, client, oauth, docs):
    url = docs.document(DOC, client_name="TV app", redirect_uris=[REDIRECT])
    started = device_start(client, url)
    assert started.status_code == 200, started.get_json()
    grant = started.get_json()
    oauth.human()
    shown = client.get("/oauth/device_info", query_string={"user_code": grant["user_code"]})
    assert shown.status_code == 200
    assert shown.get_json()["client"] == {
        "id": url,
        "name": "TV app",
        "dynamic": True,
        "first_use": True,
        "redirect_uris": [REDIRECT],
    }
    approved = client.post(
        "/oauth/device/approve", json={"user_code": grant["user_code"], "approve": True}
    )
    assert approved.status_code == 204
    tokens = oauth.token(grant_type=DEVICE_GRANT, device_code=grant["device_code"], client_id=url)
    assert tokens.status_code == 200, tokens.get_json()
    assert docs.requests == [DOC]


def test_a_2000_character_url_is_a_client_id(app, client, oauth, docs):
    path = "/c/" + "a" * (2000 - len(docs.url("/c/")) - len(".json")) + ".json"
    url = docs.document(path, client_name="Long", redirect_uris=[REDIRECT])
    assert len(url) == 2000
    oauth.human()
    assert client_info(client, url).status_code == 200
    assert oauth.pair(client_id=url)["access_token"]
    too_long = url[:-5] + "a.json"  # 2,001 characters: not a document id, so unknown
    docs.document(too_long[len(docs.origin) :], client_id=too_long, redirect_uris=[REDIRECT])
    assert_oauth_error(client_info(client, too_long), "invalid_client", 401)
    assert docs.requests == [path]


def test_a_changed_name_is_shown_after_the_next_fetch(app, client, oauth, docs, clock):
    url = docs.document(
        DOC, client_name="First", redirect_uris=[REDIRECT], headers={"Cache-Control": "max-age=60"}
    )
    oauth.human()
    assert client_info(client, url).get_json()["name"] == "First"
    docs.document(DOC, client_name="Second", redirect_uris=[REDIRECT])
    assert client_info(client, url).get_json()["name"] == "First"  # still fresh
    clock.advance(61)
    assert client_info(client, url).get_json()["name"] == "Second"
    assert docs.requests == [DOC, DOC]


# --- documents that cannot be used: the client is unknown -----------------------------


def refuses_everywhere(app, client, oauth, url):
    """401 invalid_client on every request that names the client; nothing stored."""
    oauth.human()
    for response in (
        authorize(client, oauth, url),
        client_info(client, url),
        oauth.approve(True, client_id=url),
        device_start(client, url),
    ):
        body = assert_oauth_error(response, "invalid_client", 401)
        assert body["error_description"] == "unknown client_id"  # says nothing of why
    assert url not in client_rows(app)
    assert stored_copy(app, url) is None


def test_a_document_naming_another_client_id_is_refused(app, client, oauth, docs, clock):
    url = docs.document(DOC, client_id=docs.url("/other.json"), redirect_uris=[REDIRECT])
    refuses_everywhere(app, client, oauth, url)
    # Nothing is cached from an unusable document, but the failure is remembered for
    # 60 seconds: the other three requests made no fetch.
    assert docs.requests == [DOC]
    clock.advance(61)
    assert_oauth_error(client_info(client, url), "invalid_client", 401)
    assert docs.requests == [DOC, DOC]


@pytest.mark.parametrize(
    "client_id_of",
    [
        lambda url: url + "/",
        lambda url: url.replace("https://127.0.0.1", "https://localhost"),
        lambda url: url.upper(),
        lambda url: None,
        lambda url: [url],
    ],
    ids=["trailing-slash", "other-host", "case", "missing", "array"],
)
def test_the_client_id_must_equal_the_url_exactly(app, client, oauth, docs, client_id_of):
    url = docs.url(DOC)
    docs.document(DOC, client_id=client_id_of(url), redirect_uris=[REDIRECT])
    oauth.human()
    assert_oauth_error(client_info(client, url), "invalid_client", 401)


@pytest.mark.parametrize("with_length", [True, False], ids=["content-length", "read-to-close"])
def test_a_document_over_64_kib_is_refused(app, client, oauth, docs, with_length):
    url = docs.url(DOC)
    document = {"client_id": url, "redirect_uris": [REDIRECT], "client_name": "Big"}
    padding = 64 * 1024 - len(json.dumps({**document, "pad": ""}))
    exactly = json.dumps({**document, "pad": "x" * padding}).encode()
    assert len(exactly) == 64 * 1024
    headers = {"Content-Type": "application/json"}
    docs.answer(DOC, body=exactly, headers=headers, content_length=with_length)
    oauth.human()
    assert client_info(client, url).status_code == 200  # 64 KiB exactly is fine
    docs.answer(DOC, body=exactly + b" ", headers=headers, content_length=with_length)
    with app.app_context():
        db.session.execute(db.delete(ClientDocument))  # forget the copy: fetch again
        db.session.commit()
    assert_oauth_error(client_info(client, url), "invalid_client", 401)


@pytest.mark.parametrize(
    "content_type",
    [None, "text/html", "text/plain", "application/jsonp", "application/+json", "text/json"],
)
def test_a_document_that_is_not_json_typed_is_refused(app, client, oauth, docs, content_type):
    url = docs.url(DOC)
    body = json.dumps({"client_id": url, "redirect_uris": [REDIRECT]}).encode()
    headers = {"Content-Type": content_type} if content_type else {}
    docs.answer(DOC, body=body, headers=headers)
    refuses_everywhere(app, client, oauth, url)


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "application/client-metadata+json"]
)
def test_json_media_types_are_accepted(app, client, oauth, docs, content_type):
    url = docs.url(DOC)
    body = json.dumps({"client_id": url, "redirect_uris": [REDIRECT]}).encode()
    docs.answer(DOC, body=body, headers={"Content-Type": content_type})
    oauth.human()
    assert client_info(client, url).get_json()["name"] == "Unnamed client"


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[1, 2]",
        b'"a string"',
        b'{"client_id": "\\ud800"}',
        b"\xff\xfe\x00",
    ],
)
def test_a_body_that_is_not_a_json_object_is_refused(app, client, oauth, docs, body):
    url = docs.answer(DOC, body=body, headers={"Content-Type": "application/json"})
    refuses_everywhere(app, client, oauth, url)


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"redirect_uris": []},
        {"redirect_uris": ["http://localhost:9/cb"]},
        {"redirect_uris": ["myapp://cb"]},
        {"redirect_uris": [f"https://a.example/{i}" for i in range(6)]},
        {"redirect_uris": [REDIRECT], "client_name": 42},
        {"redirect_uris": [REDIRECT], "application_type": "browser"},
        {"redirect_uris": [REDIRECT], "client_secret": "s3cret"},
        {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_basic"},
    ],
    ids=[
        "no-redirects",
        "empty-redirects",
        "localhost",
        "custom-scheme",
        "six-redirects",
        "name-not-text",
        "application-type",
        "secret",
        "secret-method",
    ],
)
def test_metadata_follows_the_registration_rules(app, client, oauth, docs, fields):
    url = docs.document(DOC, **fields)
    refuses_everywhere(app, client, oauth, url)


def test_the_redirect_uri_must_be_one_the_document_lists(app, client, oauth, docs):
    url = docs.document(DOC, redirect_uris=["https://app.example/cb"])
    oauth.human()
    assert_oauth_error(authorize(client, oauth, url), "invalid_request")
    assert authorize(client, oauth, url, redirect_uri="https://app.example/cb").status_code == 303


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirecting_document_is_refused_and_not_followed(app, client, oauth, docs, status):
    target = docs.document("/moved.json", redirect_uris=[REDIRECT])
    url = docs.answer(DOC, status=status, headers={"Location": target})
    oauth.human()
    assert_oauth_error(client_info(client, url), "invalid_client", 401)
    assert docs.requests == [DOC]  # the Location was never asked for
    assert url not in client_rows(app)


@pytest.mark.parametrize("status", [404, 500, 204])
def test_other_statuses_are_refused(app, client, oauth, docs, status):
    url = docs.answer(DOC, status=status, body=b"", headers={"Content-Type": "application/json"})
    oauth.human()
    assert_oauth_error(client_info(client, url), "invalid_client", 401)


def test_an_http_url_is_never_fetched(app, client, oauth, docs):
    docs.document(DOC, redirect_uris=[REDIRECT])
    url = f"http://127.0.0.1:{docs.port}{DOC}"
    refuses_everywhere(app, client, oauth, url)
    assert docs.connections == 0 and docs.requests == []


@pytest.mark.parametrize(
    "url_of",
    [
        lambda d: d.origin,
        lambda d: d.origin + "/",
        lambda d: d.url("/a/../clients/assistant.json"),
        lambda d: d.url("/./clients/assistant.json"),
        lambda d: d.origin.replace("https://", "https://user@") + DOC,
        lambda d: d.url(DOC + "#frag"),
        lambda d: f"https://127.0.0.1:0{DOC}",
    ],
    ids=["no-path", "root-path", "dot-dot", "dot", "user-info", "fragment", "port-zero"],
)
def test_urls_that_are_not_document_ids_are_unknown_clients(app, client, oauth, docs, url_of):
    docs.document(DOC, redirect_uris=[REDIRECT])
    refuses_everywhere(app, client, oauth, url_of(docs))
    assert docs.connections == 0 and docs.requests == []


def test_a_private_address_is_not_reached_while_the_setting_is_off(app, client, oauth, docs, clock):
    app.config["OAUTH_CIMD_ALLOW_PRIVATE"] = False
    url = docs.document(DOC, redirect_uris=[REDIRECT])
    refuses_everywhere(app, client, oauth, url)
    assert docs.connections == 0 and docs.requests == []  # not even a TCP connection
    app.config["OAUTH_CIMD_ALLOW_PRIVATE"] = True  # the setting lifts exactly that rule
    clock.advance(61)  # once the failure is no longer remembered
    assert client_info(client, url).status_code == 200
    assert docs.requests == [DOC]


@pytest.fixture
def dns(monkeypatch):
    """Names the test resolves itself: {name: [address, ...]}; others resolve as usual."""
    names: dict[str, list[str]] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host not in names:
            return real(host, port, *args, **kwargs)
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in names[host]
        ]

    monkeypatch.setattr(document_fetch.socket, "getaddrinfo", getaddrinfo)
    return names


def test_a_public_name_for_a_private_address_is_not_reached(app, client, oauth, docs, dns):
    """The check is on the address connected to, not the name: a name that resolves (or
    is rebound) to loopback is refused before any connection."""
    app.config["OAUTH_CIMD_ALLOW_PRIVATE"] = False
    dns["docs.example"] = ["127.0.0.1"]
    url = f"https://docs.example:{docs.port}{DOC}"
    docs.document(DOC, client_id=url, redirect_uris=[REDIRECT])
    refuses_everywhere(app, client, oauth, url)
    dns["docs.example"] = ["169.254.169.254", "10.0.0.1", "::1", "fe80::1"]
    oauth.human()
    assert_oauth_error(client_info(client, url), "invalid_client", 401)
    assert docs.connections == 0 and docs.requests == []


def test_the_certificate_must_name_the_host(app, client, oauth, docs, dns):
    """docs.example reaches the server, whose certificate names 127.0.0.1 and localhost
    only: the handshake fails, no request is sent."""
    dns["docs.example"] = ["127.0.0.1"]
    url = f"https://docs.example:{docs.port}{DOC}"
    docs.document(DOC, client_id=url, redirect_uris=[REDIRECT])
    refuses_everywhere(app, client, oauth, url)
    assert docs.connections == 1 and docs.requests == []  # the failure is remembered


def test_the_certificate_must_be_trusted(app, client, oauth, docs, monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE")  # the system store does not know the test CA
    url = docs.document(DOC, redirect_uris=[REDIRECT])
    refuses_everywhere(app, client, oauth, url)
    assert docs.requests == []  # the handshake failed before any request


def test_a_silent_server_is_given_up_on(app, client, oauth, docs, monkeypatch):
    monkeypatch.setattr(document_fetch, "TIMEOUT_SECONDS", 0.5)
    url = docs.document(DOC, redirect_uris=[REDIRECT])
    docs.answers[DOC].hang = threading.Event()
    oauth.human()
    assert_oauth_error(client_info(client, url), "invalid_client", 401)
    assert docs.requests == [DOC]


def test_the_reason_is_logged_not_answered(app, client, oauth, docs, caplog):
    url = docs.document(DOC, client_id=docs.url("/other.json"), redirect_uris=[REDIRECT])
    oauth.human()
    with caplog.at_level("WARNING", logger="app.oauth.metadata_documents"):
        body = assert_oauth_error(client_info(client, url), "invalid_client", 401)
    assert body == {"error": "invalid_client", "error_description": "unknown client_id"}
    assert "client_id is not the document's URL" in caplog.text and url in caplog.text


def test_a_document_that_turns_unusable_makes_the_client_unknown(app, client, oauth, docs, clock):
    url = docs.document(DOC, redirect_uris=[REDIRECT], headers={"Cache-Control": "max-age=300"})
    oauth.human()
    pair = oauth.pair(client_id=url)
    docs.answer(DOC, status=404)
    clock.advance(301)
    refuses_everywhere_but_rows_stay = [
        authorize(client, oauth, url),
        client_info(client, url),
        device_start(client, url),
    ]
    for response in refuses_everywhere_but_rows_stay:
        assert_oauth_error(response, "invalid_client", 401)
    assert stored_copy(app, url) is None
    # Tokens already issued keep working (the client row stays for them).
    bearer = {"Authorization": "Bearer " + pair["access_token"]}
    assert app.test_client().get("/accounts", headers=bearer).status_code == 200
    assert url in client_rows(app)


def test_document_clients_do_not_count_towards_the_registration_cap(app, client, oauth, docs):
    url = docs.document(DOC, redirect_uris=[REDIRECT])
    oauth.human()
    assert client_info(client, url).status_code == 200
    for _ in range(20):
        assert client.post("/oauth/register", json={"redirect_uris": [REDIRECT]}).status_code == 201
    full = client.post("/oauth/register", json={"redirect_uris": [REDIRECT]})
    assert_oauth_error(full, "temporarily_unavailable", 429)


def test_an_unused_document_client_is_reaped_and_fetched_again(app, client, oauth, docs, clock):
    url = docs.document(DOC, redirect_uris=[REDIRECT], headers={"Cache-Control": "max-age=600"})
    oauth.human()
    assert client_info(client, url).status_code == 200
    clock.advance(hours=24, seconds=1)
    assert client.post("/oauth/register", json={"redirect_uris": [REDIRECT]}).status_code == 201
    assert url not in client_rows(app) and stored_copy(app, url) is None
    assert client_info(client, url).get_json()["first_use"] is True
    assert docs.requests == [DOC, DOC]


# --- caching ------------------------------------------------------------------------


def test_max_age_keeps_the_copy_until_it_runs_out(app, client, oauth, docs, clock):
    url = docs.document(DOC, redirect_uris=[REDIRECT], headers={"Cache-Control": "max-age=600"})
    oauth.human()
    assert client_info(client, url).status_code == 200
    clock.advance(599)
    assert authorize(client, oauth, url).status_code == 303
    assert client_info(client, url).status_code == 200
    assert docs.requests == [DOC]  # no second request within max-age
    clock.advance(1)
    assert client_info(client, url).status_code == 200
    assert docs.requests == [DOC, DOC]
    assert stored_copy(app, url).expires_at == clock() + timedelta(seconds=600)


@pytest.mark.parametrize(
    "cache_control", ["no-store", "max-age=0", "no-cache", "private, no-store", "max-age=abc"]
)
def test_no_store_is_fetched_again_at_each_use(app, client, oauth, docs, cache_control):
    url = docs.document(DOC, redirect_uris=[REDIRECT], headers={"Cache-Control": cache_control})
    oauth.human()
    assert client_info(client, url).status_code == 200
    assert client_info(client, url).status_code == 200
    assert authorize(client, oauth, url).status_code == 303
    assert docs.requests == [DOC, DOC, DOC]


def test_caching_is_shared_through_the_database(app, make_app, client, oauth, docs):
    """A second app (another process, as far as the database can tell) uses the copy."""
    url = docs.document(DOC, redirect_uris=[REDIRECT], headers={"Cache-Control": "max-age=600"})
    oauth.human()
    assert client_info(client, url).status_code == 200
    other = make_app(OAUTH_CIMD_ALLOW_PRIVATE=True)
    started = other.test_client().post(
        "/oauth/device_authorization",
        data={"client_id": url, "resource": API_ORIGIN},
        content_type=FORM,
    )
    assert started.status_code == 200
    assert docs.requests == [DOC]


def caching(**headers) -> Message:
    message = Message()
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    return message


@pytest.mark.parametrize(
    "headers, seconds",
    [
        ({}, 3600),
        ({"Cache-Control": "max-age=120"}, 120),
        ({"Cache-Control": "public, max-age=120, must-revalidate"}, 120),
        ({"Cache-Control": 'max-age="120"'}, 120),
        ({"Cache-Control": "max-age=120", "Age": "100"}, 20),
        ({"Cache-Control": "max-age=120", "Age": "500"}, 0),
        ({"Cache-Control": "max-age=999999"}, 24 * 3600),
        ({"Cache-Control": "max-age=-5"}, 0),
        ({"Cache-Control": "no-store, max-age=600"}, 0),
        ({"Cache-Control": "max-age=600", "Expires": "Thu, 01 Jan 1970 00:00:00 GMT"}, 600),
        (
            {
                "Date": "Sat, 21 Nov 2026 12:00:00 GMT",
                "Expires": "Sat, 21 Nov 2026 12:30:00 GMT",
            },
            1800,
        ),
        ({"Expires": "Sat, 21 Nov 2026 14:00:00 GMT"}, 7200),  # no Date: against the clock
        ({"Expires": "Sat, 21 Nov 2027 14:00:00 GMT"}, 24 * 3600),
        ({"Expires": "0"}, 0),
        ({"Expires": "Thu, 01 Jan 1970 00:00:00 GMT"}, 0),
    ],
)
def test_lifetime_from_the_caching_headers(clock, headers, seconds):
    assert metadata_documents.lifetime(caching(**headers), clock()) == timedelta(seconds=seconds)


# --- the pure rules ------------------------------------------------------------------


@pytest.mark.parametrize(
    "address, public",
    [
        ("93.184.216.34", True),
        ("2606:2800:220:1:248:1893:25c8:1946", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),  # cloud metadata endpoints
        ("100.64.0.1", False),  # shared address space (carrier-grade NAT)
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("239.255.255.250", False),
        ("240.0.0.1", False),
        ("255.255.255.255", False),
        ("192.0.2.1", False),  # documentation
        ("::1", False),
        ("::", False),
        ("fe80::1", False),
        ("fe80::1%eth0", False),
        ("fc00::1", False),
        ("fec0::1", False),  # site-local (deprecated, RFC 3879)
        ("feff:ffff::1", False),  # the top of fec0::/10
        ("ff02::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("::ffff:93.184.216.34", True),
        ("64:ff9b::7f00:1", False),  # NAT64 of 127.0.0.1
        ("64:ff9b::5db8:d822", True),  # NAT64 of 93.184.216.34
        ("2002:5db8:d822::", True),  # 6to4 of 93.184.216.34
        ("2001:0:5db8:d822::", False),  # Teredo
        ("2002:7f00:1::", False),  # 6to4 of 127.0.0.1
        ("2001:db8::1", False),
        ("not an address", False),
    ],
)
def test_only_global_addresses_are_public(address, public):
    assert document_fetch.is_public_address(address) is public


@pytest.mark.parametrize(
    "client_id, document",
    [
        ("https://app.example/client.json", True),
        ("https://app.example:8443/a/b?c=d", True),
        ("https://app.example/", False),
        ("https://app.example", False),
        ("http://app.example/client.json", False),
        ("HTTPS://app.example/client.json", False),
        ("https:///client.json", False),
        ("https://u:p@app.example/client.json", False),
        ("https://app.example/client.json#x", False),
        ("https://app.example/a b", False),
        ("https://app.example/a/../b", False),
        ("https://app.example/a/%2e%2e/b", False),
        ("https://app.example/a/%2E%2e/b", False),
        ("https://app.example/a/.%2E/b", False),
        ("https://app.example/%2e/b", False),
        ("https://app.example/a/%2e%2e", False),
        ("https://app.example/a%2eb/c.json", True),  # an encoded dot inside a name
        ("https://app.example:99999/a", False),
        ("https://app.example/caf\u00e9", False),
        ("svc-cli", False),
        ("dyn_0123", False),
        (None, False),
        (42, False),
        ("https://app.example/" + "a" * 1980, True),
        ("https://app.example/" + "a" * 1981, False),
    ],
)
def test_which_client_ids_are_documents(client_id, document):
    assert metadata_documents.is_document_url(client_id) is document
