"""One read of a match's events feeds every stream and long-poll of that match in a worker.

Without it, each open event stream held a Redis connection of its own blocked in ``XREAD``:
1,000 viewers of one table meant 1,000 connections. Here a worker follows each match that
someone waits on with one reader (the store's :meth:`~service.store.MatchStore.follow`: one
connection, blocked up to :data:`WAKE_SECONDS` at a time) and hands each batch of events to
every follower of that match; the reader stops once nobody follows the match any more, or the
match is finished or expired.

A follower that joins late (``Last-Event-ID``, ``?after=``) first catches up with plain range
reads of what happened before it joined, then takes the live events; since versions only grow,
nothing is missed and nothing is sent twice. Each event's text for the streams is rendered
once, for every follower.

The app feed (``GET /v1/feed``) is fanned out the same way (:class:`AppFeeds`): one reader
per followed app and worker, whatever the number of the app's listeners. Its position is one
entry id per shard; a listener that resumes (``Last-Event-ID``) catches up with reads of its
own on the shared pool, then takes the live entries, skipping any it already has.

The module knows nothing of Redis: :class:`Source` and :class:`FeedSource` are what the store
provides.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from service.store import StoredEvent
from service.store.outbox import OutboxEntry

__all__ = [
    "WAKE_SECONDS",
    "AppFeeds",
    "Delivered",
    "Fanout",
    "FeedFollower",
    "FeedLost",
    "Follower",
    "Source",
]

WAKE_SECONDS = 1.0  # the longest one read blocks: how soon a reader sees it has no followers
CATCH_UP_BATCH = 100
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Delivered:
    """An event as followers get it: the stored event and its rendered text."""

    event: StoredEvent
    text: str

    @property
    def version(self) -> int:
        return self.event.version


class Source(Protocol):
    """Where events come from (:class:`service.store.MatchStore`)."""

    def last_event(self, match_id: str) -> StoredEvent | None: ...

    def stored_events(
        self, match_id: str, *, after: int, upto: int | None = None, limit: int = 100
    ) -> list[StoredEvent]: ...

    def follow(
        self, match_id: str, *, after: int, wake: float, batch: int = 100
    ) -> Iterator[list[StoredEvent]]: ...


class FeedLost(Exception):
    """The match's reader failed (storage unavailable): the follower should end."""


_Item = Sequence[Delivered] | BaseException | None  # events, a failure, or the end


class _Channel:
    """One match followed in this worker: its reader and its followers' queues."""

    def __init__(self, fanout: Fanout, match_id: str, cursor: int) -> None:
        self.fanout = fanout
        self.match_id = match_id
        self.cursor = cursor  # the newest version handed to the followers
        self.queues: set[queue.SimpleQueue[_Item]] = set()
        self.thread = threading.Thread(target=self._run, name=f"feed-{match_id}", daemon=True)

    def _run(self) -> None:
        fanout = self.fanout
        batches: Iterator[list[StoredEvent]] | None = None
        try:
            batches = fanout.source.follow(self.match_id, after=self.cursor, wake=WAKE_SECONDS)
            for batch in batches:
                delivered = [Delivered(event, fanout.render(event)) for event in batch]
                with fanout.lock:
                    if not self.queues:
                        self._leave()
                        return
                    if delivered:
                        self.cursor = delivered[-1].version
                        for waiting in self.queues:
                            waiting.put(delivered)
            self._end(None)  # the match is finished (its last event handed out) or expired
        except Exception as error:
            log.warning("feed of match %s ended: %s", self.match_id, type(error).__name__)
            self._end(error)
        finally:
            if batches is not None and hasattr(batches, "close"):
                batches.close()

    def _leave(self) -> None:
        """With the lock held: no longer the match's channel."""
        if self.fanout.channels.get(self.match_id) is self:
            del self.fanout.channels[self.match_id]

    def _end(self, error: BaseException | None) -> None:
        with self.fanout.lock:
            self._leave()
            for waiting in self.queues:
                waiting.put(error)
            self.queues.clear()


