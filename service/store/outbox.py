"""The apps' outboxes: what the commit script writes of a change for its app (its Lua,
:data:`NOTIFY_LUA`, and arguments, :func:`notify_args`), and their readers: the dispatchers'
(:class:`OutboxReader`, through a consumer group) and the app feed's (:class:`FeedReader`).

The keys live under the hash tag of the match's shard (``{s<k>}``, see
:mod:`service.store.keys`), so the commit script writes a notification in the same atomic
step as the move that causes it, on the node that holds the match::

    {s<k>}:out:<app>               stream: the app's notifications of matches on shard k
                                   (m match id, c the notification's compact form, see
                                   service.notices; entries written before that form hold
                                   t type, b the JSON body); entries and the key itself kept
                                   OUTBOX_DAYS (app history, not per match); consumer group
                                   "dispatch" (the dispatchers); the feed reads it
    {s<k>}:warn                    sorted set: match id -> when its turn.expiring is due
    {s<k>}:warnb                   hash: match id -> "<app>\\n<turn.expiring, compact>"
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from redis.exceptions import RedisClusterException, RedisError, ResponseError

from service.notices import Notices, expand
from service.store.errors import StoreUnavailable
from service.store.keys import SHARDS, shard_tag
from service.store.streams import Entry, streams_of
from service.store.topology import Topology

__all__ = [
    "GROUP",
    "NOTIFY_LUA",
    "OUTBOX_DAYS",
    "WARN_DUE",
    "FeedReader",
    "OutboxEntry",
    "OutboxReader",
    "notify_args",
    "outbox_key",
]

T = TypeVar("T")
_FAILURES = (RedisError, RedisClusterException)

GROUP = "dispatch"
OUTBOX_DAYS = 7  # how long an outbox keeps its entries (the feed can resume that far back)


def outbox_key(tag: str, app: str) -> str:
    """The key of ``app``'s outbox on the shard of hash tag ``tag``."""
    return f"{tag}:out:{app}"


# A Lua function for the commit script: the app's notifications of the change (ARGV from
# ``at``: app ('' for none), the shard's tag, the outbox's age limit in seconds, the count,
# the notifications (each compact: :meth:`service.notices.Notice.compact`), then the turn's
# warning: '' leave it, '-' drop it, or when and the compact notification).
NOTIFY_LUA = """
local function notify(match_id, at)
  local app = ARGV[at]
  if app == nil or app == '' then return end
  local tag, n = ARGV[at + 1], tonumber(ARGV[at + 3])
  if n > 0 then
    local t = redis.call('TIME')
    local oldest = string.format('%d', (tonumber(t[1]) - tonumber(ARGV[at + 2])) * 1000)
    local out = tag .. ':out:' .. app
    for i = 0, n - 1 do
      redis.call('XADD', out, 'MINID', '~', oldest, '*', 'm', match_id, 'c', ARGV[at + 4 + i])
    end
    redis.call('EXPIRE', out, ARGV[at + 2])
  end
  local w = at + 4 + n
  if ARGV[w] == '-' then
    redis.call('ZREM', tag .. ':warn', match_id)
    redis.call('HDEL', tag .. ':warnb', match_id)
  elseif ARGV[w] ~= '' then
    redis.call('ZADD', tag .. ':warn', ARGV[w], match_id)
    redis.call('HSET', tag .. ':warnb', match_id, app .. '\\n' .. ARGV[w + 1])
  end
end
"""

# KEYS: a shard's warn and warnb keys. ARGV: the most to send, the tag, the outbox's age
# limit. Moves each turn.expiring that is due by Redis TIME into its app's outbox.
WARN_DUE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local oldest = string.format('%d', (tonumber(t[1]) - tonumber(ARGV[3])) * 1000)
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.6f', now),
                       'LIMIT', 0, tonumber(ARGV[1]))
