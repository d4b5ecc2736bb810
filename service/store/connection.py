"""Building the Redis client: one per worker, bounded pool, explicit timeouts, and a pause
after a Redis that did not answer (see :class:`Breakers`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

import redis
from redis._parsers import Encoder
from redis.backoff import ExponentialBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.commands.core import Script
from redis.connection import AbstractConnection, Connection, parse_url
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from service.config import Settings

__all__ = ["Breakers", "LazyCluster", "StoreUnavailable", "connect", "connect_blocking"]


class StoreUnavailable(RedisError):
    """Not sent: this Redis failed to answer a moment ago (the API answers 503)."""


class Breakers:
    """One circuit breaker per Redis address, for a worker's connections to it.

    When a call to a Redis times out or loses its connection, the next calls to that address
    fail at once with :class:`StoreUnavailable` for ``pause`` seconds, instead of each waiting
    out the socket timeout; then calls try again. A frozen Redis thus costs one timeout per
    pause, not one per request: requests queued behind the first ones (the worker runs a few
    at a time, see :mod:`service.threads`) answer 503 at once rather than one timeout after
    another.

    Two things keep the pause from outlasting the fault:

    - An answer from that Redis ends the pause at once (a call sent before the pause may
      get its answer once the Redis is back).
    - Only a call sent after the pause began can start a new one. Calls sent before it fail
      one after another over the next socket timeout, and each would otherwise push the end
      further; so a Redis back right after the first failure is asked again at most
      ``pause`` seconds later.
    """

    def __init__(self, pause: float) -> None:
        self.pause = pause
        self._until: dict[object, float] = {}
        self._opened: dict[object, float] = {}

    def check(self, address: object) -> None:
        """Raise :class:`StoreUnavailable` while ``address`` is paused."""
        until = self._until.get(address)
        if until is not None and time.monotonic() < until:
            raise StoreUnavailable(
                f"Redis at {address} did not answer a moment ago; not asked again for now"
            )

    def trip(self, address: object, sent_at: float | None = None) -> None:
        """A call to ``address`` sent at ``sent_at`` (``time.monotonic()``; None: now)
        failed: pause ``address`` for the next ``pause`` seconds, unless that call was sent
        before the last pause began (its failure tells nothing new)."""
        now = time.monotonic()
        opened = self._opened.get(address)
        if sent_at is not None and opened is not None and sent_at < opened:
            return
        self._opened[address] = now
        self._until[address] = now + self.pause

    def answered(self, address: object) -> None:
        """``address`` answered a call: it is back, and the pause ends."""
        if self._until:
            self._until.pop(address, None)

    def connection_class(self, base: type[AbstractConnection]) -> type[AbstractConnection]:
        """``base`` (a redis-py connection class) checked against, and tripping, these breakers."""
        breakers = self
        failures = (RedisConnectionError, RedisTimeoutError)

        class Guarded(base):  # type: ignore[valid-type, misc]
            def _guarded(self, method: Any, args: Any, kwargs: Any, *, ask: bool) -> Any:
                address = getattr(self, "path", None) or (self.host, self.port)
                if ask:  # sending something: not while the breaker is open
                    breakers.check(address)
                    self.breaker_sent_at = time.monotonic()
                try:
                    answer = method(self, *args, **kwargs)
                except failures:
                    breakers.trip(address, getattr(self, "breaker_sent_at", None))
                    raise
                if not ask:  # an answer read: this Redis is there
                    breakers.answered(address)
                return answer

            def connect_check_health(self, *args: Any, **kwargs: Any) -> Any:
                return self._guarded(base.connect_check_health, args, kwargs, ask=True)

            def send_packed_command(self, *args: Any, **kwargs: Any) -> Any:
                return self._guarded(base.send_packed_command, args, kwargs, ask=True)

            def read_response(self, *args: Any, **kwargs: Any) -> Any:
                return self._guarded(base.read_response, args, kwargs, ask=False)

        Guarded.__name__ = Guarded.__qualname__ = f"Guarded{base.__name__}"
        return Guarded


def connect(settings: Settings) -> Any:
    """Return a Redis (or Redis Cluster) client for ``settings``; nothing connects yet.

    Connect and socket timeouts bound every call, a blocking pool bounds the
    connections, and a short bounded retry covers a dropped connection, so a
    frozen or stopped Redis makes requests fail fast (503) instead of hanging.
    """
    retry = Retry(ExponentialBackoff(cap=0.1, base=0.02), retries=1)
    breakers = Breakers(pause=max(settings.redis_socket_timeout, 0.25))
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
                startup_nodes=nodes,
                max_connections=settings.redis_max_connections,
                **common,
            )
        )
    pool = redis.BlockingConnectionPool.from_url(
        settings.redis_url,
        max_connections=settings.redis_max_connections,
        timeout=settings.redis_pool_timeout,
        connection_class=breakers.connection_class(_connection_class(settings.redis_url)),
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
        # Script asks its client only for get_encoder, evalsha and script_load.
        return Script(cast("redis.Redis", self), script)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client(), name)


def connect_blocking(settings: Settings) -> Any:
    """Return a client for long-polls: the same timeouts, and a pool as large as the threads
    that may wait at once (``REDIS_BLOCKING_CONNECTIONS``), apart from the requests' pool."""
    return connect(replace(settings, redis_max_connections=settings.redis_blocking_connections))


def _connection_class(url: str) -> type[AbstractConnection]:
    """The redis-py connection class a URL names (``from_url`` picks it unless given one)."""
    named: type[AbstractConnection] = parse_url(url).get("connection_class", Connection)
    return named


def _node(text: str) -> ClusterNode:
    host, _, port = text.strip().rpartition(":")
    return ClusterNode(host or "127.0.0.1", int(port))
