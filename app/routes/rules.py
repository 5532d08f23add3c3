"""HTTP adapters for the filing rules of statement lines (docs/statements.md, "Rules")."""

from __future__ import annotations

from flask import Blueprint, jsonify

from ..services.banking import rules
from .support import json_body

bp = Blueprint("rules", __name__)


@bp.get("/rules")
def list_rules():
    return jsonify(rules.list_rules())


@bp.post("/rules")
def create_rule():
    return jsonify(rules.create_rule(json_body())), 201


@bp.post("/rules/preview")
def preview():
    return jsonify(rules.preview(json_body()))


@bp.put("/rules/<int:rule_id>")
def update_rule(rule_id: int):
    return jsonify(rules.update_rule(rule_id, json_body()))


@bp.delete("/rules/<int:rule_id>")
def delete_rule(rule_id: int):
    rules.delete_rule(rule_id)
    return "", 204
