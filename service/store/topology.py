"""The shape of the Redis behind the store, chosen by one factory: :func:`open_topology`.

- **Single Redis** (``REDIS_URL``), with or without replicas: a blocking connection pool.
- **Redis Cluster** (``REDIS_CLUSTER_NODES``): a cluster client built on first use, so a worker
  starts while the cluster is down.

Both give the store the same few things: run a script on the node that holds a key (with
``WAIT`` for replicas on the same connection, so a commit stays one round trip), a connection
of its own for following a stream, and the name of the node that holds a key (for the
breakers). Every client has connect and socket timeouts and **no** retry: redis-py's ``Retry``
resends a command after a connection error, even a script Redis already ran, so the store
decides itself what may be sent again (see :mod:`service.store.matches`).

On a cluster, the client is built with ``dynamic_startup_nodes=False``: redis-py 6.4
re-discovers the cluster after each connection error and disconnects every connection of
the startup nodes' pools, which (when the startup nodes are the discovered ones) are the
connections other threads are using mid-command (upstream PR #3917, in redis-py 7.2). With
fixed startup nodes, discovery talks to clients of its own and leaves the others alone.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from functools import lru_cache, partial
from typing import Any, Protocol

import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import AskError, MovedError, NoScriptError
from redis.retry import Retry

from service.config import Settings
from service.store.commitlink import CommitLink

__all__ = ["ClusterTopology", "SingleTopology", "Topology", "limits_storage_uri", "open_topology"]

REPLICA_CHECK_SECONDS = 5.0  # how long a single Redis's count of replicas is believed


def open_topology(settings: Settings) -> Topology:
    """The topology ``settings`` name: a Redis Cluster if ``redis_cluster_nodes`` is set,
    else the single Redis at ``redis_url``. Nothing connects yet."""
    if settings.redis_cluster_nodes.strip():
        return ClusterTopology(settings)
    return SingleTopology(settings)


def limits_storage_uri(settings: Settings) -> str:
    """The rate limits' storage URI (flask-limiter) for the same Redis as the store's."""
    if settings.redis_cluster_nodes.strip():
        return "redis+cluster://" + ",".join(_node_names(settings.redis_cluster_nodes))
    return settings.redis_url


def wait_replicas(settings: Settings, replicas: int) -> int:
    """How many replicas a commit waits for when the node has ``replicas`` of them."""
    wanted = _wanted_replicas(settings.redis_wait_replicas)
    return min(replicas, 1) if wanted is None else wanted


@lru_cache(maxsize=8)
def _wanted_replicas(setting: str) -> int | None:
    """``REDIS_WAIT_REPLICAS`` read (once per value: every commit asks): ``None`` for auto."""
    wanted = setting.strip().lower()
    return None if wanted in ("", "auto") else max(int(wanted), 0)


class Topology:
    """What the store needs of Redis, whatever its shape (see the module)."""

    name = "redis"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @property
    def client(self) -> Any:
        """The client for commands on keys (a ``redis.Redis`` or a ``RedisCluster``)."""
        raise NotImplementedError

    def node_of(self, key: str) -> str:
        """The name of the node that holds ``key`` now."""
        raise NotImplementedError

    def replicas_of(self, key: str) -> int:
        """How many replicas the node holding ``key`` has (that a commit may wait for)."""
        raise NotImplementedError

    def eval(self, script: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """Run ``script`` on the node holding ``keys`` (one hash slot): by its digest
        (``EVALSHA``), and whole (``EVAL``, which also caches it) when that node does not
        know it yet. ``NOSCRIPT`` means nothing ran, so sending it whole then is safe."""
        try:
            return self.client.evalsha(script_digest(script), len(keys), *keys, *args)
        except NoScriptError:
            return self.client.eval(script, len(keys), *keys, *args)

    def eval_and_wait(
        self, script: str, keys: Sequence[str], args: Sequence[Any], *, replicas: int
    ) -> tuple[Any, int]:
        """Run ``script``, then ``WAIT replicas`` on the same connection, in one round trip;
        return the script's answer and how many replicas have its writes. What the store asks
        of a topology whose commits are not sent :attr:`together` (a cluster)."""
        raise NotImplementedError

    together = False
    """Whether :meth:`eval_together` can run many scripts in one round trip here."""

    cross_slot = False
    """Whether one command or script may name keys of different hash slots (every key is on
    one node): a listing's walk unites the shards' indexes in one script, and the app feed
    reads every shard's outbox in one ``XREAD``. On a Cluster each is read apart."""

    def eval_together(
        self, script: str, runs: Sequence[tuple[Sequence[str], Sequence[Any]]], *, replicas: int
    ) -> tuple[list[Any], int]:
        """Run ``script`` once for each ``(keys, args)`` of ``runs``, in order, on one
        connection and in one round trip, then ``WAIT replicas`` when that is over 0. Answers
        each run's answer (an exception for a run Redis refused) and how many replicas have
        all their writes (-1 without ``WAIT``). A lost connection or a timeout raises: then
        any of them may have run."""
        raise NotImplementedError

    def dedicated(self, key: str, *, read_timeout: float, name: str) -> redis.Redis:
        """A client holding one connection of its own to the node of ``key`` (for ``XREAD
        BLOCK``), called ``name`` in ``CLIENT LIST``; the caller closes it.

        Like every client here it does not retry: a lost connection raises at once, and the
        caller's reader ends (a stream's client resumes with ``Last-Event-ID``). The default of
        ``redis.Redis(host=..., port=...)`` retries 3 times after random waits of up to 2, 4
        and 8 s, on the same address even when a failover has moved the key's slot
        elsewhere (``from_url``'s pool did not retry)."""
        raise NotImplementedError

    def tracking_client(self) -> redis.Redis | None:
        """A client of one connection to the node that holds every match, for following
        what changes there (:mod:`service.store.tracking`); ``None`` when no node does."""
        return None

    def tracked_pool(self, on_connect: Callable[[Any], None]) -> redis.ConnectionPool | None:
        """A pool of connections to that node whose reads Redis tracks: ``on_connect(conn)``
        sets each new one up (:mod:`service.store.tracking`); ``None`` when no node holds
        every match."""
        return None

    def ping(self) -> None:
        """Raise unless Redis answers."""
        self.client.ping()

    def wait_timeout_ms(self) -> int:
        """``WAIT``'s timeout."""
        return max(int(self.settings.redis_wait_timeout_ms), 1)

    def commit_read_timeout(self) -> float:
        """How long a commit's answers may take: ``WAIT`` holds its answer back for up to
        ``REDIS_WAIT_TIMEOUT_MS`` (twice when the node did not know the script), so a commit's
        connection waits that long on top of ``REDIS_SOCKET_TIMEOUT``. With one timeout for
        both, a replica slow to acknowledge made the read time out as ``WAIT`` answered, and
        a commit that Redis had run became one of unknown outcome."""
        return self.settings.redis_socket_timeout + 2 * self.wait_timeout_ms() / 1000

    def _options(self, socket_timeout: float | None = None) -> dict[str, Any]:
        return {
            "socket_connect_timeout": self.settings.redis_connect_timeout,
            "socket_timeout": (
                self.settings.redis_socket_timeout if socket_timeout is None else socket_timeout
            ),
            "retry": Retry(NoBackoff(), 0),
            "decode_responses": True,
            "health_check_interval": 0,
        }


