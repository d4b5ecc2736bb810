"""Building the Redis client: one per worker, bounded pool, explicit timeouts."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import redis
from redis.backoff import ExponentialBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.retry import Retry

from service.config import Settings

__all__ = ["connect", "connect_blocking"]


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
        return RedisCluster(
            startup_nodes=nodes, max_connections=settings.redis_max_connections, **common
        )
    pool = redis.BlockingConnectionPool.from_url(
        settings.redis_url,
        max_connections=settings.redis_max_connections,
        timeout=settings.redis_pool_timeout,
        **common,
    )
    return redis.Redis(connection_pool=pool)


def connect_blocking(settings: Settings, *, longest_wait: float = 35.0) -> Any:
    """Return a client for blocking reads (long-poll, streams): a socket timeout past the wait."""
    return connect(replace(settings, redis_socket_timeout=longest_wait))


def _node(text: str) -> ClusterNode:
    host, _, port = text.strip().rpartition(":")
    return ClusterNode(host or "127.0.0.1", int(port))
