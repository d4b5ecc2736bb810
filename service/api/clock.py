"""Test mode, or a sandbox app's own match: ``POST /v1/matches/{id}/clock`` runs a match's
clock ahead.

The match's clock moves ``advance`` seconds forward and what falls due meanwhile is settled
(timeouts, penalties, bot turns) exactly as if the time had passed, so an integration test of
a 60-second timeout need not wait a minute. Outside test mode the route answers 404, like any
path the service does not have, unless a sandbox app's key (``REFEREE_SANDBOX_KEYS``) comes
with the request: then it runs that app's own matches' clocks (403 for another's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Response, abort, current_app, jsonify
from marshmallow import Schema, ValidationError, fields, validate

from service import game
from service.api import apps
from service.api.extensions import referee
from service.api.parsing import load_body

__all__ = ["blueprint"]

blueprint = Blueprint("clock", __name__)
MAX_ADVANCE_SECONDS = 30 * 24 * 3600  # a month: longer than any turn


class Seconds(fields.Float):
    """A JSON number (not ``"65"``, not ``true``)."""

    def _deserialize(
        self, value: Any, attr: str | None, data: Mapping[str, Any] | None, **kwargs: Any
    ) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError("Not a valid number.")
        return super()._deserialize(value, attr, data, **kwargs)


class ClockSchema(Schema):
    advance = Seconds(
        required=True,
        allow_nan=False,
        validate=validate.Range(min=0, max=MAX_ADVANCE_SECONDS, min_inclusive=False),
    )


clock_schema = ClockSchema()


@blueprint.post("/v1/matches/<match_id>/clock")
def advance_clock(match_id: str) -> Response:
    """Run the match's clock ahead and answer its public view as of then."""
    app = apps.calling_app()
    if not apps.may_use_test_features(app):
        abort(404)
    body: dict[str, Any] = load_body(clock_schema)
    owner = None if current_app.config["REFEREE_SETTINGS"].test_mode else app
    match, now = referee().advance_clock(match_id, body["advance"], owner=owner)
    response = jsonify(game.public_view(match, now=now))
    response.headers["ETag"] = f'"{match.version}"'
    return response
