"""Limits on client ID metadata documents (docs/oauth.md, "Client ID metadata
documents", the limits): a refused request stores nothing, fat documents are unusable,
unreferenced document clients are capped (least recently used forgotten), a fetch holds
at most two serving threads, a failed fetch is remembered for 60 seconds in the
database, device_authorization checks its rate before it fetches, first-party names are
reserved, a changed document is new again, and a device start racing the reaping of its
client is answered properly.
"""

from __future__ import annotations

import http.client
import threading
import time
from urllib.parse import urlencode

import pytest
from sqlalchemy import func, select

from app import store
from app.extensions import db
from app.models import ClientDocument, DeviceRecord, DocumentFailure, OAuthClient
from app.services.oauth import clients, device, document_fetch, metadata_documents
from tests.document_server import SilentHost
from tests.services.oauth.flow import API_ORIGIN, FORM, REDIRECT, assert_oauth_error, pkce_pair

DOC = "/clients/assistant.json"
FAT_URIS = [f"https://app.example/{i}/" + "x" * 1970 for i in range(5)]  # 5 x ~1,990 chars


@pytest.fixture
def docs(app, document_server, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(document_server.ca_file))
    app.config["OAUTH_CIMD_ALLOW_PRIVATE"] = True
    return document_server


def client_info(client, client_id):
    return client.get("/oauth/client_info", query_string={"client_id": client_id})


def device_start(client, client_id, **form):
    return client.post(
        "/oauth/device_authorization",
        data={"client_id": client_id, "resource": API_ORIGIN, **form},
        content_type=FORM,
    )


def counts(app) -> dict[str, int]:
    with app.app_context():
        return {
            model.__tablename__: db.session.scalar(select(func.count()).select_from(model))
            for model in (OAuthClient, ClientDocument, DocumentFailure)
        }


def client_ids(app) -> set[str]:
    with app.app_context():
        return set(db.session.scalars(select(OAuthClient.id)))


def unreferenced(app) -> set[str]:
    with app.app_context():
        return set(db.session.scalars(metadata_documents.unreferenced_clients()))


# --- item 1: nothing stored for a refused request; fat documents; the cap ------------


def test_refused_requests_store_no_client_and_no_document(app, client, oauth, docs):
    """The attack of the review: valid, fat documents named by requests that are refused
    must not grow the database (before, each stored ~20 KB and answered 400)."""
    oauth.human()
    before = counts(app)
    for i in range(10):
        url = docs.document(f"/fat/{i}.json", client_name="Fat", redirect_uris=FAT_URIS)
        refused = [
            client.get("/oauth/authorize", query_string=oauth.params(client_id=url)),
            client.get(
                "/oauth/authorize",
                query_string=oauth.params(
                    client_id=url, redirect_uri=FAT_URIS[0], code_challenge="short"
                ),
            ),
            client.get(
                "/oauth/authorize",
                query_string=oauth.params(client_id=url, redirect_uri=FAT_URIS[0], resource="x"),
            ),
            oauth.approve(True, client_id=url),  # redirect_uri not listed
            device_start(client, url, resource="https://elsewhere.example"),
        ]
        for response in refused:
            assert response.status_code == 400, response.get_data(as_text=True)
    assert counts(app) == before
    assert len(docs.requests) == 50  # each was fetched, and nothing of it kept


def test_the_document_of_a_request_that_succeeds_is_kept(app, client, oauth, docs):
    url = docs.document(DOC, redirect_uris=FAT_URIS)
    oauth.human()
    hop = client.get(
        "/oauth/authorize", query_string=oauth.params(client_id=url, redirect_uri=FAT_URIS[1])
    )
    assert hop.status_code == 303
    assert url in client_ids(app)
    assert client_info(client, url).status_code == 200
    assert docs.requests == [DOC]


def test_a_redirect_uri_over_2000_characters_makes_a_document_unusable(app, client, oauth, docs):
    oauth.human()
    exactly = "https://app.example/" + "a" * (2000 - len("https://app.example/"))
    assert len(exactly) == 2000
    fine = docs.document("/fine.json", redirect_uris=[REDIRECT, exactly])
    assert client_info(client, fine).status_code == 200
    too_long = docs.document("/long.json", redirect_uris=[REDIRECT, exactly + "b"])
    body = assert_oauth_error(client_info(client, too_long), "invalid_client", 401)
    assert body["error_description"] == "unknown client_id"
    assert too_long not in client_ids(app)
    # Registration follows the same rule.
    registered = client.post("/oauth/register", json={"redirect_uris": [exactly + "b"]})
    assert_oauth_error(registered, "invalid_redirect_uri")


