"""Caps on open event streams and long-polls, answered at once.

An open event stream or long-poll costs little (a greenlet, a socket, a few kilobytes: see
docs/ARCHITECTURE.md "Worker model"), but not nothing, and one client must not be able to take
them all.
Before a stream or long-poll starts waiting it is admitted:

- at most ``MAX_STREAMS_PER_ADDRESS`` (default 64; 0: no cap) open at once from one client
  address over the whole server (``request.remote_addr``: behind ``TRUSTED_PROXIES``, the
  forwarded address), counted across the workers in :mod:`service.workers.slots`; beyond it a 429
  ``too-many-streams``;
- at most ``MAX_STREAMS_PER_WORKER`` (default 4000) open in one worker process; beyond it a
  503 ``server-busy``, which a load balancer or client retries elsewhere.

Both answers carry ``Retry-After`` and come at once: a refused client never hangs. Each admitted
wait holds a :class:`Ticket` until it ends (a stream's ticket goes with its response body, so it
is given back when the client leaves or the stream ends).
"""

from __future__ import annotations

import io
import logging
import socket
import threading
from collections import Counter
from collections.abc import Generator, Iterable, Iterator, Mapping
from contextlib import contextmanager, nullcontext, suppress
from typing import TYPE_CHECKING, Any

from flask import current_app, request

from service.api.context import request_environ
from service.config import Settings
from service.workers import slots
from service.workers.serving import serving
from service.workers.threads import deadline

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

log = logging.getLogger(__name__)

__all__ = [
    "Refused",
    "ServerBusy",
    "StreamBody",
    "Ticket",
    "TooManyStreams",
    "WholeBody",
    "admit",
    "waiting",
]


