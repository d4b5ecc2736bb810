"""Match endpoints: create, view (with long-poll), the moves of a turn, the event log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, url_for
from marshmallow import Schema, fields, validate
from werkzeug.datastructures import Headers

from service import game
from service.api import apps, auth, backends
from service.api.connections import waiting
from service.api.context import request_environ
from service.api.extensions import referee
from service.api.jsonprovider import OrjsonProvider
from service.api.parsing import load_body, load_query
from service.api.records import parsed_record
from service.api.rendered import Reader, RenderedViews
from service.api.schemas import (
    create_match_schema,
    plain_table_body,
    table_body_schema,
    test_mode_create_match_schema,
)
from service.game import Match, PlayerSpec
from service.game.scenarios import SCENARIOS, Scenario
from service.game.state import sorted_rack
from service.jsoncodec import dumps
from service.record import setup_at
from service.referee import Created, MatchNotFound, Moved
from service.rules import codes_of, name_readings

__all__ = ["blueprint"]

blueprint = Blueprint("matches", __name__)
MAX_WAIT_SECONDS = 30
MAX_VERSION = 2**53 - 1  # versions are plain JSON numbers, exact up to here
JSON = "application/json"  # what jsonify answers (service.api.jsonprovider)


class ViewQuery(Schema):
    wait_version = fields.Integer(validate=validate.Range(min=0, max=MAX_VERSION))
    timeout = fields.Float(load_default=25.0, validate=validate.Range(min=0, max=MAX_WAIT_SECONDS))


class EventsQuery(Schema):
    after = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_VERSION))
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1, max=500))


view_query, events_query = ViewQuery(), EventsQuery()


def view_of(match: Match, seat: int | None, now: float, app: str | None = None) -> dict[str, Any]:
    """The match as ``seat`` may see it (a seat that left sees the public view), or without a
    seat as ``app`` may: with the players' refs for the app that owns it."""
    return _view(match, reader_of(match, seat, app), now)


def reader_of(match: Match, seat: int | None, app: str | None) -> Reader:
    """Which view of ``match`` the caller gets (see :func:`view_of`)."""
    if seat is not None and not match.players[seat].left:
        return ("seat", seat)
    if app is not None and app == match.owner:
        return ("owner", None)
    return ("public", None)


def _view(match: Match, reader: Reader, now: float) -> dict[str, Any]:
    kind, seat = reader
    if seat is not None:
        return game.private_view(match, seat, now=now)
    if kind == "owner":
        return game.owner_view(match, now=now)
    return game.public_view(match, now=now)


def rendered_views() -> RenderedViews:
    """This worker's rendered views."""
    views: RenderedViews = current_app.extensions["rendered_views"]
    return views


def json_provider() -> OrjsonProvider:
    """The app's JSON answers (``service/api/jsonprovider.py``)."""
    provider: OrjsonProvider = current_app.json  # type: ignore[assignment]
    return provider


def etag(version: int) -> str:
    """The strong ETag of a match version."""
    return f'"{version}"'


@blueprint.post("/v1/matches")
def create_match() -> tuple[Response, int, dict[str, str]]:
    """Create a match and hand out the seats' tokens."""
    testing = apps.may_use_test_features(apps.calling_app())
    body = load_body(test_mode_create_match_schema if testing else create_match_schema)
    players, deal = _dealt(body)
    owner = apps.creating_app(refs=any(player.ref for player in players))
    created = referee().create(players, owner=owner, **deal)
    match = _with_scenario_draft(created, SCENARIOS.get(body.get("scenario", "")))
    tokens = dict(enumerate(created.tokens))
    answer = {
        "id": match.id,
        "seats": backends.seats_of(match, tokens, refs=owner is not None),
        "match": view_of(match, None, created.now, owner),
    }
    headers = {"Location": url_for(".get_match", match_id=match.id), "ETag": etag(match.version)}
    return jsonify(answer), 201, headers