class SingleTopology(Topology):
    """One Redis (maybe with replicas) at ``REDIS_URL``."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.name = _url_node(settings.redis_url)
        self._client = self._pooled(settings.redis_max_connections)
        # Commits wait for replicas (WAIT) on connections of their own, read more patiently.
        self._committing = self._pooled(
            settings.redis_max_connections, socket_timeout=self.commit_read_timeout()
        )
        self._link = CommitLink(self._client.connection_pool)  # eval_together's round trips
        self._committing_link = CommitLink(self._committing.connection_pool)
        self._replicas: tuple[float, int] | None = None  # (checked at, count)

    @property
    def client(self) -> Any:
        return self._client

    def node_of(self, key: str) -> str:
        return self.name

    def replicas_of(self, key: str) -> int:
        checked = self._replicas
        if checked is None or time.monotonic() - checked[0] > REPLICA_CHECK_SECONDS:
            info: Any = self._client.info("replication")
            checked = (time.monotonic(), int(info.get("connected_slaves", 0)))
            self._replicas = checked
        return checked[1]

    together = True
    cross_slot = True

    def eval_together(
        self, script: str, runs: Sequence[tuple[Sequence[str], Sequence[Any]]], *, replicas: int
    ) -> tuple[list[Any], int]:
        link = self._committing_link if replicas > 0 else self._link
        return _run_all(link.round_trip, script, runs, replicas, self.wait_timeout_ms())

    def dedicated(self, key: str, *, read_timeout: float, name: str) -> redis.Redis:
        return redis.Redis.from_url(
            self.settings.redis_url,
            single_connection_client=True,
            client_name=name,
            **self._options(read_timeout),
        )

    def tracking_client(self) -> redis.Redis | None:
        return self.dedicated(
            "", read_timeout=self.settings.redis_socket_timeout, name="referee-tracking"
        )

    def tracked_pool(self, on_connect: Callable[[Any], None]) -> redis.ConnectionPool | None:
        return redis.BlockingConnectionPool.from_url(
            self.settings.redis_url,
            max_connections=self.settings.redis_max_connections,
            timeout=self.settings.redis_pool_timeout,
            redis_connect_func=on_connect,
            **self._options(),
        )

    def _pooled(self, connections: int, socket_timeout: float | None = None) -> redis.Redis:
        pool = redis.BlockingConnectionPool.from_url(
            self.settings.redis_url,
            max_connections=connections,
            timeout=self.settings.redis_pool_timeout,
            **self._options(socket_timeout),
        )
        return redis.Redis(connection_pool=pool)


class ClusterTopology(Topology):
    """A Redis Cluster reached through ``REDIS_CLUSTER_NODES`` (list every node, replicas
    too: they are the fixed startup nodes that discovery asks)."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.name = "cluster"
        self._lock = threading.Lock()
        self._clients: dict[str, RedisCluster] = {}

    @property
    def client(self) -> RedisCluster:
        return self._built("client", self.settings.redis_max_connections)

    def node_of(self, key: str) -> str:
        node: ClusterNode = self.client.get_node_from_key(key)
        return str(node.name)

    def replicas_of(self, key: str) -> int:
        # The client's slot map lists the replicas that the cluster does not flag as failed.
        return 0 if self.client.get_node_from_key(key, replica=True) is None else 1

    def eval_and_wait(
        self, script: str, keys: Sequence[str], args: Sequence[Any], *, replicas: int
    ) -> tuple[Any, int]:
        # WAIT counts the writes of its own connection: both go to the node's own client.
        # A MOVED or ASK answer means the script did not run: the cluster client follows the
        # redirection (and learns the new slot map) for a read, then the commit goes again.
        for _ in range(3):
            client = self._built(
                "commit", self.settings.redis_max_connections, self.commit_read_timeout()
            )
            node = client.get_node_from_key(keys[0])
            answers, acknowledged = _run_all(
                partial(_pipelined, client.get_redis_connection(node)), script,
                [(keys, args)], replicas, self.wait_timeout_ms(),
            )  # fmt: skip
            answer = answers[0]
            if isinstance(answer, MovedError | AskError):
                client.exists(keys[0])
                continue
            if isinstance(answer, Exception):
                raise answer
            return answer, acknowledged
        raise MovedError(f"slot of {keys[0]} kept moving")

    def dedicated(self, key: str, *, read_timeout: float, name: str) -> redis.Redis:
        node = self.client.get_node_from_key(key)
        return redis.Redis(
            host=node.host,
            port=node.port,
            single_connection_client=True,
            client_name=name,
            **self._options(read_timeout),
        )

    def _built(
        self, role: str, connections: int, socket_timeout: float | None = None
    ) -> RedisCluster:
        client = self._clients.get(role)
        if client is None:
            with self._lock:
                client = self._clients.get(role)
                if client is None:
                    names = _node_names(self.settings.redis_cluster_nodes)
                    client = RedisCluster(
                        startup_nodes=[_cluster_node(name) for name in names],
                        dynamic_startup_nodes=False,
                        max_connections=connections,
                        **self._options(socket_timeout),
                    )
                    self._clients[role] = client
        return client


