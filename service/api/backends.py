"""Server-to-server endpoints: listing an app's matches, new seat tokens, leave, cancel, rematch,
and giving time to a seat's bank.

The app is named by ``X-API-Key`` (:mod:`service.api.apps`); a seat by its bearer token.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request, url_for
from marshmallow import Schema, fields, validate

from service import game
from service.api import apps, auth
from service.api.extensions import referee
from service.api.fields import WholeNumber, plain_text
from service.api.parsing import load_body, load_query
from service.api.schemas import give_time_schema
from service.game import MAX_REF_LENGTH, Match, Status
from service.referee import BadToken, Rematched

__all__ = ["blueprint", "seats_of"]

blueprint = Blueprint("backends", __name__)
MAX_PAGE = 100


class ListQuery(Schema):
    ref = fields.String(validate=[validate.Length(min=1, max=MAX_REF_LENGTH), plain_text])
    status = fields.String(validate=validate.OneOf([status.value for status in Status]))
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=MAX_PAGE))
    cursor = fields.String(validate=validate.Length(min=1, max=512))


class LeaveBody(Schema):
    seat = WholeNumber(validate=validate.Range(min=0, max=5))


list_query, leave_body = ListQuery(), LeaveBody()


def etag(version: int) -> str:
    """The strong ETag of a match version."""
    return f'"{version}"'


def seats_of(match: Match, tokens: dict[int, str], *, refs: bool) -> list[dict[str, Any]]:
    """The ``seats`` of a creation answer: the seats in ``tokens`` with their tokens, and
    with ``refs`` (for the owning app only) each player's ref."""
    seats = []
    for seat, token in sorted(tokens.items()):
        player = match.players[seat]
        shown: dict[str, Any] = {"seat": seat, "name": player.name, "bot": player.bot}
        if refs:
            shown["ref"] = player.ref
        seats.append({**shown, "token": token})
    return seats


@blueprint.get("/v1/matches")
def list_matches() -> dict[str, Any]:
    """The calling app's matches (one player's with ``ref``), a page at a time."""
    app = apps.required_app()
    query = load_query(list_query)
    page = referee().list_matches(
        app,
        ref=query.get("ref"),
        status=query.get("status"),
        limit=query["limit"],
        cursor=query.get("cursor"),
    )
    return {"matches": page.items, "next_cursor": page.next_cursor}


@blueprint.post("/v1/matches/<match_id>/seats/<int:seat>/token")
def reissue_token(match_id: str, seat: int) -> tuple[Response, int]:
    """A new token for a human seat; the old one stops working."""
    token = referee().reissue_token(match_id, seat, app=apps.required_app())
    return jsonify({"seat": seat, "token": token}), 201


@blueprint.post("/v1/matches/<match_id>/leave")
def leave(match_id: str) -> Response:
    """The seat (of the token, or ``seat`` with the owner's key) leaves; a bot takes it."""
    body = load_body(leave_body)
    token, app = _seat_or_app()
    match, now = referee().leave(match_id, token=token, app=app, seat=body.get("seat"))
    return _answer(match, now, owner=app is not None and token is None)


@blueprint.post("/v1/matches/<match_id>/seats/<int:seat>/time")
def give_time(match_id: str, seat: int) -> Response:
    """Give time to a seat's bank: another seat's courtesy (its token), or the owner's key."""
    body = load_body(give_time_schema)
    token, app = _seat_or_app()
    match, now = referee().give_time(match_id, seat, body["seconds"], token=token, app=app)
    return _answer(match, now, owner=app is not None and token is None)


@blueprint.post("/v1/matches/<match_id>/cancel")
def cancel(match_id: str) -> Response:
    """The owner ends the match at once."""
    match, now = referee().cancel(match_id, app=apps.required_app())
    return _answer(match, now, owner=True)


@blueprint.post("/v1/matches/<match_id>/rematch")
def rematch(match_id: str) -> tuple[Response, int, dict[str, str]]:
    """The same players and rules again; the first call creates it, the others join it."""
    token, app = _seat_or_app()
    if token is not None:
        app = None  # the seat asks: its own seat, no refs
    made: Rematched = referee().rematch(match_id, token=token, app=app)
    match = made.match
    view = game.owner_view(match, now=made.now) if app else game.public_view(match, now=made.now)
    seats = seats_of(match, made.tokens, refs=app is not None)
    answer = {"id": match.id, "seats": seats, "match": view}
    headers = {"Location": url_for("matches.get_match", match_id=match.id)}
    return jsonify(answer), 201 if made.created else 200, headers


def _seat_or_app() -> tuple[str | None, str | None]:
    """The seat token and the app of a request that may carry either (the token counts
    first). A wrong key, or an ``Authorization`` header that is no bearer token, is a 401."""
    app = apps.calling_app()
    token = auth.bearer_token()
    if token is None and request.headers.get("Authorization"):
        raise BadToken("Authorization must be: Bearer <seat token>")
    return token, app


def _answer(match: Match, now: float, *, owner: bool) -> Response:
    view = game.owner_view(match, now=now) if owner else game.public_view(match, now=now)
    response = jsonify({"match": view, "drawn": []})
    response.headers["ETag"] = etag(match.version)
    return response
