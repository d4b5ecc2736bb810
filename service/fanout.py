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

Both are one :class:`_Channel` per followed thing, read in a thread of its own, and the
followers' queues it hands each batch to. The module knows nothing of Redis:
:class:`Source` and :class:`FeedSource` are what the store provides.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, Protocol, TypeVar

from service.store import StoredEvent
from service.store.outbox import OutboxEntry

__all__ = [
    "WAKE_SECONDS",
    "AppFeeds",
    "Delivered",
    "Fanout",
    "FeedEntry",
    "FeedFollower",
    "FeedLost",
    "Follower",
    "Source",
    "sse_message",
]

WAKE_SECONDS = 1.0  # the longest one read blocks: how soon a reader sees it has no followers
CATCH_UP_BATCH = 100
log = logging.getLogger(__name__)

T = TypeVar("T")  # what a batch holds: Delivered events, or (shard, OutboxEntry) pairs
_Item = list[T] | BaseException | None  # a batch, a failure, or the end


def sse_message(event: StoredEvent) -> str:
    """One Server-Sent Events message for a stored event (its JSON is one line)."""
    return f"id: {event.version}\nevent: {event.type.value}\ndata: {event.json}\n\n"


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


class FeedLost(Exception):
    """The reader failed (storage unavailable): the follower should end."""


# -- what a match and an app's feed share ------------------------------------------------------


class _Hub(Generic[T]):
    """This worker's channels, one per followed key. When ``stopping`` is set, every follower
    is woken so that it sees it."""

    def __init__(self, *, stopping: threading.Event | None, name: str) -> None:
        self.lock = threading.Lock()
        self.channels: dict[str, _Channel[T]] = {}
        self.stopping = stopping
        if stopping is not None:
            threading.Thread(target=self._wake_on, args=(stopping,), name=name, daemon=True).start()

    def readers(self) -> int:
        """Keys read now (one connection each)."""
        with self.lock:
            return len(self.channels)

    def _join(
        self,
        key: str,
        waiting: queue.SimpleQueue[_Item[T]],
        new: Callable[[], _Channel[T]] | None,
    ) -> tuple[_Channel[T], Any] | None:
        """Add ``waiting`` to the channel of ``key``, started by ``new()`` if there is none
        (``None``, without ``new``); the channel and what it had handed out when joined (later
        batches come through the queue)."""
        with self.lock:
            channel = self.channels.get(key)
            if channel is None:
                if new is None:
                    return None
                channel = self.channels[key] = new()
                channel.thread.start()
            channel.queues.add(waiting)
            return channel, channel.cursor

    def _wake_on(self, stopping: threading.Event) -> None:
        """Each time ``stopping`` is set, wake every follower (which then sees it is set):
        followers otherwise sleep until their next batch or keep-alive."""
        while True:
            stopping.wait()
            with self.lock:
                for channel in self.channels.values():
                    for waiting in channel.queues:
                        waiting.put([])
            while stopping.is_set():
                time.sleep(0.2)


class _Channel(Generic[T]):
    """One key followed in this worker: a reader, in a thread of its own, hands each batch
    ``read()`` yields to every follower's queue; ``advance(batch)`` is what the followers have
    been handed after it (their :attr:`cursor`). It ends when nobody follows any more, when
    the batches end (the followers get ``None``) or when reading fails (they get the error)."""

    def __init__(
        self,
        hub: _Hub[T],
        key: str,
        cursor: Any,
        *,
        read: Callable[[], Iterator[list[T]]],
        advance: Callable[[list[T]], Any],
        name: str,
        title: str,
    ) -> None:
        self.hub = hub
        self.key = key
        self.cursor = cursor
        self.read = read
        self.advance = advance
        self.title = title
        self.queues: set[queue.SimpleQueue[_Item[T]]] = set()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        batches: Iterator[list[T]] | None = None
        try:
            batches = self.read()
            for batch in batches:
                with self.hub.lock:
                    if not self.queues:
                        self._leave()
                        return
                    if batch:
                        self.cursor = self.advance(batch)
                        for waiting in self.queues:
                            waiting.put(batch)
            self._end(None)  # the match is finished (its last event handed out) or expired
        except Exception as error:
            log.warning("%s ended: %s", self.title, type(error).__name__)
            self._end(error)
        finally:
            close = getattr(batches, "close", None)
            if close is not None:
                close()

    def _leave(self) -> None:
        """With the lock held: no longer the key's channel."""
        if self.hub.channels.get(self.key) is self:
            del self.hub.channels[self.key]

    def _end(self, error: BaseException | None) -> None:
        with self.hub.lock:
            self._leave()
            for waiting in self.queues:
                waiting.put(error)
            self.queues.clear()


class _Following(Generic[T]):
    """What every follower does: wait on its queue, be woken, leave its channel."""

    def __init__(self, hub: _Hub[T]) -> None:
        self.hub = hub
        self._queue: queue.SimpleQueue[_Item[T]] = queue.SimpleQueue()
        self._channel: _Channel[T] | None = None

    def _get(self, timeout: float) -> list[T] | None:
        """The next batch from the channel, ``[]`` after ``timeout`` (or a wake), ``None`` at
        its end; raise FeedLost when its reader failed."""
        try:
            item = self._queue.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return []
        if isinstance(item, BaseException):
            raise FeedLost(str(item)) from item
        return item

    def wake(self) -> None:
        """Make a waiting ``next`` return ``[]`` now (any thread or greenlet)."""
        self._queue.put([])

    def close(self) -> None:
        with self.hub.lock:
            if self._channel is not None:
                self._channel.queues.discard(self._queue)
                self._channel = None


