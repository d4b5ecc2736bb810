"""Webhooks and the app feed on a real Redis Cluster: each shard's outbox lives with its
matches, on whichever master holds them; the dispatcher reads every shard, the feed merges them."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from service.app import create_app
from service.config import Settings
from service.dispatcher import Dispatcher
from service.store import Keys, MatchStore
from service.store.notify import Notifications
from tests.api.test_stream import Reader
from tests.support.receiver import receiver

pytestmark = pytest.mark.cluster
KEY = "cluster-app-key-" + "c" * 20


@pytest.fixture
def app(redis_cluster_nodes: str) -> Iterator[Flask]:
    yield create_app(
        {
            "redis_cluster_nodes": redis_cluster_nodes,
            "test_mode": True,
            "api_keys": f"mobile={KEY}",
            "stream_keepalive_seconds": 0.2,
        }
    )


@pytest.fixture
def dispatcher(redis_cluster_nodes: str) -> Iterator[Dispatcher]:
    settings = Settings(
        redis_cluster_nodes=redis_cluster_nodes, test_mode=True, api_keys=f"mobile={KEY}"
    )
    running = Dispatcher(Notifications(MatchStore.open(settings).topology), settings)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    try:
        yield running
    finally:
        running.stop()
        thread.join(15)


def test_turns_reach_the_webhook_and_the_feed_from_every_master(app: Flask, dispatcher) -> None:
    client = app.test_client()
    headers = {"X-API-Key": KEY}
    with receiver() as hook:
        made = client.post("/v1/webhooks", json={"url": hook.url}, headers=headers)
        assert made.status_code == 201
        ids = []
        for _ in range(12):
            body = {"players": [{"name": "A", "ref": "a"}, {"name": "B", "ref": "b"}]}
            created = client.post("/v1/matches", json=body, headers=headers)
            assert created.status_code == 201
            ids.append(created.get_json()["id"])
        store: MatchStore = app.extensions["store"]
        masters = {store.topology.node_of(Keys(match_id).state) for match_id in ids}
        assert len(masters) >= 2  # the matches (and their outboxes) live on several masters
        got = hook.wait_for(12, timeout=60)
        assert sorted(r.json["data"]["match_id"] for r in got) == sorted(ids)
    feed = client.get("/v1/feed", headers={**headers, "Last-Event-ID": "0"}, buffered=False)
    reader = Reader(feed)
    found: list[dict[str, Any]] = []
    while len(found) < 12:
        message = reader.message()
        if "data" in message:
            found.append(json.loads(message["data"]))
    feed.close()
    assert sorted(m["data"]["match_id"] for m in found) == sorted(ids)