for _, id in ipairs(ids) do
  local held = redis.call('HGET', KEYS[2], id)
  if held and redis.call('EXISTS', ARGV[2] .. ':' .. id .. ':state') == 1 then
    local cut = string.find(held, '\\n', 1, true)
    local out = ARGV[2] .. ':out:' .. string.sub(held, 1, cut - 1)
    redis.call('XADD', out, 'MINID', '~', oldest, '*', 'm', id, 'c', string.sub(held, cut + 1))
    redis.call('EXPIRE', out, ARGV[3])
  end
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
end
return #ids
"""


def notify_args(notices: Notices | None, tag: str) -> list[Any]:
    """The commit script's arguments for :data:`NOTIFY_LUA` (appended after the others)."""
    if notices is None:
        return [""]
    match_id = notices.match_id
    argv: list[Any] = [notices.app, tag, str(OUTBOX_DAYS * 86400), str(len(notices.notices))]
    argv += [notice.compact(match_id) for notice in notices.notices]
    warn = notices.warn
    if warn is None:
        argv.append("")
    elif len(warn) == 2:
        argv += [repr(warn[0]), warn[1].compact(match_id)]
    else:
        argv.append("-")
    return argv


@dataclass(frozen=True)
class OutboxEntry:
    """One notification read from an app's outbox on a shard; ``stored`` is its compact
    form (:meth:`service.notices.Notice.compact`) or, written before that form, its body."""

    shard: int
    app: str
    entry_id: str
    match_id: str
    stored: str

    @classmethod
    def of(cls, shard: int, app: str, entry_id: str, fields: dict[str, str]) -> OutboxEntry:
        """The entry of the stream fields ``fields`` (``m``, ``c``; or ``m``, ``t``, ``b``)."""
        return cls(shard, app, entry_id, fields["m"], fields.get("c") or fields["b"])

    @cached_property
    def _expanded(self) -> tuple[str, str]:
        return expand(self.match_id, self.stored)

    @property
    def type(self) -> str:
        return self._expanded[0]

    @property
    def body(self) -> str:
        """The JSON text delivered and streamed."""
        return self._expanded[1]

    @property
    def created_ms(self) -> int:
        return int(self.entry_id.partition("-")[0])


class OutboxReader:
    """A dispatcher's reader of one shard's outboxes (one connection of its own)."""

    def __init__(self, topology: Topology, shard: int, apps: tuple[str, ...], consumer: str):
        self.topology = topology
        self.shard = shard
        self.apps = apps
        self.consumer = consumer
        self.tag = shard_tag(shard)
        self.keys = {outbox_key(self.tag, app): app for app in apps}
        self._client: Any = None

    def _connection(self, block: float) -> Any:
        if self._client is None:
            client = self.topology.dedicated(
                f"{self.tag}:wh:due",
                read_timeout=block + 5.0,
                name=f"dispatch:{self.shard}",
            )
            for key in self.keys:
                try:
                    client.xgroup_create(key, GROUP, id="0", mkstream=True)
                except ResponseError as error:
                    if "BUSYGROUP" not in str(error):
                        raise
            self._client = client
        return self._client

    def read(self, *, block: float, count: int = 100) -> list[OutboxEntry]:
        """New entries for this consumer, waiting up to ``block`` seconds."""
        if not self.keys:
            time.sleep(block)
            return []
        try:
            client = self._connection(block)
            answer = client.xreadgroup(
                GROUP,
                self.consumer,
                {key: ">" for key in self.keys},
                count=count,
                block=max(1, int(block * 1000)),
            )
        except _FAILURES as error:
            self.close()
            raise StoreUnavailable(f"outbox {self.tag}: {type(error).__name__}") from error
        return self._entries(streams_of(answer))

    def claim_stale(self, *, idle: float, count: int = 100) -> list[OutboxEntry]:
        """Entries another consumer read but did not acknowledge for ``idle`` seconds."""
        found: list[tuple[str, list[Entry]]] = []
        try:
            client = self._connection(1.0)
            for key in self.keys:
                answer = client.xautoclaim(
                    key, GROUP, self.consumer, int(idle * 1000), start_id="0-0", count=count
                )
                found.append((key, [entry for entry in answer[1] if entry and entry[1]]))
        except _FAILURES as error:
            self.close()
            raise StoreUnavailable(f"outbox {self.tag}: {type(error).__name__}") from error
        return self._entries(found)

    def _entries(self, streams: list[tuple[str, list[Entry]]]) -> list[OutboxEntry]:
        entries = []
        for key, items in streams:
            app = self.keys[key]
            for entry_id, fields in items:
                entries.append(OutboxEntry.of(self.shard, app, entry_id, fields))
        return entries

    def close(self) -> None:
        if self._client is not None:
            with contextlib.suppress(*_FAILURES, OSError):
                self._client.close()
            self._client = None