class Refused(Exception):
    """A wait refused by a cap (answered by the error table with ``Retry-After``)."""

    kind = "refused"

    def __init__(self, detail: str, *, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


class TooManyStreams(Refused):
    """429: the client's address has as many streams and long-polls open as it may."""

    kind = "too-many-streams"


class ServerBusy(Refused):
    """503: this worker holds as many streams and long-polls as it may."""

    kind = "server-busy"


class _Counts:
    """An app's open waits (one app per worker): in all, and per address when no shared
    table is mapped (outside gunicorn)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.total = 0
        self.local: Counter[str] = Counter()

    def by_address(self, address: str) -> int:
        table = slots.current()
        return table.count(address) if table is not None else self.local[address]

    def add(self, address: str, delta: int) -> None:
        self.total += delta
        table = slots.current()
        if table is not None:
            table.add(address, delta)
        else:
            self.local[address] += delta
            if self.local[address] <= 0:
                del self.local[address]


class Ticket:
    """One admitted wait; :meth:`close` (idempotent) gives its place back."""

    def __init__(self, counts: _Counts, address: str) -> None:
        self.counts = counts
        self.address = address
        self._open = True

    def close(self) -> None:
        with self.counts.lock:
            if not self._open:
                return
            self._open = False
            self.counts.add(self.address, -1)


def admit() -> Ticket:
    """Admit one more wait for this request's client, or raise :class:`Refused`."""
    settings: Settings = current_app.config["REFEREE_SETTINGS"]
    counts: _Counts = current_app.extensions.setdefault("open_streams", _Counts())
    address = request.remote_addr or "unknown"
    retry = max(1, settings.retry_after_seconds)
    with counts.lock:
        if settings.max_streams_per_worker and counts.total >= settings.max_streams_per_worker:
            raise ServerBusy(
                "this server holds as many event streams and long-polls as it may; "
                "try again shortly",
                retry_after=retry,
            )
        cap = settings.max_streams_per_address
        if cap and counts.by_address(address) >= cap:
            raise TooManyStreams(
                f"at most {cap} event streams and long-polls may be open at once from one "
                "address; close one first",
                retry_after=retry,
            )
        counts.add(address, 1)
    return Ticket(counts, address)


@contextmanager
def waiting() -> Iterator[None]:
    """Hold an admitted place while the block runs (a long-poll); may raise :class:`Refused`."""
    ticket = admit()
    try:
        yield
    finally:
        ticket.close()


class StreamBody(Iterable[str]):
    """A streamed response body that gives its ticket back when the server closes it.

    WSGI servers call ``close()`` on every body, even one never iterated (the client left
    before the first byte): a generator's ``finally`` would not run then, this does.
    """

    def __init__(self, body: Generator[str, None, None], ticket: Ticket) -> None:
        self._body = body
        self._ticket = ticket

    def __iter__(self) -> Iterator[str]:
        return self._body

    def close(self) -> None:
        try:
            self._body.close()
        finally:
            self._ticket.close()


WHOLE_BODY = "referee.body"  # the environ key of the body WholeBody read (see request_body)


def request_body(environ: Mapping[str, Any] | None = None) -> bytes:
    """The request's body: the bytes :class:`WholeBody` read, else read now by Flask (which
    answers 413 past ``MAX_CONTENT_LENGTH``); ``environ``, the request's when the caller holds
    it (else read through Flask's proxy)."""
    body = (request_environ() if environ is None else environ).get(WHOLE_BODY)
    if isinstance(body, bytes):
        return body
    return request.get_data(cache=True)


class WholeBody:
    """WSGI middleware: a request's body must arrive whole within ``seconds``.

    gunicorn drops a request whose head does not arrive within ``REQUEST_HEAD_TIMEOUT``; this
    does the same for its body (``REQUEST_BODY_TIMEOUT``): the body is read here, at most
    ``max_bytes`` (the app refuses more with 413), before the app runs, and kept in the
    environ for :func:`request_body` (Flask's own reading of it costs more than parsing it).
    A body that is still arriving when the time is up is not answered: the connection is
    closed, as for a late head: only on an event loop, where a slow body holds a greenlet
    meanwhile, not a thread, and only when ``seconds`` is not 0.
    """

    def __init__(
        self,
        app: WSGIApplication,
        *,
        seconds: float,
        max_bytes: int,
        larger: Mapping[str, int] | None = None,
    ) -> None:
        self.app = app
        self.seconds = seconds
        self.max_bytes = max_bytes
        self.larger = dict(larger or {})  # path -> its own limit (the verifier's 1 MiB)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Any:
        serving.count += 1  # the requests being served (service.workers.serving)
        try:
            return self._serve(environ, start_response)
        finally:
            serving.count -= 1

    def _serve(self, environ: WSGIEnvironment, start_response: StartResponse) -> Any:
        limit = self.larger.get(str(environ.get("PATH_INFO", "")), self.max_bytes)
        wanted = self._wanted(environ, limit)
        if wanted > 0:
            try:
                with deadline(self.seconds) if self.seconds > 0 else nullcontext():
                    body = environ["wsgi.input"].read(wanted)
            except TimeoutError:
                log.info("request body did not arrive within %s s: closing", self.seconds)
                connection = environ.get("gunicorn.socket")
                if isinstance(connection, socket.socket):
                    with suppress(OSError):
                        connection.shutdown(socket.SHUT_RDWR)
                start_response("408 Request Timeout", [("Content-Length", "0")])
                return []
            # The app sees the body with its length, chunked or not: past the limit (the
            # first max_bytes + 1 bytes of a chunked body) Flask answers 413, where it would
            # read a chunked body up to the limit and silently stop.
            environ["wsgi.input"] = io.BytesIO(body)
            environ.pop("HTTP_TRANSFER_ENCODING", None)
            environ["CONTENT_LENGTH"] = str(len(body))
            if len(body) <= limit:
                environ[WHOLE_BODY] = body
        return self.app(environ, start_response)

    @staticmethod
    def _wanted(environ: WSGIEnvironment, limit: int) -> int:
        """Bytes to read first: the announced length, or up to the limit + 1 if chunked."""
        length = str(environ.get("CONTENT_LENGTH") or "")
        if length.isdigit():
            return int(length) if int(length) <= limit else 0
        if str(environ.get("HTTP_TRANSFER_ENCODING", "")).lower() == "chunked":
            return limit + 1
        return 0
