"""The discovery documents at the plain .well-known paths (blueprint "well_known")."""

from flask import Blueprint, jsonify

from ..services.oauth import metadata
from .support import open_route

bp = Blueprint("well_known", __name__, url_prefix="/.well-known")


@bp.get("/oauth-protected-resource")
@open_route
def protected_resource():
    return jsonify(metadata.protected_resource())


@bp.get("/oauth-authorization-server")
@open_route
def authorization_server():
    return jsonify(metadata.authorization_server())
