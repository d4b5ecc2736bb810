"""Building the Redis client: one per worker, bounded pool, explicit timeouts."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import redis
from redis._parsers import Encoder
from redis.backoff import ExponentialBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.commands.core import Script
from redis.retry import Retry

from service.config import Settings

__all__ = ["LazyCluster", "connect", "connect_blocking"]


def connect(settings: Settings) -> Any:
    """Return a Redis (or Redis Cluster) client for ``settings``; nothing connects yet.

    Connect and socket timeouts bound every call, a blocking pool bounds the
    connections, and a short bounded retry covers a dropped connection, so a
    frozen or stopped Redis makes requests fail fast (503) instead of hanging.
    """
    retry = Retry(ExponentialBackoff(cap=0.1, base=0.02), retries=1)
    common: dict[str, Any] = {
        "socket_connect_timeout": settings.redis_connect_timeout,
        "socket_timeout": settings.redis_socket_timeout,
        "retry": retry,
        "decode_responses": True,
        "health_check_interval": 0,
    }
    if settings.redis_cluster_nodes:
        nodes = [_node(part) for part in settings.redis_cluster_nodes.split(",") if part.strip()]
        return LazyCluster(
            lambda: RedisCluster(
                startup_nodes=nodes, max_connections=settings.redis_max_connections, **common
            )
        )
    pool = redis.BlockingConnectionPool.from_url(
        settings.redis_url,
        max_connections=settings.redis_max_connections,
        timeout=settings.redis_pool_timeout,
        **common,
    )
    return redis.Redis(connection_pool=pool)


class LazyCluster:
    """A Redis Cluster client built on first use, so a worker starts while the cluster is down.

    ``RedisCluster`` discovers the cluster in its constructor; until that succeeds every
    call raises the connection error (a 503 answer), and the next call tries again.
    """

    def __init__(self, build: Callable[[], RedisCluster]) -> None:
        self._build = build
        self._client: RedisCluster | None = None
        self._lock = threading.Lock()

    def client(self) -> RedisCluster:
        """The cluster client, discovering the cluster now if it has not been yet."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = self._build()
        return self._client

    def get_encoder(self) -> Encoder:
        """How scripts are encoded (as the client will: UTF-8), without connecting."""
        return Encoder("utf-8", "strict", True)

    def register_script(self, script: str) -> Script:
        """A Lua script that runs on the cluster once it is reachable."""
        return Script(self, script)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client(), name)


def connect_blocking(settings: Settings) -> Any:
    """Return a client for long-polls: the same timeouts, and a pool as large as the threads
    that may wait at once (``REDIS_BLOCKING_CONNECTIONS``), apart from the requests' pool."""
    return connect(replace(settings, redis_max_connections=settings.redis_blocking_connections))


def _node(text: str) -> ClusterNode:
    host, _, port = text.strip().rpartition(":")
    return ClusterNode(host or "127.0.0.1", int(port))