class FeedReader:
    """The app feed: every shard's outbox of one app, read after ``positions`` (one entry
    id per shard; ``None``: from now)."""

    def __init__(
        self,
        topology: Topology,
        app: str,
        positions: Sequence[str] | None,
        *,
        shards: int = SHARDS,
    ) -> None:
        self.topology = topology
        self.app = app
        self.keys = [outbox_key(shard_tag(shard), app) for shard in range(shards)]
        self._client: Any = None
        if positions is None:
            positions = [self._last(key) for key in self.keys]
        self.positions = list(positions)

    def _last(self, key: str) -> str:
        last = _call(lambda: self.topology.client.xrevrange(key, "+", "-", 1))
        return str(last[0][0]) if last else "0-0"

    def read(self, *, block: float, count: int = 100) -> list[tuple[int, OutboxEntry]]:
        """Entries after the positions (each with its shard), waiting up to ``block``; the
        positions move past them."""
        try:
            if not self.topology.cross_slot:
                streams = self._read_each(count)
                if not streams:
                    time.sleep(min(block, 0.1))
            else:
                if self._client is None:
                    self._client = self.topology.dedicated(
                        self.keys[0], read_timeout=block + 5.0, name=f"feed:{self.app}"
                    )
                answer = self._client.xread(
                    dict(zip(self.keys, self.positions, strict=True)),
                    count=count,
                    block=max(1, int(block * 1000)),
                )
                streams = streams_of(answer)
        except (OSError, *_FAILURES) as error:
            raise StoreUnavailable(f"feed of {self.app}: {type(error).__name__}") from error
        return self._entries(streams)

    def read_now(self, *, count: int = 100) -> list[tuple[int, OutboxEntry]]:
        """Entries after the positions, without waiting (on the shared pool, no connection
        of its own): a follower of the app's feed catching up (``service/fanout.py``)."""
        try:
            if not self.topology.cross_slot:
                streams = self._read_each(count)
            else:
                answer = self.topology.client.xread(
                    dict(zip(self.keys, self.positions, strict=True)), count=count
                )
                streams = streams_of(answer)
        except (OSError, *_FAILURES) as error:
            raise StoreUnavailable(f"feed of {self.app}: {type(error).__name__}") from error
        return self._entries(streams)

    def _entries(self, streams: list[tuple[str, list[Entry]]]) -> list[tuple[int, OutboxEntry]]:
        found: list[tuple[int, OutboxEntry]] = []
        index = {key: shard for shard, key in enumerate(self.keys)}
        for key, items in streams:
            shard = index[key]
            for entry_id, fields in items:
                found.append((shard, OutboxEntry.of(shard, self.app, entry_id, fields)))
        return found

    def _read_each(self, count: int) -> list[tuple[str, list[Entry]]]:
        streams = []
        for key, position in zip(self.keys, self.positions, strict=True):
            answer = self.topology.client.xread({key: position}, count=count)
            streams += streams_of(answer)
        return streams

    def close(self) -> None:
        if self._client is not None:
            with contextlib.suppress(*_FAILURES, OSError):
                self._client.close()
            self._client = None


def _call(call: Callable[[], T]) -> T:
    try:
        return call()
    except _FAILURES as error:
        raise StoreUnavailable(f"Redis: {type(error).__name__}: {error}") from error
