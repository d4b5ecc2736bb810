"""Configuration from the environment, with documented defaults (docs/OPERATIONS.md)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

__all__ = ["Settings"]

_TRUE = {"1", "true", "yes", "on"}


def _flag(value: str) -> bool:
    return value.strip().lower() in _TRUE


@dataclass(frozen=True)
class Settings:
    """Every setting of the service; ``from_env`` reads them from environment variables."""

    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_cluster_nodes: str = ""  # "host:port,host:port": use Redis Cluster
    redis_connect_timeout: float = 0.5
    redis_socket_timeout: float = 0.5
    redis_max_connections: int = 128  # gevent: many requests of a worker may call at once
    redis_pool_timeout: float = 0.5
    redis_wait_replicas: str = "auto"  # replicas a commit waits for: auto (1 if any), 0, 1, 2...
    redis_wait_timeout_ms: int = 500  # how long a commit waits for them (then 503)
    redis_tracking: bool = True  # views trust Redis's invalidations instead of asking each time
    long_poll_max_seconds: float = 30.0  # the longest a ?wait_version long-poll waits
    stream_keepalive_seconds: float = 15.0  # an event stream's comment line when idle
    stream_max_seconds: float = 600.0  # an event stream's longest life
    test_mode: bool = False
    max_body_bytes: int = 64 * 1024
    finished_match_ttl: int = 7 * 24 * 3600
    retry_after_seconds: int = 1
    rate_limit: str = ""  # flask-limiter syntax, empty: no limit
    cors_origins: tuple[str, ...] = field(default_factory=tuple)
    trusted_proxies: int = 0  # proxies in front whose X-Forwarded-For/-Proto are believed
    api_keys: str = field(default="", repr=False)  # "name=key,..."; secret: never in a repr
    api_keys_file: str = ""  # a file of name=key lines (a mounted secret)
    sandbox_keys: str = field(default="", repr=False)  # sandbox apps, "name=key,..."; secret
    sandbox_keys_file: str = ""  # a file of the sandbox apps' name=key lines
    anonymous_matches: bool = True  # False: creating a match needs an app's key
    idle_match_ttl: int = 30 * 24 * 3600  # a match nobody acted on this long expires
    webhook_retry_schedule: str = "5,30,120,600,3600,21600,86400"  # seconds between attempts
    webhook_timeout_seconds: float = 10.0  # the longest one delivery attempt may take
    webhook_concurrency: int = 32  # deliveries in flight at once, per dispatcher
    max_streams_per_address: int = 64  # open streams and long-polls per client address, 0: any
    max_streams_per_worker: int = 4000  # open streams and long-polls per worker process
    request_body_timeout: float = 10.0  # seconds a request's body has to arrive whole
    solver_freeze: bool = True  # workers and the sweeper freeze what the solver's searches leave
    collector_freeze: bool = True  # workers freeze what each garbage collection leaves

    _ENV: ClassVar[dict[str, str]] = {
        "redis_url": "REDIS_URL",
        "redis_cluster_nodes": "REDIS_CLUSTER_NODES",
        "redis_connect_timeout": "REDIS_CONNECT_TIMEOUT",
        "redis_socket_timeout": "REDIS_SOCKET_TIMEOUT",
        "redis_max_connections": "REDIS_MAX_CONNECTIONS",
        "redis_pool_timeout": "REDIS_POOL_TIMEOUT",
        "redis_wait_replicas": "REDIS_WAIT_REPLICAS",
        "redis_wait_timeout_ms": "REDIS_WAIT_TIMEOUT_MS",
        "redis_tracking": "REDIS_TRACKING",
        "long_poll_max_seconds": "LONG_POLL_MAX_SECONDS",
        "stream_keepalive_seconds": "STREAM_KEEPALIVE_SECONDS",
        "stream_max_seconds": "STREAM_MAX_SECONDS",
        "test_mode": "REFEREE_TEST_MODE",
        "max_body_bytes": "MAX_BODY_BYTES",
        "finished_match_ttl": "FINISHED_MATCH_TTL",
        "retry_after_seconds": "RETRY_AFTER_SECONDS",
        "rate_limit": "RATE_LIMIT",
        "cors_origins": "CORS_ORIGINS",
        "trusted_proxies": "TRUSTED_PROXIES",
        "api_keys": "REFEREE_API_KEYS",
        "api_keys_file": "REFEREE_API_KEYS_FILE",
        "sandbox_keys": "REFEREE_SANDBOX_KEYS",
        "sandbox_keys_file": "REFEREE_SANDBOX_KEYS_FILE",
        "anonymous_matches": "ANONYMOUS_MATCHES",
        "idle_match_ttl": "IDLE_MATCH_TTL",
        "webhook_retry_schedule": "WEBHOOK_RETRY_SCHEDULE",
        "webhook_timeout_seconds": "WEBHOOK_TIMEOUT_SECONDS",
        "webhook_concurrency": "WEBHOOK_CONCURRENCY",
        "max_streams_per_address": "MAX_STREAMS_PER_ADDRESS",
        "max_streams_per_worker": "MAX_STREAMS_PER_WORKER",
        "request_body_timeout": "REQUEST_BODY_TIMEOUT",
        "solver_freeze": "SOLVER_FREEZE",
        "collector_freeze": "COLLECTOR_FREEZE",
    }

    @classmethod
    def variable(cls, name: str) -> str:
        """The environment variable of the setting ``name`` (a field name): messages name
        settings through it, so that each name is written here only."""
        return cls._ENV[name]

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Return the settings named by ``environ`` (default: ``os.environ``)."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            name = cls._ENV.get(f.name)
            if name is None or name not in environ:
                continue
            values[f.name] = _convert(f.name, environ[name], getattr(cls(), f.name))
        return cls(**values)

    def with_overrides(self, overrides: Mapping[str, Any] | None) -> Settings:
        """Return these settings with ``overrides`` (field names) applied."""
        return replace(self, **dict(overrides or {}))


def _convert(name: str, raw: str, default: object) -> object:
    try:
        if isinstance(default, bool):
            return _flag(raw)
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
        if isinstance(default, tuple):
            return tuple(part.strip() for part in raw.split(",") if part.strip())
    except ValueError:
        raise ValueError(f"environment variable for {name} is not valid: {raw!r}") from None
    return raw
