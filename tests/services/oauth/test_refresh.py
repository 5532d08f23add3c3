"""Refresh rotation, reuse detection, and revocation: the refresh family's table
(app/services/oauth/refresh.py; docs/oauth.md "Tokens")."""

import sqlite3

import psycopg.errors
from sqlalchemy.exc import OperationalError

from app.extensions import db
from app.models import Token
from app.routes import oauth as oauth_routes
from app.services import crypto
from app.services.identity import token_trees as tokens
from tests.services.oauth.flow import assert_oauth_error

NOT_REDEEMABLE = "the refresh token is not redeemable"


def row(app, raw) -> Token:
    with app.app_context():
        token = db.session.get(Token, crypto.digest(raw))
        db.session.expunge(token)
        return token


def test_live_refresh_rotates_into_a_chained_pair(app, oauth, clock):
    oauth.human()
    first = oauth.pair()
    clock.advance(120)
    response = oauth.refresh(first["refresh_token"])
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    second = response.get_json()
    assert second["token_type"] == "Bearer" and second["expires_in"] == 3600
    assert oauth.works(second["access_token"])
    old, new = row(app, first["refresh_token"]), row(app, second["refresh_token"])
    assert old.retired_at == clock() and old.revoked_at is None
    assert new.parent_id == old.id and new.family_id == old.family_id == old.id
    assert row(app, second["access_token"]).parent_id == new.id
    assert (new.expires_at - clock()).days == 60
    # The access token of the first pair lives on until its hour is up.
    assert oauth.works(first["access_token"])


def test_retired_token_within_10_seconds_is_refused_and_the_grant_untouched(oauth, clock):
    oauth.human()
    first = oauth.pair()
    second = oauth.refresh(first["refresh_token"]).get_json()
    clock.advance(10)
    body = assert_oauth_error(oauth.refresh(first["refresh_token"]), "invalid_grant")
    assert body["error_description"] == NOT_REDEEMABLE
    assert oauth.works(second["access_token"])
    assert oauth.refresh(second["refresh_token"]).status_code == 200


def test_retired_token_after_10_seconds_revokes_the_whole_family(app, oauth, clock):
    oauth.human()
    first = oauth.pair()
    second = oauth.refresh(first["refresh_token"]).get_json()
    third = oauth.refresh(second["refresh_token"]).get_json()
    other = oauth.pair()  # a separate grant must survive
    clock.advance(11)
    assert_oauth_error(oauth.refresh(first["refresh_token"]), "invalid_grant")
    assert not oauth.works(third["access_token"])
    assert not oauth.works(first["access_token"])
    assert_oauth_error(oauth.refresh(third["refresh_token"]), "invalid_grant")
    with app.app_context():
        family = db.session.query(Token).filter(
            Token.family_id == row(app, first["refresh_token"]).id
        )
        assert family.count() == 6 and all(t.revoked_at is not None for t in family)
    assert oauth.works(other["access_token"])
    assert oauth.refresh(other["refresh_token"]).status_code == 200


def test_refresh_with_another_client_is_refused_and_changes_nothing(app, oauth):
    oauth.human()
    pair = oauth.pair()
    assert_oauth_error(
        oauth.refresh(pair["refresh_token"], client_id="svc-desktop"), "invalid_grant"
    )
    assert row(app, pair["refresh_token"]).retired_at is None
    assert oauth.refresh(pair["refresh_token"]).status_code == 200


def test_refresh_token_expires_after_60_days(oauth, clock):
    oauth.human()
    pair = oauth.pair()
    clock.advance(days=60)
    assert_oauth_error(oauth.refresh(pair["refresh_token"]), "invalid_grant")


def test_unknown_or_access_token_is_invalid_grant(oauth):
    oauth.human()
    pair = oauth.pair()
    assert_oauth_error(oauth.refresh("svc_unknown"), "invalid_grant")
    assert_oauth_error(oauth.refresh(pair["access_token"]), "invalid_grant")


def test_refresh_missing_fields_and_wrong_resource(oauth):
    oauth.human()
    pair = oauth.pair()
    assert_oauth_error(
        oauth.token(grant_type="refresh_token", client_id="svc-cli"), "invalid_request"
    )
    assert_oauth_error(
        oauth.refresh(pair["refresh_token"], resource="http://evil.example"), "invalid_request"
    )
    assert (
        oauth.refresh(pair["refresh_token"], resource="http://localhost:38081/").status_code == 200
    )


# --- revocation (RFC 7009) ---------------------------------------------------------------


