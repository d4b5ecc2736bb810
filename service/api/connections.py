"""Caps on open event streams and long-polls, answered at once.

An open event stream or long-poll costs little (a greenlet, a socket, a few kilobytes: see
README "Worker model"), but not nothing, and one client must not be able to take them all.
Before a stream or long-poll starts waiting it is admitted:

- at most ``MAX_STREAMS_PER_ADDRESS`` (default 64; 0: no cap) open at once from one client
  address over the whole server (``request.remote_addr``: behind ``TRUSTED_PROXIES``, the
  forwarded address), counted across the workers in :mod:`service.slots`; beyond it a 429
  ``too-many-streams``;
- at most ``MAX_STREAMS_PER_WORKER`` (default 4000) open in one worker process; beyond it a
  503 ``server-busy``, which a load balancer or client retries elsewhere.

Both answers carry ``Retry-After`` and come at once: a refused client never hangs. Each admitted
wait holds a :class:`Ticket` until it ends (a stream's ticket goes with its response body, so it
is given back when the client leaves or the stream ends).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager

from flask import Response, current_app, request

from service import slots
from service.api.errors import problem_response
from service.config import Settings

__all__ = ["Refused", "StreamBody", "Ticket", "admit", "waiting"]


class Refused(Exception):
    """A wait refused by a cap; :meth:`response` is its problem answer."""

    def __init__(self, status: int, kind: str, title: str, detail: str, retry_after: int) -> None:
        super().__init__(detail)
        self.status, self.kind, self.title, self.detail = status, kind, title, detail
        self.retry_after = retry_after

    def response(self) -> Response:
        return problem_response(
            self.status,
            self.kind,
            self.title,
            self.detail,
            headers={"Retry-After": str(self.retry_after)},
        )


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
            raise Refused(
                503,
                "server-busy",
                "Too many open streams here",
                "this server holds as many event streams and long-polls as it may; "
                "try again shortly",
                retry,
            )
        cap = settings.max_streams_per_address
        if cap and counts.by_address(address) >= cap:
            raise Refused(
                429,
                "too-many-streams",
                "Too many open streams",
                f"at most {cap} event streams and long-polls may be open at once from one "
                "address; close one first",
                retry,
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