class Follower:
    """One client's view of a match's events after a version; :meth:`close` when done."""

    def __init__(self, fanout: Fanout, match_id: str, after: int, latest: int | None) -> None:
        self.fanout = fanout
        self.match_id = match_id
        self.after = after
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        if latest is None:
            last = fanout.source.last_event(match_id)
            latest = 0 if last is None else last.version
        with fanout.lock:
            channel = fanout.channels.get(match_id)
            if channel is None:
                channel = fanout.channels[match_id] = _Channel(fanout, match_id, latest)
                channel.thread.start()
            channel.queues.add(self._queue)
            self._channel: _Channel | None = channel
            self._catch_up_to = channel.cursor  # later events come through the queue

    @property
    def behind(self) -> bool:
        """Whether events already stored are still to come (nothing to wait for)."""
        return self.after < self._catch_up_to

    def next(self, timeout: float) -> list[Delivered] | None:
        """The next events after :attr:`after`, waiting up to ``timeout`` seconds: ``[]``
        when none came (or the follower was woken), ``None`` once the feed has ended (the
        match is finished or expired). Raises :class:`FeedLost` if the reader failed."""
        if self.after < self._catch_up_to:
            stored = self.fanout.source.stored_events(
                self.match_id, after=self.after, upto=self._catch_up_to, limit=CATCH_UP_BATCH
            )
            if stored:
                self.after = stored[-1].version
                return [Delivered(event, self.fanout.render(event)) for event in stored]
            self._catch_up_to = self.after  # trimmed or gone: go on with the live events
        try:
            item = self._queue.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return []
        if item is None:
            return None
        if isinstance(item, BaseException):
            raise FeedLost(str(item)) from item
        fresh = [delivered for delivered in item if delivered.version > self.after]
        if fresh:
            self.after = fresh[-1].version
        return fresh

    def wake(self) -> None:
        """Make a waiting :meth:`next` return ``[]`` now (any thread or greenlet)."""
        self._queue.put([])

    def close(self) -> None:
        with self.fanout.lock:
            if self._channel is not None:
                self._channel.queues.discard(self._queue)
                self._channel = None


class Fanout:
    """This worker's readers, one per followed match.

    ``render`` makes an event's text for the streams (once per event). When ``stopping`` is
    set, every follower is woken so that it sees it.
    """

    def __init__(
        self,
        source: Source,
        *,
        render: Callable[[StoredEvent], str],
        stopping: threading.Event | None = None,
    ) -> None:
        self.source = source
        self.render = render
        self.lock = threading.Lock()
        self.channels: dict[str, _Channel] = {}
        self.stopping = stopping
        if stopping is not None:
            threading.Thread(
                target=self._wake_on, args=(stopping,), name="feed-stop", daemon=True
            ).start()

    def follow(self, match_id: str, after: int, latest: int | None = None) -> Follower:
        """Follow ``match_id``'s events after version ``after``; ``latest``, the version of
        its newest event if the caller has just read it, saves reading it again."""
        return Follower(self, match_id, after, latest)

    def wait_after(self, match_id: str, version: int, timeout: float) -> None:
        """Return once the match is past ``version``, after ``timeout`` s, when the process
        is stopping, or when the feed ends or is lost (the caller then reads the match)."""
        follower = self.follow(match_id, version)
        try:
            if follower.behind:
                return
            deadline = time.monotonic() + timeout
            while (left := deadline - time.monotonic()) > 0:
                if self.stopping is not None and self.stopping.is_set():
                    return
                if follower.next(left) != []:
                    return
        except FeedLost:
            return
        finally:
            follower.close()

    def readers(self) -> int:
        """Matches read now (one connection each)."""
        with self.lock:
            return len(self.channels)

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


# -- the app feed ------------------------------------------------------------------------------


class FeedRead(Protocol):
    """An app's feed read after per-shard positions (:class:`service.store.outbox.FeedReader`)."""

    app: str
    positions: list[str]

    def read(self, *, block: float, count: int = 100) -> list[tuple[int, OutboxEntry]]: ...

    def read_now(self, *, count: int = 100) -> list[tuple[int, OutboxEntry]]: ...

    def close(self) -> None: ...


class FeedSource(Protocol):
    """Where the app feeds come from (:class:`service.store.notify.Notifications`)."""

    def feed_reader(self, app: str, positions: Sequence[str] | None) -> FeedRead: ...


_FeedItem = list[tuple[int, OutboxEntry]] | BaseException


def _entry_order(entry_id: str) -> tuple[int, int]:
    """An outbox entry id (``<ms>-<seq>``) as something that sorts like Redis sorts them."""
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


class _AppChannel:
    """One app's feed read in this worker: its reader and its followers' queues."""

    def __init__(self, feeds: AppFeeds, reader: FeedRead) -> None:
        self.feeds = feeds
        self.reader = reader
        self.app = reader.app
        self.cursor = list(reader.positions)  # what has been handed to the followers
        self.queues: set[queue.SimpleQueue[_FeedItem]] = set()
        self.thread = threading.Thread(target=self._run, name=f"app-feed-{self.app}", daemon=True)

    def _run(self) -> None:
        feeds, reader = self.feeds, self.reader
        try:
            while True:
                found = reader.read(block=WAKE_SECONDS)
                with feeds.lock:
                    if not self.queues:
                        self._leave()
                        return
                    if found:
                        for shard, entry in found:
                            reader.positions[shard] = entry.entry_id
                        self.cursor = list(reader.positions)
                        for waiting in self.queues:
                            waiting.put(found)
        except Exception as error:
            log.warning("feed of app %s ended: %s", self.app, type(error).__name__)
            with feeds.lock:
                self._leave()
                for waiting in self.queues:
                    waiting.put(error)
                self.queues.clear()
        finally:
            reader.close()

    def _leave(self) -> None:
        """With the lock held: no longer the app's channel."""
        if self.feeds.channels.get(self.app) is self:
            del self.feeds.channels[self.app]