@pytest.mark.slow  # a big loop: seconds (README, the quick loop)
def test_at_most_100_unreferenced_document_clients_are_kept(app, client, oauth, docs, clock):
    oauth.human()
    used = docs.document("/used.json", redirect_uris=[REDIRECT])
    assert oauth.pair(client_id=used)["access_token"]  # referenced by its tokens
    clock.advance(1)
    approved = docs.document("/approved.json", redirect_uris=[REDIRECT])
    code = oauth.code(client_id=approved)  # approved once, then the code is killed:
    oauth.exchange(code, client_id=approved, code_verifier="x" * 43)  # nothing refers to it
    assert approved in unreferenced(app)
    others = []
    for i in range(100):
        clock.advance(1)
        others.append(docs.document(f"/c/{i}.json", redirect_uris=[REDIRECT]))
        assert client_info(client, others[-1]).status_code == 200
    kept = unreferenced(app)
    assert len(kept) == 100
    assert approved not in kept and approved not in client_ids(app)  # the least recent
    assert set(others) == kept
    assert used in client_ids(app)  # referenced: never counted, never forgotten
    clock.advance(1)
    newest = docs.document("/newest.json", redirect_uris=[REDIRECT])
    assert client_info(client, newest).status_code == 200
    assert others[0] not in client_ids(app) and len(unreferenced(app)) == 100
    with app.app_context():
        assert db.session.get(ClientDocument, others[0]) is None  # its copy went with it
    # A forgotten client is fetched again at its next use, and is new again.
    fetched = docs.requests.count("/approved.json")
    info = client_info(client, approved)
    assert info.status_code == 200 and info.get_json()["first_use"] is True
    assert docs.requests.count("/approved.json") == fetched + 1


# --- item 2: bounded fetches, remembered failures, the rate first ---------------------


def test_a_failed_fetch_is_remembered_for_60_seconds_by_every_process(
    app, make_app, client, oauth, docs, clock
):
    url = docs.answer(DOC, status=404)
    oauth.human()
    assert_oauth_error(client_info(client, url), "invalid_client", 401)
    assert docs.requests == [DOC]
    other = make_app(OAUTH_CIMD_ALLOW_PRIVATE=True)  # another process, as the database sees it
    assert_oauth_error(device_start(other.test_client(), url), "invalid_client", 401)
    docs.document(DOC, redirect_uris=[REDIRECT])  # usable now, but not asked for yet
    clock.advance(59)
    hop = client.get("/oauth/authorize", query_string=oauth.params(client_id=url))
    assert_oauth_error(hop, "invalid_client", 401)
    assert docs.requests == [DOC]
    clock.advance(2)
    assert client_info(client, url).status_code == 200
    assert docs.requests == [DOC, DOC]
    assert counts(app)["oauth_document_failures"] == 0  # a usable fetch clears it


def test_remembered_failures_are_bounded(app, client, oauth, docs, clock, monkeypatch):
    monkeypatch.setattr(metadata_documents, "MAX_FAILURES", 3)
    oauth.human()
    for i in range(5):
        url = docs.answer(f"/gone/{i}.json", status=404)
        assert_oauth_error(client_info(client, url), "invalid_client", 401)
        clock.advance(1)
    with app.app_context():
        kept = set(db.session.scalars(select(DocumentFailure.url)))
    assert kept == {docs.url(f"/gone/{i}.json") for i in (2, 3, 4)}  # the newest three
    clock.advance(60)
    url = docs.answer("/gone/5.json", status=404)
    assert_oauth_error(client_info(client, url), "invalid_client", 401)
    with app.app_context():  # the expired ones went when this one was written
        assert set(db.session.scalars(select(DocumentFailure.url))) == {url}


