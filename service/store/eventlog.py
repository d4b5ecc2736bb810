"""A match's event log: read (packed or not), packed once no game is being played, followed
as it grows (see :mod:`service.store.archive` for the two forms)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from redis.exceptions import RedisClusterException, RedisError

from service import jsoncodec
from service.game import EventType
from service.store import archive
from service.store.errors import StoreUnavailable
from service.store.keys import Keys
from service.store.streams import entries_of, entry_of
from service.store.topology import Topology
from service.store.values import StoredEvent

__all__ = ["EventLog"]

log = logging.getLogger(__name__)
Call = Callable[[str, Callable[[], Any]], Any]
_FAILURES = (RedisError, RedisClusterException)
_LAST = (EventType.MATCH_FINISHED, EventType.MATCH_CANCELED)


class EventLog:
    """The event logs of the matches on ``topology``; ``call(key, fn)`` makes one call to the
    node of ``key`` (the store's, through its breaker)."""

    def __init__(self, topology: Topology, *, call: Call) -> None:
        self.topology = topology
        self.call = call

    def events(self, match_id: str, *, after: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """Up to ``limit`` public events with a version above ``after``."""
        return [jsoncodec.loads(text) for _, text in self._read(match_id, after, None, limit)]

    def stored_events(
        self, match_id: str, *, after: int, upto: int | None = None, limit: int = 100
    ) -> list[StoredEvent]:
        """Up to ``limit`` events with a version in (``after``, ``upto``], as stored."""
        return [
            _stored(version, text) for version, text in self._read(match_id, after, upto, limit)
        ]

    def last_event(self, match_id: str) -> StoredEvent | None:
        """The match's last event, if any."""
        keys = Keys(match_id)
        last = self.call(
            keys.state, lambda: self.topology.eval(archive.LAST, [keys.state, keys.events], [])
        )
        if last[0]:
            return _stored_event(*entry_of(last[0]))
        lines = archive.unpack(last[1] or "")
        return _stored(len(lines), lines[-1]) if lines else None

    def _read(
        self, match_id: str, after: int, upto: int | None, limit: int
    ) -> list[tuple[int, str]]:
        """Up to ``limit`` (version, event JSON) in (``after``, ``upto``], packed or not."""
        keys = Keys(match_id)
        argv = [max(after, 0), "+" if upto is None else f"0-{upto}", limit]
        packed_upto, blob, entries = self.call(
            keys.state, lambda: self.topology.eval(archive.READ, [keys.state, keys.events], argv)
        )
        found: list[tuple[int, str]] = []
        if blob:
            last = int(packed_upto) if upto is None else min(int(packed_upto), upto)
            lines = archive.unpack(blob)
            start = max(after, 0)
            found = [(v + 1, lines[v]) for v in range(start, min(last, start + limit))]
        for entry in entries[: limit - len(found)]:
            entry_id, fields = entry_of(entry)
            found.append((int(entry_id.partition("-")[2]), fields["e"]))
        return found

    def pack(self, match_id: str, *, seats: int = 0) -> bool:
        """Pack every event in the match's stream into its state hash, and drop the receipts
        of the first ``seats`` seats' guarded requests older than its last commit (see
        :mod:`service.store.archive`); False when another worker packed meanwhile or the match
        is gone. Raises :class:`StoreUnavailable`."""
        keys = Keys(match_id)
        packed_upto, blob, entries = self.call(
            keys.state,
            lambda: self.topology.eval(archive.READ, [keys.state, keys.events], [0, "+", 10**6]),
        )
        lines = list(archive.unpack(blob or ""))
        for entry in entries:
            entry_id, fields = entry_of(entry)
            if int(entry_id.partition("-")[2]) != len(lines) + 1:
                log.warning("the log of %s has a gap at %s: not packed", match_id, entry_id)
                return False
            lines.append(fields["e"])
        blob = archive.pack(lines) if entries else ""  # '': the log stays as it is
        argv = [packed_upto, str(len(lines)), blob]
        script_keys = [keys.state, keys.events, *(keys.receipts(seat) for seat in range(seats))]
        done = self.call(keys.state, lambda: self.topology.eval(archive.ARCHIVE, script_keys, argv))
        return bool(done == "ok")

    def follow(
        self, match_id: str, *, after: int, wake: float, batch: int = 100
    ) -> Iterator[list[StoredEvent]]:
        """Yield the match's events after version ``after`` as they come, a list at a time.

        Reads block up to ``wake`` seconds on a connection of their own; a read that times
        out yields ``[]`` (so the caller can send a keep-alive or stop). It returns once the
        match is finished (or canceled) and its last event yielded, or the match has expired;
        a Redis failure raises :class:`StoreUnavailable` (the client resumes where it was).
        Events packed while it was between two reads (a game's end packs the log at once)
        are read from the state, where they went: none is missed.
        """
        keys = Keys(match_id)
        while True:  # first what was packed (the stream no longer holds it), and the rest
            caught = self.stored_events(match_id, after=after, limit=batch)
            if caught:
                yield caught
                after = caught[-1].version
                if caught[-1].type in _LAST:
                    return
            if len(caught) < batch:
                break
        try:
            client = self.topology.dedicated(
                keys.events,
                read_timeout=wake + max(5.0, self.topology.settings.redis_socket_timeout),
                name="sse:" + match_id,
            )
        except _FAILURES as error:
            raise StoreUnavailable(f"cannot follow {match_id}: {type(error).__name__}") from error
        try:
            while True:
                try:
                    answer = client.xread(
                        {keys.events: f"0-{after}"}, count=batch, block=int(wake * 1000)
                    )
                    events = [_stored_event(entry, fields) for entry, fields in entries_of(answer)]
                    packed = 0
                    if not events:
                        stored: Any = client.hmget(keys.state, ["v", "ap"])
                        version, packed_upto = stored
                        if version is None:
                            return  # the match expired
                        packed = int(packed_upto or 0)
                except _FAILURES as error:
                    raise StoreUnavailable(
                        f"following {match_id} failed: {type(error).__name__}"
                    ) from error
                # A game's end packs the log at once (its events leave the stream for the
                # state hash): while this reader was between two reads, the stream lost
                # events it had not read. They are read where they are now, packed or not.
                if packed > after or (events and events[0].version != after + 1):
                    events = self.stored_events(match_id, after=after, limit=batch)
                yield events
                if events:
                    after = events[-1].version
                    if events[-1].type in _LAST:
                        return
        finally:
            client.close()


def _stored_event(entry_id: str, fields: dict[str, str]) -> StoredEvent:
    return _stored(int(entry_id.partition("-")[2]), fields["e"])


def _stored(version: int, text: str) -> StoredEvent:
    return StoredEvent(version, EventType(jsoncodec.loads(text).get("type", "")), text)