def test_revoking_a_live_refresh_token_revokes_the_access_token_minted_with_it(oauth):
    oauth.human()
    first = oauth.pair()
    second = oauth.refresh(first["refresh_token"]).get_json()
    response = oauth.revoke(token=second["refresh_token"], token_type_hint="refresh_token")
    assert response.status_code == 200 and response.data == b""
    assert response.headers["Cache-Control"] == "no-store"
    assert not oauth.works(second["access_token"])
    assert_oauth_error(oauth.refresh(second["refresh_token"]), "invalid_grant")
    # Tokens above it in the tree are not its descendants.
    assert oauth.works(first["access_token"])


def test_revoking_a_retired_refresh_token_revokes_everything_minted_after_it(oauth):
    oauth.human()
    first = oauth.pair()
    second = oauth.refresh(first["refresh_token"]).get_json()
    oauth.revoke(token=first["refresh_token"])
    assert not oauth.works(first["access_token"])
    assert not oauth.works(second["access_token"])
    assert_oauth_error(oauth.refresh(second["refresh_token"]), "invalid_grant")


def test_revoking_an_access_token_leaves_its_refresh_token_alone(oauth):
    oauth.human()
    pair = oauth.pair()
    assert (
        oauth.revoke(token=pair["access_token"], token_type_hint="access_token").status_code == 200
    )
    assert not oauth.works(pair["access_token"])
    fresh = oauth.refresh(pair["refresh_token"])
    assert fresh.status_code == 200 and oauth.works(fresh.get_json()["access_token"])


def test_revoke_scoped_to_another_client_revokes_nothing(oauth):
    oauth.human()
    pair = oauth.pair()
    assert oauth.revoke(token=pair["refresh_token"], client_id="svc-desktop").status_code == 200
    assert oauth.works(pair["access_token"])
    assert oauth.revoke(token=pair["refresh_token"], client_id="svc-cli").status_code == 200
    assert not oauth.works(pair["access_token"])


def test_revoke_is_always_200_for_unknown_expired_or_revoked_tokens(oauth, clock, mint):
    oauth.human()
    pair = oauth.pair()
    for value in ("svc_unknown", "garbage"):
        response = oauth.revoke(token=value)
        assert response.status_code == 200 and response.data == b""
    oauth.revoke(token=pair["refresh_token"])
    assert oauth.revoke(token=pair["refresh_token"]).status_code == 200
    expired = mint()
    clock.advance(days=400)
    assert not oauth.works(expired)
    assert oauth.revoke(token=expired).status_code == 200


def test_revoke_an_administratively_minted_token(oauth, make_user, mint):
    make_user()
    token = mint()
    assert oauth.works(token)
    oauth.revoke(token=token)
    assert not oauth.works(token)


def test_revoke_wants_a_form_body_with_a_token(client, oauth):
    response = client.post("/oauth/revoke", json={"token": "x"})
    assert response.status_code == 415 and response.mimetype == "text/plain"
    assert_oauth_error(oauth.revoke(), "invalid_request")


def test_shared_revoke_tree_agrees_with_the_revocation_endpoint(app, oauth):
    """DELETE /auth/tokens/{id} uses tokens.revoke_tree: same subtree as /oauth/revoke."""
    oauth.human()
    pair = oauth.pair()
    with app.app_context():
        from app import store

        assert tokens.revoke_tree(crypto.digest(pair["refresh_token"])) == 2
        store.commit()
    assert not oauth.works(pair["access_token"])


def test_token_type_hint_is_ignored(oauth):
    oauth.human()
    pair = oauth.pair()
    # A wrong hint still revokes the refresh token (and the access token minted with it).
    assert (
        oauth.revoke(token=pair["refresh_token"], token_type_hint="access_token").status_code == 200
    )
    assert not oauth.works(pair["access_token"])
    assert_oauth_error(oauth.refresh(pair["refresh_token"]), "invalid_grant")


def _retry_error(dialect):
    if dialect == "postgresql":
        return OperationalError("UPDATE ...", {}, psycopg.errors.DeadlockDetected("deadlock"))
    return OperationalError("UPDATE ...", {}, sqlite3.OperationalError("database is locked"))


def test_the_refresh_grant_runs_in_the_retrying_unit(oauth, monkeypatch, dialect):
    oauth.human()
    first = oauth.pair()
    real = oauth_routes.GRANTS["refresh_token"]
    calls = []

    def flaky(form):
        calls.append(1)
        result = real(form)
        if len(calls) == 1:
            raise _retry_error(dialect)
        return result

    monkeypatch.setitem(oauth_routes.GRANTS, "refresh_token", flaky)
    response = oauth.refresh(first["refresh_token"])
    assert response.status_code == 200, response.data
    assert len(calls) == 2
    monkeypatch.undo()
    # The first attempt was rolled back whole: the new pair is the only child, and works.
    second = response.get_json()
    assert oauth.works(second["access_token"])
    assert oauth.refresh(second["refresh_token"]).status_code == 200
