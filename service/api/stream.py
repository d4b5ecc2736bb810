"""``GET /v1/matches/{id}/stream``: a match's public events as Server-Sent Events.

The events come from the match's Redis Stream (``{m:<id>}:events``, entry ``0-<n>`` is
the event that produced version ``n``), read with ``XREAD BLOCK`` on a connection of the
stream's own, so any instance serves any match and nothing is lost between instances.

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

import json
import logging
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import redis
from flask import Blueprint, Response, current_app, request
from redis.cluster import RedisCluster
from redis.exceptions import RedisError

from service.api.errors import BadRequest
from service.config import Settings
from service.observability import STREAMS_OPEN
from service.referee import MatchNotFound
from service.store.matches import MatchStore
from service.threads import long_wait, shutting_down

__all__ = ["blueprint", "sse_message"]

blueprint = Blueprint("stream", __name__)
log = logging.getLogger(__name__)

FINAL_EVENT = "match_finished"
RETRY_MILLISECONDS = 2000
WAKE_SECONDS = 1.0  # the longest one read blocks: how soon a stream sees the worker stopping
BATCH = 100
_VERSION = re.compile(r"[0-9]{1,16}")
MAX_VERSION = 2**53 - 1
_MATCH_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


@blueprint.get("/v1/matches/<match_id>/stream")
def stream(match_id: str) -> Response:
    """Stream the public events after the client's last one; 404 for an unknown match."""
    after = _resume_point()
    redis_client = current_app.extensions["redis"]
    key = MatchStore.events_key(match_id)
    store: MatchStore = current_app.extensions["referee"].store
    if not _valid_id(match_id) or not store.exists(match_id):
        raise MatchNotFound(match_id)
    finished_at = _finished_at(redis_client, key)
    if finished_at is not None and after >= finished_at:
        return Response(status=204)
    settings: Settings = current_app.config["REFEREE_SETTINGS"]
    follower = _Follower(
        key,
        after=after,
        connect=_dedicated_connector(settings, redis_client, key),
        keepalive=settings.stream_keepalive_seconds,
        lifetime=settings.stream_max_seconds,
    )
    response = Response(follower.messages(), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache, no-store"
    response.headers["X-Accel-Buffering"] = "no"  # nginx: pass each message on at once
    return response


def sse_message(event_json: str, *, version: int, event_type: str) -> str:
    """Return one SSE message for a stored event (its JSON is one line)."""
    return f"id: {version}\nevent: {event_type}\ndata: {event_json}\n\n"


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


def _valid_id(match_id: str) -> bool:
    return _MATCH_ID.fullmatch(match_id) is not None


def _finished_at(client: Any, key: str) -> int | None:
    """The version of the stream's ``match_finished`` event, if it is the last one."""
    last = client.xrevrange(key, "+", "-", count=1)
    if not last:
        return None
    entry_id, fields = last[0]
    if json.loads(fields["e"]).get("type") != FINAL_EVENT:
        return None
    return _version_of(entry_id)


def _version_of(entry_id: str) -> int:
    return int(entry_id.partition("-")[2])


class _Follower:
    """Reads one match's stream for one client, on a Redis connection of its own."""

    def __init__(
        self,
        key: str,
        *,
        after: int,
        connect: Callable[[float], Any],
        keepalive: float,
        lifetime: float,
    ) -> None:
        self.key = key
        self.after = after
        self.connect = connect
        self.keepalive = max(keepalive, 0.05)
        self.lifetime = lifetime

    def messages(self) -> Iterator[str]:
        """Yield SSE text until the match is finished and sent, or the client leaves."""
        with long_wait():  # the stream holds its thread for minutes: free its run slot
            yield from self._messages()

    def _messages(self) -> Iterator[str]:
        block = min(self.keepalive, WAKE_SECONDS)
        client = self.connect(block)
        started = sent = time.monotonic()
        STREAMS_OPEN.inc()
        try:
            yield f"retry: {RETRY_MILLISECONDS}\n: following {self.key} after {self.after}\n\n"
            while time.monotonic() - started < self.lifetime and not shutting_down.is_set():
                entries = self._read(client, block)
                if not entries:
                    if time.monotonic() - sent < self.keepalive:
                        continue
                    if not client.exists(self.key):
                        return  # the match expired
                    yield ": keep-alive\n\n"
                    sent = time.monotonic()
                    continue
                finished = False
                for entry_id, fields in entries:
                    version = _version_of(entry_id)
                    event_type = json.loads(fields["e"]).get("type", "message")
                    self.after = version
                    finished = finished or event_type == FINAL_EVENT
                    yield sse_message(fields["e"], version=version, event_type=event_type)
                sent = time.monotonic()
                if finished and _finished_at(client, self.key) == self.after:
                    return
        except RedisError as error:
            # The client reconnects with Last-Event-ID and resumes where it was.
            log.warning("event stream %s ended: %s", self.key, type(error).__name__)
        finally:
            STREAMS_OPEN.dec()
            client.close()

    def _read(self, client: Any, block: float) -> list[tuple[str, dict[str, str]]]:
        """Block up to ``block`` seconds; ``[]`` on a timeout."""
        answer = client.xread({self.key: f"0-{self.after}"}, count=BATCH, block=int(block * 1000))
        if not answer:
            return []
        # redis-py answers [[key, entries]] (RESP2) or {key: [entries]} (RESP3).
        if isinstance(answer, dict):
            return list(next(iter(answer.values()))[0])
        return list(answer[0][1])


def _dedicated_connector(settings: Settings, shared: Any, key: str) -> Callable[[float], Any]:
    """Return ``connect(block_seconds)``: a client holding one connection of its own.

    Its reads wait longer than ``XREAD BLOCK``, unlike the shared pool's. With Redis
    Cluster it talks to the node that holds ``key`` now; if the slot moves, the read
    fails, the stream ends and the client reconnects to the right node.
    """
    common: dict[str, Any] = {
        "socket_connect_timeout": settings.redis_connect_timeout,
        "decode_responses": True,
        "single_connection_client": True,
        "client_name": "sse:" + key,  # how CLIENT LIST tells the streams apart
    }
    node = shared.get_node_from_key(key) if isinstance(shared, RedisCluster) else None

    def connect(block_seconds: float) -> Any:
        timeout = block_seconds + max(5.0, settings.redis_socket_timeout)
        if node is not None:
            return redis.Redis(host=node.host, port=node.port, socket_timeout=timeout, **common)
        return redis.Redis.from_url(settings.redis_url, socket_timeout=timeout, **common)

    return connect
