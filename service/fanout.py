"""One read of a match's events feeds every stream and long-poll of that match in a worker.

Without it, each open event stream held a Redis connection of its own blocked in ``XREAD``:
1,000 viewers of one table meant 1,000 connections. Here a worker follows each match that
someone waits on with one reader (one connection, blocked up to :data:`WAKE_SECONDS` at a
time) and hands each batch of events to every follower of that match; the reader stops once
nobody follows the match any more.

A follower that joins late (``Last-Event-ID``, ``?after=``) first catches up with a plain range
read of what happened before it joined, then takes the live events; since versions only grow,
nothing is missed and nothing is sent twice.

The module knows nothing of Redis: :class:`Source` is what the store provides.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "WAKE_SECONDS",
    "Event",
    "Fanout",
    "FeedLost",
    "Follower",
    "Reader",
    "Source",
    "sse_message",
]

WAKE_SECONDS = 1.0  # the longest one read blocks: how soon a reader sees it has no followers
CATCH_UP_BATCH = 100
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Event:
    """One stored public event: the version it produced, its type and its JSON text."""

    version: int
    type: str
    json: str
    sse: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The Server-Sent Events message, made once for every stream the event goes to.
        object.__setattr__(self, "sse", sse_message(self.json, self.version, self.type))


def sse_message(event_json: str, version: int, event_type: str) -> str:
    """One SSE message for a stored event (its JSON is one line)."""
    return f"id: {version}\nevent: {event_type}\ndata: {event_json}\n\n"


class Reader(Protocol):
    """A blocking reader of one match's events, on a connection of its own."""

    def read(self, after: int, block: float) -> Sequence[Event]:
        """Events after version ``after``, waiting up to ``block`` seconds for one."""

    def close(self) -> None: ...


class Source(Protocol):
    """Where events come from (the store)."""

    def last_version(self, match_id: str) -> int:
        """The version of the match's newest event (0 when there is none)."""

    def events_between(self, match_id: str, after: int, upto: int, limit: int) -> Sequence[Event]:
        """Up to ``limit`` events with ``after < version <= upto``, oldest first."""

    def reader(self, match_id: str) -> Reader: ...


class FeedLost(Exception):
    """The match's reader failed (storage unavailable): the follower should end."""


class _Channel:
    """One match followed in this worker: its reader and its followers' queues."""

    def __init__(self, fanout: Fanout, match_id: str, cursor: int) -> None:
        self.fanout = fanout
        self.match_id = match_id
        self.cursor = cursor  # the newest version handed to the followers
        self.queues: set[queue.SimpleQueue[Sequence[Event] | BaseException]] = set()
        self.thread = threading.Thread(
            target=self._run, name=f"feed-{match_id}", daemon=True
        )

    def _run(self) -> None:
        lock = self.fanout.lock
        try:
            reader = self.fanout.source.reader(self.match_id)
        except Exception as error:
            self._fail(error)
            return
        try:
            while True:
                with lock:
                    if not self.queues:
                        if self.fanout.channels.get(self.match_id) is self:
                            del self.fanout.channels[self.match_id]
                        return
                    after = self.cursor
                events = reader.read(after, WAKE_SECONDS)
                if not events:
                    continue
                with lock:
                    self.cursor = events[-1].version
                    for waiting in self.queues:
                        waiting.put(events)
        except Exception as error:
            self._fail(error)
        finally:
            reader.close()

    def _fail(self, error: BaseException) -> None:
        log.warning("feed of match %s ended: %s", self.match_id, type(error).__name__)
        with self.fanout.lock:
            if self.fanout.channels.get(self.match_id) is self:
                del self.fanout.channels[self.match_id]
            for waiting in self.queues:
                waiting.put(error)
            self.queues.clear()


class Follower:
    """One client's view of a match's events after a version; :meth:`close` when done."""

    def __init__(
        self, fanout: Fanout, match_id: str, after: int, latest: int | None = None
    ) -> None:
        self.fanout = fanout
        self.match_id = match_id
        self.after = after
        self._queue: queue.SimpleQueue[Sequence[Event] | BaseException] = queue.SimpleQueue()
        self._channel: _Channel | None = None
        if latest is None:
            latest = fanout.source.last_version(match_id)
        with fanout.lock:
            channel = fanout.channels.get(match_id)
            if channel is None:
                channel = fanout.channels[match_id] = _Channel(fanout, match_id, latest)
                channel.thread.start()
            channel.queues.add(self._queue)
            self._channel = channel
            self._catch_up_to = channel.cursor  # later events come through the queue

    @property
    def behind(self) -> bool:
        """Whether events already stored are still to come (nothing to wait for)."""
        return self.after < self._catch_up_to

    def next(self, timeout: float) -> list[Event]:
        """The next events after :attr:`after`, waiting up to ``timeout`` s (``[]`` then).

        Raises :class:`FeedLost` if the reader failed.
        """
        if self.after < self._catch_up_to:
            events = list(
                self.fanout.source.events_between(
                    self.match_id, self.after, self._catch_up_to, CATCH_UP_BATCH
                )
            )
            if events:
                self.after = events[-1].version
                return events
            self._catch_up_to = self.after  # trimmed or gone: go on with the live events
        try:
            item = self._queue.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return []
        if isinstance(item, BaseException):
            raise FeedLost(str(item)) from item
        fresh = [event for event in item if event.version > self.after]
        if fresh:
            self.after = fresh[-1].version
        return fresh

    def close(self) -> None:
        with self.fanout.lock:
            if self._channel is not None:
                self._channel.queues.discard(self._queue)
                self._channel = None


class Fanout:
    """This worker's readers, one per followed match."""

    def __init__(self, source: Source, stopping: threading.Event | None = None) -> None:
        self.source = source
        self.lock = threading.Lock()
        self.channels: dict[str, _Channel] = {}
        self.stopping = stopping
        if stopping is not None:
            threading.Thread(
                target=self._wake_on, args=(stopping,), name="feed-stop", daemon=True
            ).start()

    def _wake_on(self, stopping: threading.Event) -> None:
        """Each time ``stopping`` is set, wake every follower (which then sees it is set):
        followers otherwise sleep until their next event or keep-alive."""
        while True:
            stopping.wait()
            with self.lock:
                for channel in self.channels.values():
                    for waiting in channel.queues:
                        waiting.put([])
            while stopping.is_set():
                time.sleep(0.2)

    def follow(self, match_id: str, after: int, latest: int | None = None) -> Follower:
        """Follow ``match_id``'s events after version ``after``; ``latest``, the version of
        its newest event if the caller has just read it, saves reading it again."""
        return Follower(self, match_id, after, latest)

    def wait_after(self, match_id: str, version: int, timeout: float) -> None:
        """Return once the match is past ``version``, after ``timeout`` s, when the process
        is stopping, or when the feed is lost (the caller then reads the match as it is)."""
        follower = self.follow(match_id, version)
        try:
            if follower.behind:
                return
            deadline = time.monotonic() + timeout
            while (left := deadline - time.monotonic()) > 0:
                if self.stopping is not None and self.stopping.is_set():
                    return
                if follower.next(left):
                    return
        except FeedLost:
            return
        finally:
            follower.close()

    def readers(self) -> int:
        """Matches read now (one connection each)."""
        with self.lock:
            return len(self.channels)
