"""GET /auth/tokens (Connection rows) and DELETE /auth/tokens/{id} (204/403/404).

OAuth grants are laid down as token rows in the shape the OAuth issue stores them
(refresh tokens chained by parent, each access token a child of its refresh token),
so these tests do not depend on the token endpoint.
"""

from datetime import timedelta

import pytest
from sqlalchemy import select

from app import store
from app.extensions import db
from app.models import Token
from app.services import clock as service_clock
from app.services import crypto
from tests.support import API_ORIGIN


def _row(user_id, raw, kind, parent=None, family=None, client="svc-desktop", **extra):
    now = service_clock.now()
    return Token(
        id=crypto.digest(raw),
        user_id=user_id,
        client_id=client,
        kind=kind,
        label="desktop app",
        audience=API_ORIGIN,
        parent_id=crypto.digest(parent) if parent else None,
        family_id=crypto.digest(family) if family else None,
        created_at=now,
        expires_at=extra.pop("expires_at", now + timedelta(days=60)),
        **extra,
    )


@pytest.fixture
def grant(app, clock):
    """Lay down a rotated OAuth grant for a user: r1 (retired) -> r2 (live); a1, a2 access."""

    def make(user_id, tag="g"):
        with app.app_context():
            now = service_clock.now()
            r1, a1, r2, a2 = (f"svc_{tag}_{n}" for n in ("r1", "a1", "r2", "a2"))
            hour = now + timedelta(hours=1)
            db.session.add_all(
                [
                    _row(user_id, r1, "refresh", family=r1, retired_at=now),
                    _row(user_id, a1, "access", parent=r1, family=r1, expires_at=hour),
                    _row(user_id, r2, "refresh", parent=r1, family=r1),
                    _row(user_id, a2, "access", parent=r2, family=r1, expires_at=hour),
                ]
            )
            store.commit()
        return {"r1": r1, "a1": a1, "r2": r2, "a2": a2}

    return make


def revoked(app):
    with app.app_context():
        return {t.id for t in db.session.execute(select(Token)).scalars() if t.revoked_at}


def test_one_row_per_connection(signin, client, mint, grant, clock):
    signin.full()
    token = mint(label="backup script")
    g = grant(1)
    clock.advance(120)
    # the grant's access token is used: the connection shows that use
    assert (
        client.get("/accounts", headers={"Authorization": f"Bearer {g['a2']}"}).status_code == 200
    )
    client.get("/accounts")  # the session is not a connection and changes nothing here
    listed = sorted(client.get("/auth/tokens").get_json(), key=lambda row: row["kind"])
    assert listed == [
        {
            "id": crypto.digest(token),
            "client_id": "svc-cli",
            "client_name": "Ledger command line",
            "kind": "access",
            "label": "backup script",
            "last_used_at": None,
            "expires_at": "2027-11-21T12:00:00Z",
            "created_at": "2026-11-21T12:00:00Z",
            "source": "script",
        },
        {
            "id": crypto.digest(g["r2"]),
            "client_id": "svc-desktop",
            "client_name": "Ledger desktop",
            "kind": "refresh",
            "label": "desktop app",
            "last_used_at": "2026-11-21T12:02:00Z",
            "expires_at": "2027-01-20T12:00:00Z",
            "created_at": "2026-11-21T12:00:00Z",
            "source": "app",
        },
    ]


