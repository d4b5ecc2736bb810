"""``POST /v1/meld-check``: the 30-point initial meld checker, no match needed."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify
from marshmallow import Schema, fields, validate

from service.api.fields import Flag, Table, WholeNumber
from service.api.language import request_language, say
from service.api.parsing import load_body
from service.rules import classify, meets_initial_meld, set_points

__all__ = ["blueprint"]

blueprint = Blueprint("meld", __name__)


class MeldRulesSchema(Schema):
    initial_meld_points = WholeNumber(load_default=30, validate=validate.Range(min=0, max=1000))
    joker_worth_zero_in_meld = Flag(load_default=False)


meld_rules_schema = MeldRulesSchema()  # one: a schema made per request is a reference cycle


class MeldCheckSchema(Schema):
    sets = Table(required=True)
    rules = fields.Nested(MeldRulesSchema, load_default=lambda: meld_rules_schema.load({}))


meld_check_schema = MeldCheckSchema()


@blueprint.post("/v1/meld-check")
def meld_check() -> Response:
    """Say, set by set, what the sets are worth and whether they make an initial meld."""
    body = load_body(meld_check_schema)
    answer = check_meld(body["sets"], **body["rules"])
    language = request_language()
    for reading in answer["sets"]:
        reading["reason"] = reading["reason"] and say(reading["reason"], language)
    response = jsonify(answer)
    response.headers.update({"Content-Language": language, "Vary": "Accept-Language"})
    return response


def check_meld(
    sets: list[list[Any]], *, initial_meld_points: int, joker_worth_zero_in_meld: bool
) -> dict[str, Any]:
    """Return the meld-check answer for ``sets`` (lists of tiles)."""
    answers: list[dict[str, Any]] = []
    for tiles in sets:
        info = classify(tiles)
        answers.append(
            {
                "tiles": [tile.code for tile in tiles],
                "valid": info.valid,
                "kind": info.kind.value if info.kind else None,
                "points": set_points(tiles, joker_worth_zero=joker_worth_zero_in_meld),
                "jokers": list(info.jokers),
                "reason": info.reason,
                "code": info.fault.value if info.fault else None,
            }
        )
    points = sum(answer["points"] for answer in answers)
    return {
        "sets": answers,
        "points": points,
        "threshold": initial_meld_points,
        "meets_initial_meld": bool(sets)
        and meets_initial_meld(
            sets, threshold=initial_meld_points, joker_worth_zero=joker_worth_zero_in_meld
        ),
    }
