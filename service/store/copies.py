"""A worker's copies of recent matches: the last decoded state of each, as the store keeps it
(a version never changes, so a copy is only ever replaced by a newer one).

The ``size`` most recent are kept decoded (about 3 KB each for a 4-player match: the
players, the pool, the deal, the seats' digests); the ``kept`` next most recent as the stored
state they were decoded from (about 1.2 KB: the JSON Redis holds), decoded again when asked
for. A worker that serves more matches than it holds decoded copies of then decodes one
where it read Redis and decoded (a round trip, and for a move a second one: the load before
the commit). Round robin over 4,096 matches in one process, a view cost 110 us of processor
time with the match decoded, 200 us decoded again from its state, about 320 us read from Redis
and decoded. The store holds 4,096 decoded and 4,096 kept (8,192 in all): with 8,192 kept, the
largest worker of ``bench/api.py --matches 256 4096`` reached 150.3-152.9 MB on a quiet
machine, over its 150 MB; 144.8 MB with 4,096.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from service.game import Match
from service.workers.locks import short_lock

__all__ = ["DecodedCache"]

Copy = tuple[Match, tuple[str, ...]]  # the match and its seats' token digests


class DecodedCache:
    """The last decoded state of recent matches, per worker (a version never changes); see
    the module. ``decode`` makes a copy of a stored state (``kept`` states need it)."""

    def __init__(
        self,
        size: int,
        *,
        kept: int = 0,
        decode: Callable[[str | bytes], Copy] | None = None,
    ) -> None:
        self.size = size
        self.kept = kept if decode is not None else 0
        self._decode = decode
        # match id -> the copy and the stored state it was made from (None: not known)
        self._entries: OrderedDict[str, tuple[Match, tuple[str, ...], str | bytes | None]] = (
            OrderedDict()
        )
        self._states: OrderedDict[str, tuple[int, str | bytes]] = (
            OrderedDict()
        )  # id -> version, state
        self._lock = short_lock()  # its sections never wait

    def get(self, match_id: str) -> Copy | None:
        """The newest copy of the match held (decoded again from its state when kept so)."""
        with self._lock:
            entry = self._entries.get(match_id)
            if entry is not None:
                self._entries.move_to_end(match_id)
                return entry[0], entry[1]
            stored = self._states.get(match_id)
        if stored is None or self._decode is None:
            return None
        match, seats = self._decode(stored[1])
        self.put(match, seats, stored[1])
        return match, seats

    def version(self, match_id: str) -> int | None:
        """The version of the match held, decoded or kept (``None``: none), decoding nothing:
        a caller that finds a newer version elsewhere need not decode the one held."""
        with self._lock:
            entry = self._entries.get(match_id)
            if entry is not None:
                return entry[0].version
            stored = self._states.get(match_id)
        return None if stored is None else stored[0]

    def put(self, match: Match, seats: tuple[str, ...], state: str | bytes | None = None) -> None:
        """Remember ``match`` unless a newer version of it is already held; ``state``, the
        stored form it was decoded from or committed as (kept when the copy is pushed out)."""
        with self._lock:
            held = self._entries.get(match.id)
            if held is not None and held[0].version > match.version:
                return
            stored = self._states.get(match.id)
            if stored is not None:
                if stored[0] > match.version:
                    return
                del self._states[match.id]
            if isinstance(state, bytes):  # orjson's answer holds 8 KB whatever its length
                state = memoryview(state).tobytes()
            self._entries[match.id] = (match, seats, state)
            self._entries.move_to_end(match.id)
            while len(self._entries) > self.size:
                match_id, (old, _, old_state) = self._entries.popitem(last=False)
                if old_state is not None and self.kept > 0:
                    self._states[match_id] = (old.version, old_state)
            while len(self._states) > self.kept:
                self._states.popitem(last=False)