def test_device_authorization_checks_its_rate_before_fetching(app, client, docs):
    url = docs.document(DOC, redirect_uris=[REDIRECT], headers={"Cache-Control": "no-store"})
    for _ in range(device.START_LIMIT):
        assert device_start(client, url).status_code == 200
    assert len(docs.requests) == device.START_LIMIT
    refused = device_start(client, url)
    assert_oauth_error(refused, "temporarily_unavailable", 429)
    assert len(docs.requests) == device.START_LIMIT  # no fetch for a refused start


def _get(port: int, path: str, headers=None) -> tuple[int, float]:
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        connection.request("GET", path, headers=headers or {})
        status = connection.getresponse().status
    finally:
        connection.close()
    return status, time.monotonic() - started


@pytest.mark.slow  # waits out the fetch timeouts: seconds (README, the quick loop)
def test_hosts_that_never_answer_leave_the_api_answering(
    app, live_server, make_user, clock, monkeypatch
):
    """Eight /oauth/authorize requests name documents on a host that accepts and never
    answers: two fetches wait on it (the process's two slots), the others answer 401 at
    once, and GET /accounts is answered promptly meanwhile (before: every serving
    thread waited 5 s). The failed URLs are not fetched again for 60 seconds."""
    app.config["OAUTH_CIMD_ALLOW_PRIVATE"] = True
    monkeypatch.setattr(document_fetch, "TIMEOUT_SECONDS", 3.0)
    make_user()
    bearer = {"Authorization": "Bearer " + live_server.mint()}
    _, challenge = pkce_pair()
    silent = SilentHost()

    def authorize_path(url: str) -> str:
        return "/oauth/authorize?" + urlencode(
            {
                "client_id": url,
                "redirect_uri": REDIRECT,
                "response_type": "code",
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "resource": live_server.origin,
            }
        )

    try:
        urls = [silent.url(f"/client-{i}.json") for i in range(8)]
        answers: dict[int, int] = {}

        def ask(i: int) -> None:
            answers[i] = _get(live_server.port, authorize_path(urls[i]))[0]

        askers = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
        for asker in askers:
            asker.start()
        deadline = time.monotonic() + 5
        while silent.connections < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert silent.connections == 2
        status, elapsed = _get(live_server.port, "/accounts", bearer)
        assert status == 200
        assert elapsed < 1.5, f"GET /accounts took {elapsed:.2f} s while fetches hung"
        for asker in askers:
            asker.join(timeout=15)
        assert sorted(answers.values()) == [401] * 8
        assert silent.connections == 2  # only the two slots ever connected
        failed = [u for u in urls if _remembered(app, u)]
        assert len(failed) == 2
        for url in failed:  # remembered: answered at once, no new connection
            status, elapsed = _get(live_server.port, authorize_path(url))
            assert status == 401 and elapsed < 1.5
        clock.advance(59)
        assert _get(live_server.port, authorize_path(failed[0]))[0] == 401
        assert silent.connections == 2
        monkeypatch.setattr(document_fetch, "TIMEOUT_SECONDS", 0.3)
        clock.advance(2)  # 61 s on: fetched again
        assert _get(live_server.port, authorize_path(failed[0]))[0] == 401
        assert silent.connections == 3
    finally:
        silent.stop()


def _remembered(app, url: str) -> bool:
    with app.app_context():
        return db.session.get(DocumentFailure, url) is not None


# --- item 9: a device start racing the 24-hour reaping --------------------------------


def test_a_device_start_racing_the_reaping_of_its_client(app, client, oauth, clock, monkeypatch):
    """Registration reaps clients unused for 24 h. One reaping runs while a device start
    for such a client is between finding the client and writing its record: the start
    succeeds and its device code stays usable (before: a foreign key failure, 500, on
    PostgreSQL; the new record deleted with its client on SQLite)."""
    registered = client.post("/oauth/register", json={"redirect_uris": [REDIRECT]})
    client_id = registered.get_json()["client_id"]
    clock.advance(hours=24, seconds=1)
    reaper: dict = {}
    real_admit = device._admit

    def admit_while_reaping(*args):
        def reap():
            with app.app_context():
                with store.writing():
                    reaper["reaped"] = store.run_unit(clients.reap_unused)
                db.session.remove()

        worker = threading.Thread(target=reap)
        worker.start()
        worker.join(timeout=2)  # PostgreSQL: done (it skips the held client);
        reaper["worker"] = worker  # SQLite: waits for this unit to commit
        return real_admit(*args)

    monkeypatch.setattr(device, "_admit", admit_while_reaping)
    started = oauth.device_start(client_id=client_id)
    reaper["worker"].join(timeout=30)
    assert not reaper["worker"].is_alive()
    assert started.status_code == 200, started.get_data(as_text=True)
    assert reaper["reaped"] == 0
    assert client_id in client_ids(app)
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(DeviceRecord)) == 1
    poll = oauth.poll(started.get_json()["device_code"], client_id=client_id)
    assert_oauth_error(poll, "authorization_pending")
    # Once its record has expired, the unused client is reaped as before.
    clock.advance(seconds=601)
    assert client.post("/oauth/register", json={"redirect_uris": [REDIRECT]}).status_code == 201
    assert client_id not in client_ids(app)


