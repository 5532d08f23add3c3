"""JSON responses encoded by orjson say exactly what the standard encoder said."""

from __future__ import annotations

import json
from datetime import date

from flask import jsonify


def test_same_json_as_the_standard_encoder(app):
    data = {
        "z": 1,
        "a": [{"cents": -(2**63), "name": "Café ☕ \u202e"}, None, True, 1.5],
        "day": date(2026, 1, 31),
        7: "int key",
    }
    with app.test_request_context():
        body = jsonify(data).get_data()
        standard = json.dumps(data, default=app.json.default, separators=(",", ":"))
    assert json.loads(body) == json.loads(standard)
    assert list(json.loads(body)) == ["z", "a", "day", "7"]  # insertion order kept
    assert json.loads(body)["day"] == "Sat, 31 Jan 2026 00:00:00 GMT"  # Flask's date rule


def test_integers_beyond_64_bits_fall_back_to_the_standard_encoder(app):
    with app.test_request_context():
        response = jsonify({"cents": 2**70})
    assert json.loads(response.get_data()) == {"cents": 2**70}
    assert app.json.dumps({"cents": -(2**80)}) == '{"cents": -1208925819614629174706176}'


def test_listing_round_trips_non_ascii(api):
    response = api.post("/accounts", json={"name": "Épargne ☂", "kind": "asset"})
    assert response.status_code == 201
    assert response.get_json()["name"] == "Épargne ☂"
    assert response.headers["Content-Type"] == "application/json"
