"""A worker's copies of recent matches: the last decoded state of each, as the store keeps it
(a version never changes, so a copy is only ever replaced by a newer one)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from service.game import Match

__all__ = ["DecodedCache"]


class DecodedCache:
    """The last decoded state of recent matches, per worker (a version never changes)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[str, tuple[Match, tuple[str, ...]]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, match_id: str) -> tuple[Match, tuple[str, ...]] | None:
        with self._lock:
            entry = self._entries.get(match_id)
            if entry is not None:
                self._entries.move_to_end(match_id)
            return entry

    def put(self, match: Match, seats: tuple[str, ...]) -> None:
        """Remember ``match`` unless a newer version of it is already cached."""
        with self._lock:
            held = self._entries.get(match.id)
            if held is None or held[0].version <= match.version:
                self._entries[match.id] = (match, seats)
                self._entries.move_to_end(match.id)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