@lru_cache(maxsize=64)
def script_digest(script: str) -> str:
    """The SHA-1 by which Redis knows ``script`` (``EVALSHA``)."""
    return hashlib.sha1(script.encode("utf-8")).hexdigest()


class RoundTrip(Protocol):
    """Each of ``runs`` of a script (by ``digest``, or ``whole``), then ``WAIT replicas``
    when that is over 0, in one round trip (see :func:`_pipelined`)."""

    def __call__(
        self,
        script: str,
        digest: str,
        runs: Sequence[tuple[Sequence[str], Sequence[Any]]],
        replicas: int,
        timeout_ms: int,
        *,
        whole: bool = False,
    ) -> tuple[list[Any], int]: ...


def _run_all(
    round_trip: RoundTrip,
    script: str,
    runs: Sequence[tuple[Sequence[str], Sequence[Any]]],
    replicas: int,
    timeout_ms: int,
) -> tuple[list[Any], int]:
    """Each run of ``script`` by its digest (``EVALSHA``), then ``WAIT replicas`` when that is
    over 0, on one connection in one round trip; the runs the node refused for not knowing
    the script (nothing ran) go again whole (``EVAL``, which also caches it), with ``WAIT``
    again. Answers each run's answer (maybe an exception) and how many replicas acknowledged
    them all (-1 without ``WAIT``, 0 when it failed)."""
    digest = script_digest(script)
    answers, acknowledged = round_trip(script, digest, runs, replicas, timeout_ms)
    unknown = [at for at, answer in enumerate(answers) if isinstance(answer, NoScriptError)]
    if unknown:
        again, second = round_trip(
            script, digest, [runs[at] for at in unknown], replicas, timeout_ms, whole=True
        )
        for at, answer in zip(unknown, again, strict=True):
            answers[at] = answer
        acknowledged = min(acknowledged, second)
    return answers, acknowledged


