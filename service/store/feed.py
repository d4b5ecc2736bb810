"""Reading a match's event stream for :mod:`service.fanout` (its :class:`Source`).

The events are the match's Redis Stream (``{m:<id>}:events``, entry ``0-<n>`` is the event
that produced version ``n``). The fan-out reads it with ``XREAD BLOCK`` on a connection of
each followed match's own (one per match and worker, not one per client); catching up and
looking at the newest event use the shared client.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis
from redis.cluster import RedisCluster

from service import jsoncodec
from service.config import Settings
from service.fanout import Event
from service.store.connection import LazyCluster
from service.store.matches import MatchStore

__all__ = ["RedisFeed"]


def _version(entry_id: str) -> int:
    return int(entry_id.partition("-")[2])


def _event(entry_id: str, fields: dict[str, str]) -> Event:
    text = fields["e"]
    kind = jsoncodec.loads(text).get("type", "message")
    return Event(_version(entry_id), str(kind), text)


class _Reader:
    def __init__(self, client: Any, key: str) -> None:
        self.client = client
        self.key = key

    def read(self, after: int, block: float) -> Sequence[Event]:
        answer = self.client.xread({self.key: f"0-{after}"}, count=100, block=int(block * 1000))
        if not answer:
            return []
        # redis-py answers [[key, entries]] (RESP2) or {key: [entries]} (RESP3).
        entries = next(iter(answer.values()))[0] if isinstance(answer, dict) else answer[0][1]
        return [_event(entry_id, fields) for entry_id, fields in entries]

    def close(self) -> None:
        self.client.close()


class RedisFeed:
    """The fan-out's source of events, for single Redis and Redis Cluster."""

    def __init__(self, settings: Settings, shared: Any) -> None:
        self.settings = settings
        self.shared = shared

    def last_version(self, match_id: str) -> int:
        last = self.shared.xrevrange(MatchStore.events_key(match_id), "+", "-", count=1)
        return _version(last[0][0]) if last else 0

    def last_event(self, match_id: str) -> Event | None:
        last = self.shared.xrevrange(MatchStore.events_key(match_id), "+", "-", count=1)
        return _event(*last[0]) if last else None

    def events_between(self, match_id: str, after: int, upto: int, limit: int) -> Sequence[Event]:
        entries = self.shared.xrange(
            MatchStore.events_key(match_id), min=f"(0-{after}", max=f"0-{upto}", count=limit
        )
        return [_event(entry_id, fields) for entry_id, fields in entries]

    def exists(self, match_id: str) -> bool:
        return bool(self.shared.exists(MatchStore.events_key(match_id)))

    def reader(self, match_id: str) -> _Reader:
        """A client on one connection of its own, whose reads may block a while.

        With Redis Cluster it talks to the node that holds the key now; if the slot moves,
        the read fails, the followers end and their clients reconnect.
        """
        key = MatchStore.events_key(match_id)
        settings = self.settings
        options: dict[str, Any] = {
            "socket_connect_timeout": settings.redis_connect_timeout,
            "socket_timeout": 1.0 + max(5.0, settings.redis_socket_timeout),
            "decode_responses": True,
            "single_connection_client": True,
            "client_name": "feed:" + key,  # how CLIENT LIST tells the readers apart
        }
        shared = self.shared
        cluster = shared.client() if isinstance(shared, LazyCluster) else shared
        if isinstance(cluster, RedisCluster):
            node = cluster.get_node_from_key(key)
            return _Reader(redis.Redis(host=node.host, port=node.port, **options), key)
        return _Reader(redis.Redis.from_url(settings.redis_url, **options), key)
