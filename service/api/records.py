"""Game records (docs/RECORD-FORMAT.md): a game's record, its positions, the verifier, and an
app's archive as NDJSON."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import orjson
from flask import Blueprint, Response, current_app, jsonify, request
from marshmallow import Schema, fields, validate

from service import record
from service.api import apps, auth
from service.api.connections import request_body
from service.api.errors import BadRequest
from service.api.language import request_language, say
from service.api.parsing import json_body, load_query
from service.referee.records import Records

__all__ = ["VERIFY_MAX_BYTES", "VERIFY_PATH", "blueprint", "parsed_record", "same_world"]

blueprint = Blueprint("records", __name__)
VERIFY_MAX_BYTES = 1024 * 1024  # the longest game (6 players, XP) takes about 40 KB
VERIFY_PATH = "/v1/records/verify"
TEXT = "text/plain"
NDJSON = "application/x-ndjson"


class PositionQuery(Schema):
    turn = fields.Integer(required=True, validate=validate.Range(min=0, max=record.MAX_TURNS))


class ArchiveQuery(Schema):
    since = fields.Float(validate=validate.Range(min=0, max=1e11))
    cursor = fields.String(validate=validate.Length(max=2000))
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=100))


position_query, archive_query = PositionQuery(), ArchiveQuery()


def records() -> Records:
    """The app's records service (service/referee/records.py)."""
    found: Records = current_app.extensions["records"]
    return found


def same_world(app: str | None, owner: str | None) -> bool:
    """Whether ``app`` may see a match of ``owner``: sandbox and live apps never see each
    other's matches."""
    return app is None or owner is None or apps.is_sandbox(app) == apps.is_sandbox(owner)


@blueprint.get("/v1/matches/<match_id>/games/<int:game_number>/record")
def game_record(match_id: str, game_number: int) -> Response:
    """The game's record, JSON or its text form (``Accept: text/plain``)."""
    app = apps.calling_app()
    found = records().game_record(match_id, game_number, token=auth.bearer_token(), app=app)
    response = _as_accepted(found)
    response.headers["Vary"] = "Accept, Authorization, X-API-Key"
    return response


def _as_accepted(found: record.Record) -> Response:
    wanted = request.accept_mimetypes.best_match(["application/json", TEXT], "application/json")
    if wanted == TEXT:
        return Response(record.to_text(found), mimetype=TEXT, content_type=f"{TEXT}; charset=utf-8")
    return jsonify(record.to_json(found))


@blueprint.get("/v1/matches/<match_id>/games/<int:game_number>/position")
def game_position(match_id: str, game_number: int) -> dict[str, Any]:
    """The game after turn ``turn`` (0: as dealt); racks once the game is over."""
    turn = load_query(position_query)["turn"]
    return records().position(match_id, game_number, turn, app=apps.calling_app())


@blueprint.post(VERIFY_PATH)
def verify() -> Response:
    """Replay a record (JSON, or the text form as text/plain) and say whether it holds."""
    request.max_content_length = VERIFY_MAX_BYTES
    verdict = records().verify(parsed_record(_body()))
    language = request_language()
    answer: dict[str, Any] = {"valid": verdict.valid}
    if not verdict.valid:
        findings = [finding.to_json() for finding in verdict.violations]
        for finding in findings:
            finding["message"] = say(finding["message"], language)
        answer.update(turn=verdict.turn, part=verdict.part, violations=findings)
    answer["result"] = None if verdict.result is None else record.result_to_json(verdict.result)
    response = jsonify(answer)
    response.headers.update({"Content-Language": language, "Vary": "Accept-Language"})
    return response


def _body() -> Any:
    raw = request_body()
    if request.mimetype == TEXT:
        charset = request.mimetype_params.get("charset", "utf-8").lower()
        try:
            if charset not in ("utf-8", "utf8"):
                raise UnicodeError
            return raw.decode("utf-8")
        except UnicodeError:
            raise BadRequest("a record's text form is UTF-8", kind="invalid-body") from None
    if not raw:
        raise BadRequest("send a record: JSON, or its text form as text/plain", kind="invalid-body")
    return json_body(raw)


def parsed_record(given: Any) -> record.Record:
    """The record ``given`` holds: its text form (a string) or its JSON form. Raises
    ``RecordFormatError`` (400)."""
    if isinstance(given, str):
        return record.from_text(given)
    return record.from_json(given)


@blueprint.get("/v1/records")
def archive() -> Response:
    """The app's finished games' records, one JSON a line; ``Next-Cursor`` and a ``Link``
    to the next page while there is one."""
    app = apps.required_app()
    query = load_query(archive_query)
    page = records().archive(
        app, since=query.get("since"), limit=query["limit"], cursor=query.get("cursor")
    )
    body = b"".join(orjson.dumps(item) + b"\n" for item in page.records)
    response = Response(body, mimetype=NDJSON)
    if page.next_cursor is not None:
        following = {**request.args.to_dict(), "cursor": page.next_cursor}
        url = f"{request.path}?{urlencode(following)}"
        response.headers["Next-Cursor"] = page.next_cursor
        response.headers["Link"] = f'<{url}>; rel="next"'
    return response
