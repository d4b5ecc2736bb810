"""``GET /v1/matches/{id}/stream``: a match's public events as Server-Sent Events.

The events come from the store, which reads them as they are committed, so any instance
serves any match and nothing is lost between instances. In each worker one reader per match
feeds every stream and long-poll of that match (:mod:`service.fanout`): 1,000 viewers of one
table cost one Redis connection per worker. An open stream costs a greenlet and its socket,
not a thread (docs/ARCHITECTURE.md "Worker model"); it is first admitted by the caps of
:mod:`service.api.connections` (429 or 503 with ``Retry-After`` beyond them). This module
writes the events as Server-Sent Events.

Each SSE message is ``id: <version>``, ``event: <type>``, ``data: <the public event JSON>``.
A client resumes with ``Last-Event-ID`` (EventSource sends it by itself when it
reconnects) or ``?after=<version>``. A comment line keeps the connection alive when
nothing happens for ``STREAM_KEEPALIVE_SECONDS`` (15 by default; see
:class:`service.config.Settings`). The stream ends once the match is finished and its last
event sent; asked again after that, it answers 204, which tells
EventSource to stop reconnecting. It also ends after ``STREAM_MAX_SECONDS`` (600), and within
a second of the worker being told to stop (:data:`service.workers.threads.shutting_down`): either
way the client reconnects where it left off.

The stream is public: private details (a rack, drawn tiles) never travel on it. A player's
client refetches ``GET /v1/matches/{id}`` with its seat token when an event arrives.
"""

from __future__ import annotations

import re

from flask import Blueprint, Response, current_app, request

from service.api.connections import admit
from service.api.errors import BadRequest
from service.api.extensions import referee
from service.api.sse import event_stream, sse_response
from service.config import Settings
from service.fanout import Delivered, Fanout
from service.referee import LAST_EVENTS, MatchNotFound

__all__ = ["blueprint"]

blueprint = Blueprint("stream", __name__)

_VERSION = re.compile(r"[0-9]{1,16}")
MAX_VERSION = 2**53 - 1
_MATCH_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


@blueprint.get("/v1/matches/<match_id>/stream")
def stream(match_id: str) -> Response:
    """Stream the public events after the client's last one; 404 for an unknown match."""
    after = _resume_point()
    if not _MATCH_ID.fullmatch(match_id):
        raise MatchNotFound(match_id)
    latest = referee().stream_start(match_id, after=after)
    if latest is None:
        return Response(status=204)  # finished (or canceled), and the client has every event
    ticket = admit()
    settings: Settings = current_app.config["REFEREE_SETTINGS"]
    fanout: Fanout = current_app.extensions["fanout"]
    messages = event_stream(
        lambda: fanout.follow(match_id, after, latest),
        request.environ.get("gunicorn.socket"),
        opening=f"following events after {after}",
        write=_text,  # each event's text was made once for all its streams
        last=lambda delivered: delivered[-1].event.type in LAST_EVENTS,
        keepalive=max(settings.stream_keepalive_seconds, 0.05),
        lifetime=settings.stream_max_seconds,
        name=f"event stream of {match_id}",
    )
    return sse_response(messages, ticket)


def _text(delivered: list[Delivered]) -> str:
    return "".join(item.text for item in delivered)


def _resume_point() -> int:
    """``Last-Event-ID`` if sent, else ``?after=``, else 0; a malformed one is a 400."""
    after = [_version("after", raw) for raw in request.args.getlist("after")]
    last_event_id = request.headers.get("Last-Event-ID")
    if last_event_id is not None:
        return _version("Last-Event-ID", last_event_id)
    return after[0] if after else 0


def _version(source: str, raw: str) -> int:
    if not _VERSION.fullmatch(raw) or int(raw) > MAX_VERSION:
        raise BadRequest(f"{source} must be a version (an integer >= 0), not {raw!r}")
    return int(raw)
