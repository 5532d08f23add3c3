"""HTTP adapters for budgets (services/ledger/budgets.py); each view runs in the
unit-of-work boundary (routes/boundary.py), which commits and retries."""

from flask import Blueprint, jsonify, request

from ..services.ledger import budgets
from .support import json_body, principal, session_only

bp = Blueprint("budgets", __name__)


@bp.get("/budgets")
def list_budgets():
    return jsonify(budgets.list_budgets())


@bp.post("/budgets")
def create_budget():
    return jsonify(budgets.create_budget(json_body())), 201


@bp.get("/budgets/<int:budget_id>")
def get_budget(budget_id: int):
    return jsonify(budgets.get_budget(budget_id))


@bp.put("/budgets/<int:budget_id>")
def update_budget(budget_id: int):
    return jsonify(budgets.update_budget(budget_id, json_body()))


@bp.delete("/budgets/<int:budget_id>")
def delete_budget(budget_id: int):
    budgets.delete_budget(budget_id)
    return "", 204


@bp.post("/budgets/<int:budget_id>/approve")
@session_only()
def approve_budget(budget_id: int):
    # A person approves a budget from the web app; a token (a script, an assistant) never can.
    if request.get_data(cache=True):  # no body needed; one sent must be JSON (as a form is not)
        json_body()
    return jsonify(budgets.approve_budget(budget_id, principal().email))