def _pipelined(
    client: redis.Redis,
    script: str,
    digest: str,
    runs: Sequence[tuple[Sequence[str], Sequence[Any]]],
    replicas: int,
    timeout_ms: int,
    *,
    whole: bool = False,
) -> tuple[list[Any], int]:
    """``EVALSHA`` of each run (``whole``: ``EVAL``), then ``WAIT`` when ``replicas`` is over
    0, in one pipeline of ``client``; each run's answer (maybe an exception) and ``WAIT``'s
    (-1 without it, 0 when it failed)."""
    pipe = client.pipeline(transaction=False)
    for keys, args in runs:
        if whole:
            pipe.eval(script, len(keys), *keys, *args)
        else:
            pipe.evalsha(digest, len(keys), *keys, *args)
    if replicas > 0:
        pipe.execute_command("WAIT", replicas, timeout_ms)
    answers = pipe.execute(raise_on_error=False)
    if replicas <= 0:
        return answers, -1
    acknowledged = answers.pop()
    return answers, 0 if isinstance(acknowledged, Exception) else int(acknowledged)


def _node_names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _cluster_node(name: str) -> ClusterNode:
    host, _, port = name.rpartition(":")
    return ClusterNode(host or "127.0.0.1", int(port))


def _url_node(url: str) -> str:
    options = redis.connection.parse_url(url)
    if "path" in options:
        return str(options["path"])
    return f"{options.get('host', 'localhost')}:{options.get('port', 6379)}"