def test_bearer_may_list_and_sees_its_own_token(client, make_user, mint):
    make_user()
    token = mint()
    response = client.get("/auth/tokens", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    (row,) = response.get_json()
    assert row["id"] == crypto.digest(token) and row["kind"] == "access"
    assert row["last_used_at"] == "2026-11-21T12:00:00Z"


def test_dead_tokens_and_other_users_tokens_are_not_listed(
    signin, client, mint, make_user, clock, app
):
    signin.full()
    short = mint(days=1)
    revoked_token = mint(label="gone")
    make_user("bob@example.com")
    mint("bob@example.com")
    client.delete(f"/auth/tokens/{crypto.digest(revoked_token)}")
    clock.advance(days=1)
    listed = client.get("/auth/tokens").get_json()
    assert listed == []
    assert crypto.digest(short) not in {r["id"] for r in listed}


def test_revoking_a_grant_revokes_it_and_its_descendants(app, signin, client, grant):
    signin.full()
    g = grant(1)
    response = client.delete(f"/auth/tokens/{crypto.digest(g['r2'])}")
    assert response.status_code == 204
    assert revoked(app) == {crypto.digest(g["r2"]), crypto.digest(g["a2"])}
    assert (
        client.get("/accounts", headers={"Authorization": f"Bearer {g['a2']}"}).status_code == 401
    )
    assert client.get("/auth/tokens").get_json() == []


def test_revoking_an_admin_token(app, signin, client, mint):
    signin.full()
    keep, drop = mint(label="keep"), mint(label="drop")
    assert client.delete(f"/auth/tokens/{crypto.digest(drop)}").status_code == 204
    assert client.get("/accounts", headers={"Authorization": f"Bearer {drop}"}).status_code == 401
    assert client.get("/accounts", headers={"Authorization": f"Bearer {keep}"}).status_code == 200
    assert [r["label"] for r in client.get("/auth/tokens").get_json()] == ["keep"]


def test_revoke_404s(app, signin, client, mint, make_user, grant, clock):
    signin.full()
    g = grant(1)
    already = mint()
    client.delete(f"/auth/tokens/{crypto.digest(already)}")
    expiring = mint(days=1)
    make_user("bob@example.com")
    bobs = mint("bob@example.com")
    clock.advance(days=1)
    cases = {
        "unknown": "0" * 64,
        "foreign": crypto.digest(bobs),
        "revoked": crypto.digest(already),
        "retired": crypto.digest(g["r1"]),
        "expired": crypto.digest(expiring),
        "raw token instead of id": already,
    }
    before = revoked(app)
    for name, token_id in cases.items():
        response = client.delete(f"/auth/tokens/{token_id}")
        assert response.status_code == 404, name
        assert set(response.get_json()) == {"error"}
    assert revoked(app) == before


def test_revoke_refuses_bearer_tokens_with_403(app, client, make_user, mint):
    make_user()
    token = mint()
    other = mint(label="other")
    response = client.delete(
        f"/auth/tokens/{crypto.digest(other)}", headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 403 and set(response.get_json()) == {"error"}
    assert revoked(app) == set()


def test_half_session_cannot_list_or_revoke(signin, client, mint):
    token = mint()
    signin.password()
    assert client.get("/auth/tokens").status_code == 401
    assert client.delete(f"/auth/tokens/{crypto.digest(token)}").status_code == 401


def test_revoke_with_an_oversized_id_is_404(signin, client):
    signin.full()
    response = client.delete("/auth/tokens/" + "f" * 500)
    assert response.status_code == 404 and set(response.get_json()) == {"error"}


def test_a_connection_says_what_holds_it_and_since_when(signin, client, app, clock):
    """source: script (minted), device (device-flow grant), app (other OAuth grants);
    created_at: when the grant began, kept through refresh-token rotations."""
    from app.services.identity.credentials import DEVICE_GRANT_LABEL
    from app.services.oauth import tokens

    assert tokens.DEVICE_LABEL == DEVICE_GRANT_LABEL
    signin.full()
    with app.app_context():
        first = tokens.issue_pair(1, "svc-cli", label=tokens.DEVICE_LABEL)
        store.commit()
    clock.advance(3600)
    with app.app_context():
        parent = db.session.get(Token, crypto.digest(first["refresh_token"]))
        parent.retired_at = service_clock.now()
        tokens.issue_pair(1, "svc-cli", parent=parent)
        tokens.issue_pair(1, "svc-desktop")
        store.commit()
    listed = client.get("/auth/tokens").get_json()
    by_source = {row["source"]: row for row in listed}
    assert sorted(by_source) == ["app", "device"]
    assert by_source["device"]["created_at"] == "2026-11-21T12:00:00Z"  # not the rotation's
    assert by_source["device"]["label"] == "device sign-in"
    assert by_source["app"]["created_at"] == "2026-11-21T13:00:00Z"