class FeedFollower:
    """One client of an app's feed, after per-shard :attr:`positions`; :meth:`close` when
    done."""

    def __init__(self, feeds: AppFeeds, app: str, positions: Sequence[str] | None) -> None:
        self.feeds = feeds
        self.app = app
        self._queue: queue.SimpleQueue[_FeedItem] = queue.SimpleQueue()
        self._catch_up: FeedRead | None = None
        with feeds.lock:
            channel = feeds.channels.get(app)
        if channel is None:
            # Read "now" outside the lock (Redis round trips), then join whichever channel
            # won the race.
            reader = feeds.source.feed_reader(app, None)
            with feeds.lock:
                channel = feeds.channels.get(app)
                if channel is None:
                    channel = feeds.channels[app] = _AppChannel(feeds, reader)
                    channel.thread.start()
                else:
                    reader.close()
        with feeds.lock:
            channel.queues.add(self._queue)
            self._channel: _AppChannel | None = channel
            joined_at = list(channel.cursor)  # later entries come through the queue
        if positions is None:
            self.positions = joined_at  # from now
        else:
            self.positions = list(positions)
            if any(
                _entry_order(mine) < _entry_order(theirs)
                for mine, theirs in zip(self.positions, joined_at, strict=True)
            ):
                try:
                    self._catch_up = feeds.source.feed_reader(app, self.positions)
                except BaseException:
                    self.close()  # not left among the channel's followers
                    raise

    def next(self, timeout: float) -> list[tuple[int, OutboxEntry]]:
        """The next entries after :attr:`positions` (which move past them), each with its
        shard, waiting up to ``timeout`` seconds: ``[]`` when none came (or the follower was
        woken). Raises :class:`FeedLost` if the app's reader failed."""
        if self._catch_up is not None:
            self._catch_up.positions = list(self.positions)
            stored = self._catch_up.read_now(count=CATCH_UP_BATCH)
            if stored:
                return self._take(stored)
            self._catch_up.close()
            self._catch_up = None  # caught up with what is stored: the queue has the rest
        try:
            item = self._queue.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return []
        if isinstance(item, BaseException):
            raise FeedLost(str(item)) from item
        return self._take(item)

    def _take(self, found: list[tuple[int, OutboxEntry]]) -> list[tuple[int, OutboxEntry]]:
        fresh = []
        for shard, entry in found:
            if _entry_order(entry.entry_id) > _entry_order(self.positions[shard]):
                self.positions[shard] = entry.entry_id
                fresh.append((shard, entry))
        return fresh

    def wake(self) -> None:
        """Make a waiting :meth:`next` return ``[]`` now (any thread or greenlet)."""
        self._queue.put([])

    def close(self) -> None:
        with self.feeds.lock:
            if self._channel is not None:
                self._channel.queues.discard(self._queue)
                self._channel = None
        if self._catch_up is not None:
            self._catch_up.close()
            self._catch_up = None


class AppFeeds:
    """This worker's readers of app feeds (``GET /v1/feed``), one per followed app: a
    hundred listeners of one app's feed cost one Redis connection per worker. When
    ``stopping`` is set, every follower is woken so that it sees it."""

    def __init__(self, source: FeedSource, *, stopping: threading.Event | None = None) -> None:
        self.source = source
        self.lock = threading.Lock()
        self.channels: dict[str, _AppChannel] = {}
        if stopping is not None:
            threading.Thread(
                target=self._wake_on, args=(stopping,), name="app-feed-stop", daemon=True
            ).start()

    def _wake_on(self, stopping: threading.Event) -> None:
        while True:
            stopping.wait()
            with self.lock:
                for channel in self.channels.values():
                    for waiting in channel.queues:
                        waiting.put([])
            while stopping.is_set():
                time.sleep(0.2)

    def follow(self, app: str, positions: Sequence[str] | None) -> FeedFollower:
        """Follow ``app``'s feed after ``positions`` (one entry id per shard; ``None``: from
        now)."""
        return FeedFollower(self, app, positions)

    def readers(self) -> int:
        """Apps read now (one connection each)."""
        with self.lock:
            return len(self.channels)
