"""``GET /v1/matches/{id}/stream``: a match's public events as Server-Sent Events.

The events come from the store (:meth:`service.store.MatchStore.follow`, through the
referee), which reads them as they are committed, so any instance serves any match and
nothing is lost between instances; this module only writes them as Server-Sent Events.

Each SSE message is ``id: <version>``, ``event: <type>``, ``data: <the public event JSON>``.
A client resumes with ``Last-Event-ID`` (EventSource sends it by itself when it
reconnects) or ``?after=<version>``. A comment line keeps the connection alive when
nothing happens for ``STREAM_KEEPALIVE_SECONDS`` (15 by default; see
:class:`service.config.Settings`). The stream ends once the match is finished and its last
event sent; asked again after that, it answers 204, which tells
EventSource to stop reconnecting. It also ends after ``STREAM_MAX_SECONDS`` (600) so a
worker thread is never held forever, and within a second of the worker being told to stop
(:data:`service.threads.shutting_down`): either way the client reconnects where it left off.

The stream is public: private details (a rack, drawn tiles) never travel on it. A player's
client refetches ``GET /v1/matches/{id}`` with its seat token when an event arrives.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator

from flask import Blueprint, Response, current_app, request

from service.api.errors import BadRequest
from service.config import Settings
from service.observability import STREAMS_OPEN
from service.referee import MatchNotFound, Referee
from service.store import StoredEvent, StoreUnavailable
from service.threads import long_wait, shutting_down

__all__ = ["blueprint", "sse_message"]

blueprint = Blueprint("stream", __name__)
log = logging.getLogger(__name__)

RETRY_MILLISECONDS = 2000
WAKE_SECONDS = 1.0  # the longest one read blocks: how soon a stream sees the worker stopping
_VERSION = re.compile(r"[0-9]{1,16}")
MAX_VERSION = 2**53 - 1
_MATCH_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


@blueprint.get("/v1/matches/<match_id>/stream")
def stream(match_id: str) -> Response:
    """Stream the public events after the client's last one; 404 for an unknown match."""
    after = _resume_point()
    if not _MATCH_ID.fullmatch(match_id):
        raise MatchNotFound(match_id)
    settings: Settings = current_app.config["REFEREE_SETTINGS"]
    keepalive = max(settings.stream_keepalive_seconds, 0.05)
    referee: Referee = current_app.extensions["referee"]
    events = referee.follow(match_id, after=after, wake=min(keepalive, WAKE_SECONDS))
    if events is None:
        return Response(status=204)  # finished, and the client has every event
    lifetime = settings.stream_max_seconds
    messages = _messages(events, after=after, keepalive=keepalive, lifetime=lifetime)
    response = Response(messages, mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache, no-store"
    response.headers["X-Accel-Buffering"] = "no"  # nginx: pass each message on at once
    return response


def sse_message(event: StoredEvent) -> str:
    """One SSE message for a stored event (its JSON is one line)."""
    return f"id: {event.version}\nevent: {event.type.value}\ndata: {event.json}\n\n"


def _messages(
    events: Iterator[list[StoredEvent]], *, after: int, keepalive: float, lifetime: float
) -> Iterator[str]:
    """SSE text until the match is finished and sent, the stream's life is over, the worker
    stops, or the client leaves (then the client reconnects with Last-Event-ID)."""
    with long_wait():  # the stream holds its thread for minutes: free its run slot
        started = sent = time.monotonic()
        STREAMS_OPEN.inc()
        try:
            yield f"retry: {RETRY_MILLISECONDS}\n: following events after {after}\n\n"
            for batch in events:
                for event in batch:
                    yield sse_message(event)
                if batch:
                    sent = time.monotonic()
                elif time.monotonic() - sent >= keepalive:
                    yield ": keep-alive\n\n"
                    sent = time.monotonic()
                if time.monotonic() - started >= lifetime or shutting_down.is_set():
                    return
        except StoreUnavailable as error:
            log.warning("event stream ended: %s", error)
        finally:
            STREAMS_OPEN.dec()
            close = getattr(events, "close", None)
            if close is not None:
                close()


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