def _dealt(body: dict[str, Any]) -> tuple[Sequence[PlayerSpec], dict[str, Any]]:
    """The players and the deal (``rules``, ``seed``, ``setup``) a new match's body asks for:
    its own, a named scenario's, or a record's position (the test features)."""
    scenario = SCENARIOS.get(body.get("scenario", ""))
    if scenario is not None:
        deal = {"rules": scenario.rules, "seed": scenario.seed, "setup": scenario.setup}
        return scenario.seated(body.get("players")), deal
    if "from_record" in body:
        given = parsed_record(body["from_record"]["record"])
        players, setup = setup_at(given, body["from_record"]["turn"])
        return players, {"rules": given.rules, "setup": setup}
    deal = {"rules": body["rules"], "seed": body.get("seed"), "setup": body.get("setup")}
    return body["players"], deal


def _with_scenario_draft(created: Created, scenario: Scenario | None) -> Match:
    """The new match, after the draft its scenario has the seat to move share, if any."""
    if scenario is None or scenario.draft is None:
        return created.match
    seat = created.match.current_seat
    referee().save_draft(created.match.id, created.tokens[seat], scenario.draft)
    return referee().view(created.match.id, None)[0]


@blueprint.get("/v1/scenarios")
def list_scenarios() -> dict[str, Any]:
    """The named scenarios ``POST /v1/matches`` deals with ``"scenario"``."""
    return {"scenarios": [scenario.public() for scenario in SCENARIOS.values()]}


@blueprint.get("/v1/matches/<match_id>")
def get_match(match_id: str) -> Response:
    """The match, settled; with a token, the seat's rack; 304 when unchanged."""
    query = load_query(view_query)
    token = auth.bearer_token()
    app = apps.calling_app()  # a wrong key answers 401 before any wait
    if "wait_version" in query:
        # an unknown match, or a token that opens no seat of it, is refused before any wait
        referee().view(match_id, token)
        longest = current_app.config["REFEREE_SETTINGS"].long_poll_max_seconds
        with waiting():  # admitted by the caps of service/api/connections.py
            current_app.extensions["fanout"].wait_after(
                match_id, query["wait_version"], min(query["timeout"], longest)
            )
    match, seat, now = referee().view(match_id, token, newer_than=query.get("wait_version"))
    if (
        app is not None
        and match.owner is not None
        and (apps.is_sandbox(app) != apps.is_sandbox(match.owner))
    ):
        raise MatchNotFound(match_id)  # sandbox and live apps never see each other's matches
    if auth.if_none_match() == match.version:
        return Response(status=304, headers={"ETag": etag(match.version)})
    reader = reader_of(match, seat, app)
    if match.banks:  # a bank's time_left counts down: the view differs with the clock
        body = dumps(_view(match, reader, now))
    else:
        body = rendered_views().json(
            (match.id, match.version, reader), now, lambda at: _view(match, reader, at)
        )
    response = json_provider().encoded(body)
    response.headers["ETag"] = etag(match.version)
    return response


@blueprint.post("/v1/matches/<match_id>/play")
def play(match_id: str) -> Response:
    """Play the whole new table."""
    environ = request_environ()  # read once (service.api.auth.Environ)
    table = load_body(table_body_schema, plain=plain_table_body, environ=environ)["table"]
    played = referee().play(
        match_id, auth.bearer_token(environ), table, guards=auth.guards(environ)
    )
    return _moved(played, environ)


@blueprint.post("/v1/matches/<match_id>/draw")
def draw(match_id: str) -> Response:
    """Draw one tile; the turn ends."""
    return _moved(referee().draw(match_id, auth.bearer_token(), guards=auth.guards()))


@blueprint.post("/v1/matches/<match_id>/pass")
def pass_turn(match_id: str) -> Response:
    """Pass (empty pool, and no legal play)."""
    return _moved(referee().pass_turn(match_id, auth.bearer_token(), guards=auth.guards()))


