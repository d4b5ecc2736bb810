"""``GET /v1/matches/{id}/stream``: a match's public events as Server-Sent Events.

The events come from the store, which reads them as they are committed, so any instance
serves any match and nothing is lost between instances. In each worker one reader per match
feeds every stream and long-poll of that match (:mod:`service.fanout`): 1,000 viewers of one
table cost one Redis connection per worker. An open stream costs a greenlet and its socket,
not a thread (README "Worker model"); it is first admitted by the caps of
:mod:`service.api.connections` (429 or 503 with ``Retry-After`` beyond them). This module
writes the events as Server-Sent Events.

Each SSE message is ``id: <version>``, ``event: <type>``, ``data: <the public event JSON>``.
A client resumes with ``Last-Event-ID`` (EventSource sends it by itself when it
reconnects) or ``?after=<version>``. A comment line keeps the connection alive when
nothing happens for ``STREAM_KEEPALIVE_SECONDS`` (15 by default; see
:class:`service.config.Settings`). The stream ends once the match is finished and its last
event sent; asked again after that, it answers 204, which tells
EventSource to stop reconnecting. It also ends after ``STREAM_MAX_SECONDS`` (600), and within
a second of the worker being told to stop (:data:`service.threads.shutting_down`): either
way the client reconnects where it left off.

The stream is public: private details (a rack, drawn tiles) never travel on it. A player's
client refetches ``GET /v1/matches/{id}`` with its seat token when an event arrives.
"""

from __future__ import annotations

import logging
import re
import socket
import threading
import time
from collections.abc import Generator

from flask import Blueprint, Response, current_app, request

from service.api.connections import Refused, StreamBody, admit
from service.api.errors import BadRequest
from service.api.extensions import referee
from service.config import Settings
from service.fanout import Fanout, FeedLost
from service.observability import STREAMS_OPEN
from service.referee import LAST_EVENTS, MatchNotFound
from service.store import StoredEvent, StoreUnavailable
from service.threads import shutting_down, when_closed

__all__ = ["blueprint", "sse_message"]

blueprint = Blueprint("stream", __name__)
log = logging.getLogger(__name__)

RETRY_MILLISECONDS = 2000
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
    try:
        ticket = admit()
    except Refused as refused:
        return refused.response()
    settings: Settings = current_app.config["REFEREE_SETTINGS"]
    messages = _messages(
        current_app.extensions["fanout"],
        request.environ.get("gunicorn.socket"),
        match_id,
        after=after,
        latest=latest,
        keepalive=max(settings.stream_keepalive_seconds, 0.05),
        lifetime=settings.stream_max_seconds,
    )
    response = Response(StreamBody(messages, ticket), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache, no-store"
    response.headers["X-Accel-Buffering"] = "no"  # nginx: pass each message on at once
    return response


def sse_message(event: StoredEvent) -> str:
    """One SSE message for a stored event (its JSON is one line)."""
    return f"id: {event.version}\nevent: {event.type.value}\ndata: {event.json}\n\n"


def _messages(
    fanout: Fanout,
    connection: socket.socket | None,
    match_id: str,
    *,
    after: int,
    latest: int,
    keepalive: float,
    lifetime: float,
) -> Generator[str, None, None]:
    """SSE text until the match is finished and sent, the stream's life is over, the worker
    stops, or the client leaves (then the client reconnects with Last-Event-ID)."""
    follower = fanout.follow(match_id, after, latest)
    # A client that leaves ends its stream at once (its place under the caps is free again),
    # not at the next write.
    gone = threading.Event()

    def client_left() -> None:
        gone.set()
        follower.wake()

    stop_watching = when_closed(connection, client_left)
    started = sent = time.monotonic()
    STREAMS_OPEN.inc()
    try:
        yield f"retry: {RETRY_MILLISECONDS}\n: following events after {after}\n\n"
        while not shutting_down.is_set() and not gone.is_set():
            now = time.monotonic()
            left = lifetime - (now - started)
            if left <= 0:
                return
            delivered = follower.next(min(keepalive - (now - sent), left))
            if delivered is None:
                return  # the match is finished and sent, or it expired
            if not delivered:
                if time.monotonic() - sent >= keepalive:
                    yield ": keep-alive\n\n"
                    sent = time.monotonic()
                continue  # else woken early: the worker stopping, or the lifetime is over
            # One write for the batch; each event's text was made once for all its streams.
            yield "".join(item.text for item in delivered)
            sent = time.monotonic()
            if delivered[-1].event.type in LAST_EVENTS:
                return
    except (FeedLost, StoreUnavailable) as error:
        log.warning("event stream of %s ended: %s", match_id, error)
    finally:
        stop_watching()
        follower.close()
        STREAMS_OPEN.dec()


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
