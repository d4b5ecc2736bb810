"""Fixtures for tests that need a real Redis Cluster (three masters, started by the suite).

- `redis_cluster` (session): a :class:`tests.support.cluster.LocalCluster`; its `.nodes` is the
  ``host:port,host:port,host:port`` string that ``REDIS_CLUSTER_NODES`` takes.
- `redis_cluster_nodes` (function): that string, with every node flushed before the test.

Every test module in this folder is marked `cluster` (deselect them with ``-m 'not cluster'``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.cluster import LocalCluster
from tests.support.redis_process import RedisNotFound


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A three-master Redis Cluster for the whole session; stopped at the end."""
    try:
        cluster = LocalCluster(data_dir=tmp_path_factory.mktemp("redis-cluster"))
    except RedisNotFound as error:
        pytest.fail(str(error), pytrace=False)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.cleanup()


@pytest.fixture
def redis_cluster_nodes(redis_cluster: LocalCluster) -> str:
    """The cluster's startup nodes (``REDIS_CLUSTER_NODES``), every node flushed first."""
    if not redis_cluster.running:
        pytest.fail(f"a cluster node died; the logs:\n{redis_cluster.log_tail()}")
    redis_cluster.flushall()
    return redis_cluster.nodes