# -- a match's events --------------------------------------------------------------------------


class Follower(_Following[Delivered]):
    """One client's view of a match's events after a version; :meth:`close` when done."""

    def __init__(self, fanout: Fanout, match_id: str, after: int, latest: int | None) -> None:
        super().__init__(fanout)
        self.fanout = fanout
        self.match_id = match_id
        self.after = after
        if latest is None:
            last = fanout.source.last_event(match_id)
            latest = 0 if last is None else last.version
        start = latest
        joined = fanout._join(match_id, self._queue, lambda: fanout.channel(match_id, start))
        assert joined is not None
        self._channel, caught_up_to = joined
        self._catch_up_to: int = caught_up_to  # later events come through the queue

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
        item = self._get(timeout)
        if item is None:
            return None
        fresh = [delivered for delivered in item if delivered.version > self.after]
        if fresh:
            self.after = fresh[-1].version
        return fresh


class Fanout(_Hub[Delivered]):
    """This worker's readers, one per followed match.

    ``render`` makes an event's text for the streams (once per event). When ``stopping`` is
    set, every follower is woken so that it sees it.
    """

    def __init__(
        self,
        source: Source,
        *,
        render: Callable[[StoredEvent], str] = sse_message,
        stopping: threading.Event | None = None,
    ) -> None:
        super().__init__(stopping=stopping, name="feed-stop")
        self.source = source
        self.render = render

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

    def channel(self, match_id: str, cursor: int) -> _Channel[Delivered]:
        """The reader of ``match_id``'s events after version ``cursor``."""
        return _Channel(
            self,
            match_id,
            cursor,
            read=lambda: self._rendered(match_id, cursor),
            advance=lambda batch: batch[-1].version,
            name=f"feed-{match_id}",
            title=f"feed of match {match_id}",
        )

    def _rendered(self, match_id: str, after: int) -> Iterator[list[Delivered]]:
        batches = self.source.follow(match_id, after=after, wake=WAKE_SECONDS)
        try:
            for batch in batches:
                yield [Delivered(event, self.render(event)) for event in batch]
        finally:
            close = getattr(batches, "close", None)
            if close is not None:
                close()


# -- the app feed ------------------------------------------------------------------------------

FeedEntry = tuple[int, OutboxEntry]
"""An entry of an app's feed: its shard, and the outbox entry."""


def _entry_order(entry_id: str) -> tuple[int, int]:
    """An outbox entry id (``<ms>-<seq>``) as something that sorts like Redis sorts them."""
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


class FeedFollower(_Following[FeedEntry]):
    """One client of an app's feed, after per-shard :attr:`positions`; :meth:`close` when
    done."""

    def __init__(self, feeds: AppFeeds, app: str, positions: Sequence[str] | None) -> None:
        super().__init__(feeds)
        self.feeds = feeds
        self.app = app
        self._catch_up: FeedRead | None = None
        reader: FeedRead | None = None
        built: list[_Channel[FeedEntry]] = []

        def new(reader: FeedRead) -> _Channel[FeedEntry]:
            built.append(feeds.channel(reader))
            return built[0]

        # Read "now" outside the lock (Redis round trips) when the app has no channel, then
        # join whichever channel won the race.
        while True:
            making = None if reader is None else partial(new, reader)
            joined = feeds._join(app, self._queue, making)
            if joined is not None:
                break
            reader = feeds.source.feed_reader(app, None)
        if reader is not None and not built:
            reader.close()
        self._channel, cursor = joined
        joined_at = list(cursor)
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

    def next(self, timeout: float) -> list[FeedEntry]:
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
        return self._take(self._get(timeout) or [])

    def _take(self, found: list[FeedEntry]) -> list[FeedEntry]:
        fresh = []
        for shard, entry in found:
            if _entry_order(entry.entry_id) > _entry_order(self.positions[shard]):
                self.positions[shard] = entry.entry_id
                fresh.append((shard, entry))
        return fresh

    def close(self) -> None:
        super().close()
        if self._catch_up is not None:
            self._catch_up.close()
            self._catch_up = None


class AppFeeds(_Hub[FeedEntry]):
    """This worker's readers of app feeds (``GET /v1/feed``), one per followed app: a
    hundred listeners of one app's feed cost one Redis connection per worker. When
    ``stopping`` is set, every follower is woken so that it sees it."""

    def __init__(self, source: FeedSource, *, stopping: threading.Event | None = None) -> None:
        super().__init__(stopping=stopping, name="app-feed-stop")
        self.source = source

    def follow(self, app: str, positions: Sequence[str] | None) -> FeedFollower:
        """Follow ``app``'s feed after ``positions`` (one entry id per shard; ``None``: from
        now)."""
        return FeedFollower(self, app, positions)

    def channel(self, reader: FeedRead) -> _Channel[FeedEntry]:
        """The reader of an app's feed, from the positions ``reader`` is at."""

        def advance(found: list[FeedEntry]) -> list[str]:
            for shard, entry in found:
                reader.positions[shard] = entry.entry_id
            return list(reader.positions)

        return _Channel(
            self,
            reader.app,
            list(reader.positions),
            read=lambda: _entries(reader),
            advance=advance,
            name=f"app-feed-{reader.app}",
            title=f"feed of app {reader.app}",
        )


def _entries(reader: FeedRead) -> Iterator[list[FeedEntry]]:
    """What ``reader`` reads, batch after batch, until it fails; closed when left."""
    try:
        while True:
            yield reader.read(block=WAKE_SECONDS)
    finally:
        reader.close()