# --- item 6: reserved names, a changed document is new again --------------------------


@pytest.mark.parametrize(
    "name", ["Ledger command line", "  ledger   COMMAND line ", "svc-cli", "Ledger desktop"]
)
def test_registration_refuses_a_first_party_name(app, client, name):
    before = client_ids(app)
    response = client.post(
        "/oauth/register", json={"redirect_uris": [REDIRECT], "client_name": name}
    )
    body = assert_oauth_error(response, "invalid_client_metadata")
    assert "reserved" in body["error_description"]
    assert client_ids(app) == before


def test_a_document_with_a_first_party_name_is_unknown(app, client, oauth, docs):
    url = docs.document(DOC, client_name="Ledger Command Line", redirect_uris=[REDIRECT])
    oauth.human()
    assert_oauth_error(client_info(client, url), "invalid_client", 401)
    assert url not in client_ids(app)
    assert docs.requests == [DOC]
    assert_oauth_error(client_info(client, url), "invalid_client", 401)
    assert docs.requests == [DOC]  # remembered as a failure


def test_a_document_that_changes_after_approval_is_new_again(app, client, oauth, docs, clock):
    fresh = {"Cache-Control": "max-age=60"}
    url = docs.document(DOC, client_name="Helper", redirect_uris=[REDIRECT], headers=fresh)
    oauth.human()
    assert oauth.pair(client_id=url)["access_token"]
    assert client_info(client, url).get_json()["first_use"] is False
    clock.advance(61)  # fetched again, unchanged: still known
    assert client_info(client, url).get_json()["first_use"] is False
    docs.document(DOC, client_name="Helper Pro", redirect_uris=[REDIRECT], headers=fresh)
    clock.advance(61)
    info = client_info(client, url).get_json()
    assert (info["name"], info["first_use"]) == ("Helper Pro", True)
    assert oauth.pair(client_id=url)["access_token"]
    assert client_info(client, url).get_json()["first_use"] is False
    other = "https://app.example/cb"
    docs.document(DOC, client_name="Helper Pro", redirect_uris=[REDIRECT, other], headers=fresh)
    clock.advance(61)
    info = client_info(client, url).get_json()
    assert (info["redirect_uris"], info["first_use"]) == ([REDIRECT, other], True)


def test_one_address_starts_at_most_10_document_clients_in_10_minutes(app, client, docs, clock):
    """A device record keeps its client stored, so minting document clients through the
    device grant is bounded per caller address (10 in any 10 minutes)."""
    urls = [docs.document(f"/tv/{i}.json", redirect_uris=[REDIRECT]) for i in range(11)]
    for url in urls[:10]:
        assert device_start(client, url).status_code == 200
        clock.advance(1)
    before = counts(app)
    refused = device_start(client, urls[10])
    body = assert_oauth_error(refused, "temporarily_unavailable", 429)
    assert int(refused.headers["Retry-After"]) == 600 - 10
    assert counts(app) == before and len(docs.requests) == 10  # not even fetched
    assert device_start(client, urls[0]).status_code == 200  # a client already started
    other = app.test_client()
    started = other.post(
        "/oauth/device_authorization",
        data={"client_id": urls[10], "resource": API_ORIGIN},
        content_type=FORM,
        environ_base={"REMOTE_ADDR": "192.0.2.7"},
    )
    assert started.status_code == 200  # another address
    clock.advance(600)
    assert device_start(client, urls[10]).status_code == 200, body
