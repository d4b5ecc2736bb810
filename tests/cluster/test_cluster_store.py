"""The store on a real Redis Cluster: the client connects and one match lives in one slot."""

from __future__ import annotations

import pytest
from redis.cluster import RedisCluster

from service.config import Settings
from service.store.connection import connect
from service.store.matches import MatchStore, VersionConflict
from tests.support.cluster import LocalCluster

pytestmark = pytest.mark.cluster


@pytest.fixture
def store(redis_cluster_nodes: str) -> MatchStore:
    return MatchStore(connect(Settings(redis_cluster_nodes=redis_cluster_nodes)))


def test_the_harness_forms_a_cluster_of_three_masters_covering_every_slot(
    redis_cluster: LocalCluster, redis_cluster_nodes: str
) -> None:
    assert redis_cluster_nodes.count(",") == 2
    for node in redis_cluster.node_clients():
        with node:
            info = node.execute_command("CLUSTER", "INFO")
            assert "cluster_state:ok" in info
            assert "cluster_slots_assigned:16384" in info
            assert "cluster_known_nodes:3" in info
            assert "cluster_size:3" in info


def test_an_app_starts_while_the_cluster_is_down_and_answers_503() -> None:
    from service.app import create_app

    app = create_app({"redis_cluster_nodes": "127.0.0.1:1"})
    response = app.test_client().get("/v1/matches/some-match")
    assert response.status_code == 503
    assert response.headers["Retry-After"]


def test_connect_builds_a_cluster_client_from_the_node_list(redis_cluster_nodes: str) -> None:
    client = connect(Settings(redis_cluster_nodes=redis_cluster_nodes))
    assert isinstance(client.client(), RedisCluster)
    assert client.ping()
    assert len(client.get_primaries()) == 3


def test_every_key_of_a_match_hashes_to_one_slot(store: MatchStore) -> None:
    keys = [
        store.state_key("abc"),
        store.events_key("abc"),
        store.idempotency_key("abc", 2, "retry-1"),
    ]
    assert len({store.redis.cluster_keyslot(key) for key in keys}) == 1


def test_matches_spread_over_the_masters(store: MatchStore) -> None:
    owners = {store.redis.get_node_from_key(store.state_key(f"match-{n}")).port for n in range(60)}
    assert len(owners) == 3


def test_the_commit_script_writes_state_events_and_idempotency_on_the_cluster(
    store: MatchStore,
) -> None:
    for n in range(12):  # matches on every master
        match_id = f"m{n}"
        store.commit(
            match_id,
            expected_version=None,
            version=1,
            state={"id": match_id, "racks": [["R7"]]},
            events=[(1, {"type": "match_created", "version": 1})],
        )
        store.commit(
            match_id,
            expected_version=1,
            version=2,
            state={"id": match_id, "racks": [[]]},
            events=[(2, {"type": "played", "version": 2})],
            idempotency=(store.idempotency_key(match_id, 0, "k1"), {"version": 2}),
        )
        loaded = store.load(match_id)
        assert loaded is not None
        assert (loaded.version, loaded.state["racks"]) == (2, [[]])
        assert [e["type"] for e in store.events(match_id)] == ["match_created", "played"]
        assert store.idempotent_answer(match_id, 0, "k1") == {"version": 2}


def test_a_commit_on_a_stale_version_is_refused_on_the_cluster(store: MatchStore) -> None:
    store.commit("x", expected_version=None, version=1, state={}, events=[])
    store.commit("x", expected_version=1, version=2, state={}, events=[])
    with pytest.raises(VersionConflict) as refused:
        store.commit("x", expected_version=1, version=2, state={"late": True}, events=[])
    assert refused.value.current == 2
    with pytest.raises(VersionConflict):
        store.commit("x", expected_version=None, version=1, state={}, events=[])


def test_the_shared_clock_and_the_deadline_index_work_on_the_cluster(store: MatchStore) -> None:
    now = store.now()
    store.schedule("late", now - 1)
    store.schedule("later", now + 60)
    assert store.due(now) == ["late"]
