"""HTTP adapters for schedules and their occurrences (docs/schedules.md); each view runs
in the unit-of-work boundary (routes/boundary.py), which commits and retries."""

from __future__ import annotations

from flask import Blueprint, jsonify, request

from ..services.ledger import schedule_occurrences, schedules
from .support import json_body, principal

bp = Blueprint("schedules", __name__)


@bp.get("/schedules")
def list_schedules():
    return jsonify(schedules.list_schedules())


@bp.post("/schedules")
def create_schedule():
    return jsonify(schedules.create_schedule(json_body(), principal().user_id)), 201


@bp.get("/schedules/<int:schedule_id>")
def get_schedule(schedule_id: int):
    return jsonify(schedules.get_schedule(schedule_id))


@bp.put("/schedules/<int:schedule_id>")
def update_schedule(schedule_id: int):
    return jsonify(schedules.update_schedule(schedule_id, json_body()))


@bp.delete("/schedules/<int:schedule_id>")
def delete_schedule(schedule_id: int):
    schedules.delete_schedule(schedule_id)
    return "", 204


@bp.get("/schedules/occurrences")
def list_occurrences():
    return jsonify(schedule_occurrences.list_occurrences(request.args))


@bp.post("/schedules/<int:schedule_id>/occurrences/<occurs_on>")
def act_on_occurrence(schedule_id: int, occurs_on: str):
    return jsonify(
        schedule_occurrences.act(schedule_id, occurs_on, json_body(), principal().user_id)
    )


@bp.get("/schedules/preview")
def preview_schedule():
    return jsonify(schedules.preview(request.args))
