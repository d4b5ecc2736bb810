"""Health, readiness and the contract itself."""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, current_app, request

from service.api.extensions import referee

__all__ = ["blueprint", "SPEC_PATH"]

blueprint = Blueprint("meta", __name__)
SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"
YAML_TYPES = ["application/yaml", "text/yaml"]


@blueprint.get("/healthz")
def healthz() -> dict[str, str | bool]:
    """Answer 200 while the process is up, saying whether test mode is on."""
    return {"status": "ok", "test_mode": current_app.config["REFEREE_SETTINGS"].test_mode}


@blueprint.get("/readyz")
def readyz() -> dict[str, str]:
    """Answer 200 when Redis answers a PING (503 problem otherwise, via the error handler)."""
    referee().ready()
    return {"status": "ready"}


@blueprint.get("/openapi.yaml")
def openapi_yaml() -> Response:
    """Serve the OpenAPI 3.1 contract this service follows.

    ``application/yaml`` (RFC 9512), or ``text/yaml`` when the client asks for it by name.
    """
    mimetype = request.accept_mimetypes.best_match(YAML_TYPES, default=YAML_TYPES[0])
    return Response(current_app.extensions["openapi_text"], mimetype=mimetype)
