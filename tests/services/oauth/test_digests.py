"""Only digests are stored: scan every column of every table for the raw secrets handed out."""

from sqlalchemy import inspect, text

from app.extensions import db
from app.services import crypto
from tests.services.oauth.flow import query_of


def stored_values(app) -> list[str]:
    values = []
    with app.app_context():
        names = inspect(db.engine).get_table_names()
        with db.engine.connect() as conn:
            for name in names:
                for row in conn.execute(text(f'SELECT * FROM "{name}"')):
                    for value in row:
                        if isinstance(value, bytes | bytearray | memoryview):
                            values.append(bytes(value).decode("latin-1"))
                        elif value is not None:
                            values.append(str(value))
    return values


def test_no_raw_token_code_or_device_code_is_stored(app, client, oauth, session_client):
    handed_out = []
    oauth.human()
    cookie = client.get_cookie("svc_session").value
    handed_out.append(cookie)
    # An authorization code left unredeemed, and one redeemed.
    pending_code = oauth.code()
    handed_out.append(pending_code)
    approve = oauth.approve(True).get_json()["redirect"]
    code = query_of(approve)["code"]
    pair = oauth.exchange(code).get_json()
    handed_out += [code, pair["access_token"], pair["refresh_token"]]
    rotated = oauth.refresh(pair["refresh_token"]).get_json()
    handed_out += [rotated["access_token"], rotated["refresh_token"]]
    # A device code still pending, and one approved and claimed.
    pending_device = oauth.device_start().get_json()
    handed_out.append(pending_device["device_code"])
    claimed = oauth.device_start().get_json()
    client.post("/oauth/device/approve", json={"user_code": claimed["user_code"], "approve": True})
    handed_out.append(claimed["device_code"])
    device_pair = oauth.poll(claimed["device_code"]).get_json()
    handed_out += [device_pair["access_token"], device_pair["refresh_token"]]
    registered = client.post("/oauth/register", json={"redirect_uris": ["https://a.example/cb"]})
    assert registered.status_code == 201

    assert all(handed_out) and len(set(handed_out)) == len(handed_out)
    values = stored_values(app)
    blob = "\n".join(values)
    for raw in handed_out:
        assert raw not in blob, "a raw secret is stored"
    # The scan does see the stored digests (so it would have seen the raw values).
    for raw in (
        pending_code,
        pair["refresh_token"],
        rotated["access_token"],
        pending_device["device_code"],
        device_pair["refresh_token"],
    ):
        assert crypto.digest(raw) in values
    # The user code is shown to people and looked up as typed: it is stored as is.
    assert pending_device["user_code"] in values
