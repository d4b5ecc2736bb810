"""The one Server-Sent Events writer, for a match's event stream and an app's feed.

A stream writes what its follower (:mod:`service.fanout`) hands it, a batch a write, and a
comment line when nothing happens for ``keepalive`` seconds. It ends when the follower's feed
ends (``None``) or a batch is the last one, after ``lifetime`` seconds, within a second of the
worker being told to stop (:data:`service.workers.threads.shutting_down`), or as soon as the client
leaves (its place under the caps of :mod:`service.api.connections` is then free again, not
at the next write): the client reconnects with ``Last-Event-ID`` where it left off.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Generator
from typing import Protocol, TypeVar

from flask import Response

from service.api.connections import StreamBody, Ticket
from service.fanout import FeedLost
from service.observability import STREAMS_OPEN
from service.referee import StoreUnavailable
from service.workers.threads import shutting_down, when_closed

__all__ = ["RETRY_MILLISECONDS", "Followed", "event_stream", "sse_response"]

RETRY_MILLISECONDS = 2000
log = logging.getLogger(__name__)
T = TypeVar("T")


class Followed(Protocol[T]):
    """A follower of :mod:`service.fanout`: its next batch (``[]``: none yet, or woken;
    ``None``: the end), a wake from any thread, and a close."""

    def next(self, timeout: float) -> list[T] | None: ...

    def wake(self) -> None: ...

    def close(self) -> None: ...


def sse_response(messages: Generator[str, None, None], ticket: Ticket) -> Response:
    """The streamed answer of ``messages``; ``ticket`` (its admitted place) goes with it."""
    response = Response(StreamBody(messages, ticket), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache, no-store"
    response.headers["X-Accel-Buffering"] = "no"  # nginx: pass each message on at once
    return response


def event_stream(
    follow: Callable[[], Followed[T]],
    connection: socket.socket | None,
    *,
    opening: str,
    write: Callable[[list[T]], str],
    last: Callable[[list[T]], bool] = lambda batch: False,
    keepalive: float,
    lifetime: float,
    name: str,
) -> Generator[str, None, None]:
    """SSE text: ``opening`` (a comment), then ``write(batch)`` for each batch that the
    follower ``follow()`` makes (when the body is first read) hands out, until
    ``last(batch)`` (see the module for the other ends); ``connection``, the client's socket
    under gunicorn, tells when the client leaves; ``name`` says which stream in the log. The
    follower is closed at the end."""
    follower = follow()
    gone = threading.Event()

    def client_left() -> None:
        gone.set()
        follower.wake()

    stop_watching = when_closed(connection, client_left)
    started = sent = time.monotonic()
    STREAMS_OPEN.inc()
    try:
        yield f"retry: {RETRY_MILLISECONDS}\n: {opening}\n\n"
        while not shutting_down.is_set() and not gone.is_set():
            now = time.monotonic()
            left = lifetime - (now - started)
            if left <= 0:
                return
            batch = follower.next(min(keepalive - (now - sent), left))
            if batch is None:
                return  # the feed is over (a match finished and sent, or expired)
            if batch:
                yield write(batch)  # one write for the batch
                sent = time.monotonic()
                if last(batch):
                    return
            elif time.monotonic() - sent >= keepalive:
                yield ": keep-alive\n\n"
                sent = time.monotonic()
            # else woken early: the worker stopping, the client gone, or the lifetime over
    except (FeedLost, StoreUnavailable) as error:
        log.warning("%s ended: %s", name, error)
    finally:
        stop_watching()
        follower.close()
        STREAMS_OPEN.dec()
