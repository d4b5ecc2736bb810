"""Rate limits counted in a Redis Cluster (flask-limiter's redis+cluster:// storage)."""

from __future__ import annotations

import pytest

from service.app import create_app
from tests.support.cluster import LocalCluster

pytestmark = pytest.mark.cluster

MELD = {"sets": [["R11", "J", "R13"]]}


def test_two_instances_share_their_counters_in_the_cluster(
    redis_cluster: LocalCluster, redis_cluster_nodes: str
) -> None:
    settings = {"redis_cluster_nodes": redis_cluster_nodes, "rate_limit": "3/minute"}
    first = create_app(settings).test_client()
    second = create_app(settings).test_client()
    codes = [c.post("/v1/meld-check", json=MELD).status_code for c in (first, second, first)]
    assert codes == [200, 200, 200]
    refused = second.post("/v1/meld-check", json=MELD)
    assert refused.status_code == 429
    assert refused.content_type == "application/problem+json"
    assert int(refused.headers["Retry-After"]) >= 1
    assert redis_cluster.client().keys("referee-limits*", target_nodes="all")