@blueprint.put("/v1/matches/<match_id>/draft")
def put_draft(match_id: str) -> Response:
    """Share the work in progress."""
    environ = request_environ()  # read once (service.api.auth.Environ)
    table = load_body(table_body_schema, plain=plain_table_body, environ=environ)["table"]
    token, guards = auth.bearer_token(environ), auth.guards(environ)
    return _moved(referee().save_draft(match_id, token, table, guards=guards), environ)


@blueprint.post("/v1/matches/<match_id>/next-game")
def next_game(match_id: str) -> Response:
    """Start the next game once the last one is over."""
    return _moved(referee().next_game(match_id, auth.bearer_token(), guards=auth.guards()))


@blueprint.post("/v1/matches/<match_id>/redeal")
def redeal(match_id: str) -> Response:
    """Deal both racks anew: a rack dealt 3 doubles asks, before the first move (MSO rules)."""
    return _moved(referee().redeal(match_id, auth.bearer_token(), guards=auth.guards()))


@blueprint.get("/v1/matches/<match_id>/hint")
def hint(match_id: str) -> Response:
    """The solver's best play for the caller's rack: a whole table to submit as is."""
    match, solution = referee().hint(match_id, auth.bearer_token())
    answer = {
        "status": solution.status.value,
        "version": match.version,
        "table": ([codes_of(name_readings(s)) for s in solution.table] if solution.found else None),
        "placed": [tile.code for tile in sorted_rack(solution.placed.elements())],
        "tile_count": solution.tile_count,
        "points": solution.points,
    }
    response = jsonify(answer)
    response.headers["ETag"] = etag(match.version)
    return response


@blueprint.get("/v1/matches/<match_id>/events")
def events(match_id: str) -> dict[str, Any]:
    """The public event log after a version."""
    query = load_query(events_query)
    return {"events": referee().events(match_id, after=query["after"], limit=query["limit"])}


class _Answer(Response):
    """A move's answer, made as werkzeug's constructor makes ``Response(body,
    content_type=JSON)`` (``Content-Type``, then ``Content-Length``, status 200), or without a
    body a 204 with no header at all (no ``Content-Type``: Flask's default is text/html); then
    ``headers`` added in order. The same object (``tests/api/test_move_answers.py`` compares
    every attribute with the constructor's), through the constructor's public arguments, but
    with the headers made first and the body given after: the constructor sets each header it
    adds by looking for it first (24,000 instructions a draft's answer against 16,000)."""

    default_mimetype = None  # the headers given hold the Content-Type, if any

    def __init__(self, body: bytes | None, *headers: tuple[str, str]) -> None:
        listed = Headers()
        if body is not None:
            listed.add("Content-Type", JSON)
            listed.add("Content-Length", str(len(body)))
        for name, value in headers:
            listed.add(name, value)
        super().__init__(None, 204 if body is None else 200, listed)
        if body is not None:
            self.response = [body]


_MINIMAL = ("Preference-Applied", "return=minimal")
_REPLAYED = ("Idempotent-Replayed", "true")


def _moved(moved: Moved, environ: auth.Environ | None = None) -> Response:
    """The answer to a move: the match as the mover sees it, or none (``return=minimal``).

    Written as ``jsonify`` writes it (orjson, a final newline, ``application/json``), without
    the app's proxy and the provider's arguments, as an :class:`_Answer` with its headers
    (9,000 instructions fewer on every move's answer than ``jsonify``, ``bench/instructions.py``,
    and 8,000 fewer than the constructor's as usually called)."""
    tag = ("ETag", etag(moved.version))
    if auth.prefers_minimal(environ):  # no view is made (docs/CLIENTS.md, "4. Acting")
        if moved.replayed:
            return _Answer(None, _MINIMAL, tag, _REPLAYED)
        return _Answer(None, _MINIMAL, tag)
    body = dumps({"match": moved.view, "drawn": list(moved.drawn)}) + b"\n"
    if moved.replayed:
        return _Answer(body, tag, _REPLAYED)
    return _Answer(body, tag)
