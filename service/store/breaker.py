"""A pause after a Redis node did not answer, so requests queued behind fail at once (503).

The store asks its :class:`Breakers` before each call to a node (a single Redis is one node,
a Redis Cluster has one per master) and tells it how the call went. When a call times out or
loses its connection, later calls to that node fail at once with
:class:`~service.store.errors.StoreUnavailable` for ``pause`` seconds instead of each waiting
out the socket timeout: a frozen node costs one timeout per pause, not one per request, and
the other nodes of a cluster are not paused.

Two things keep a pause from outlasting the fault: an answer from the node ends it at once,
and only a call sent after the pause began can start another (calls sent before it fail one
after another over the next socket timeout, and would otherwise push the end further).
"""

from __future__ import annotations

import threading
import time

from service.store.errors import StoreUnavailable

__all__ = ["Breakers"]


class Breakers:
    """One breaker per node name (see the module)."""

    def __init__(self, pause: float) -> None:
        self.pause = pause
        self._until: dict[str, float] = {}
        self._opened: dict[str, float] = {}
        self._lock = threading.Lock()

    def check(self, node: str) -> float:
        """Raise :class:`StoreUnavailable` while ``node`` is paused; else return the time
        (``time.monotonic()``) the caller sends its call at, for :meth:`trip`."""
        now = time.monotonic()
        until = self._until.get(node)
        if until is not None and now < until:
            raise StoreUnavailable(f"Redis node {node} did not answer a moment ago")
        return now

    def trip(self, node: str, sent_at: float | None = None) -> None:
        """A call to ``node`` sent at ``sent_at`` (None: now) failed: pause ``node``, unless
        that call was sent before the last pause began (its failure tells nothing new)."""
        with self._lock:
            now = time.monotonic()
            opened = self._opened.get(node)
            if sent_at is not None and opened is not None and sent_at < opened:
                return
            self._opened[node] = now
            self._until[node] = now + self.pause

    def answered(self, node: str) -> None:
        """``node`` answered a call: it is back, and its pause ends."""
        if self._until:
            with self._lock:
                self._until.pop(node, None)
