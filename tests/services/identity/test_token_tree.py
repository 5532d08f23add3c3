"""revoke_tree: a node and everything below it, nothing above or beside it."""

from datetime import timedelta

from app import store
from app.extensions import db
from app.models import Token
from app.services import clock
from app.services.identity import token_trees as tokens


def _token(token_id, parent=None, family="root", kind="refresh"):
    now = clock.now()
    return Token(
        id=token_id,
        user_id=1,
        client_id="svc-cli",
        kind=kind,
        label="",
        audience="x",
        parent_id=parent,
        family_id=family,
        created_at=now,
        expires_at=now + timedelta(days=1),
    )


def test_revoke_tree_revokes_descendants_only(app, make_user):
    make_user()
    with app.app_context():
        #   root -> r2 -> r3 ; root -> a1 ; r2 -> a2 ; r3 -> a3 ; other (unrelated)
        for row in (
            _token("root"),
            _token("a1", "root", kind="access"),
            _token("r2", "root"),
            _token("a2", "r2", kind="access"),
            _token("r3", "r2"),
            _token("a3", "r3", kind="access"),
            _token("other", family="other"),
        ):
            db.session.add(row)
        store.commit()

        assert tokens.revoke_tree("r2") == 4
        store.commit()
        revoked = {t.id for t in db.session.query(Token).filter(Token.revoked_at.isnot(None))}
        assert revoked == {"r2", "a2", "r3", "a3"}
        # Revoking again changes nothing.
        assert tokens.revoke_tree("r2") == 0
        assert tokens.revoke_family("root") == 2  # root and a1 were still live
