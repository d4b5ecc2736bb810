"""The store on a real Redis Cluster: the client connects and one match lives in one slot."""

from __future__ import annotations

import time

import pytest
import redis
from redis.cluster import RedisCluster

from service.config import Settings
from service.game import PlayerSpec
from service.referee import Referee
from service.rules import Rules
from service.store import Change, Keys, MatchStore, Stale, StoreUnavailable, open_topology
from tests.support.cluster import LocalCluster
from tests.support.following import cut_while_following

pytestmark = pytest.mark.cluster


@pytest.fixture
def store(redis_cluster_nodes: str) -> MatchStore:
    return MatchStore.open(Settings(redis_cluster_nodes=redis_cluster_nodes))


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


def test_the_factory_builds_a_cluster_client_from_the_node_list(redis_cluster_nodes: str) -> None:
    topology = open_topology(Settings(redis_cluster_nodes=redis_cluster_nodes))
    assert isinstance(topology.client, RedisCluster)
    assert topology.client.ping()
    assert len(topology.client.get_primaries()) == 3


def test_every_key_of_a_match_hashes_to_one_slot_with_its_deadline_index(
    store: MatchStore,
) -> None:
    keys = Keys("abc")
    names = [keys.state, keys.events, keys.deadlines, keys.receipts(2)]
    assert len({store.topology.client.keyslot(name) for name in names}) == 1


def test_matches_spread_over_the_masters(store: MatchStore) -> None:
    owners = {store.topology.node_of(Keys(f"match-{n}").state) for n in range(60)}
    assert len(owners) == 3


def referee_on(store: MatchStore) -> Referee:
    return Referee(store)


def test_matches_are_created_moved_and_read_back_on_every_master(store: MatchStore) -> None:
    referee = referee_on(store)
    players = [PlayerSpec("Ann"), PlayerSpec("Bo")]
    owners = set()
    for _ in range(30):  # on every master but once in 100,000 draws
        created = referee.create(players, rules=Rules())
        match_id = created.match.id
        owners.add(store.topology.node_of(Keys(match_id).state))
        moved = referee.draw(match_id, created.tokens[created.match.current_seat])
        assert moved.version == created.match.version + 1
        loaded = store.load(match_id)
        assert loaded is not None and loaded.match.version == moved.version
        events = store.events(match_id, after=0, limit=500)
        assert [e["version"] for e in events] == list(range(1, moved.version + 1))
        assert events[-1]["type"] == "drew"
    assert len(owners) == 3


def test_a_log_is_packed_and_read_back_whole_on_every_master(store: MatchStore) -> None:
    referee = referee_on(store)
    owners = set()
    for _ in range(30):
        created = referee.create([PlayerSpec("Ann"), PlayerSpec("Bo")], rules=Rules())
        match_id = created.match.id
        owners.add(store.topology.node_of(Keys(match_id).state))
        referee.draw(match_id, created.tokens[created.match.current_seat])
        before = store.events(match_id, after=0, limit=500)
        assert store.pack_log(match_id, seats=2)
        assert store.events(match_id, after=0, limit=500) == before
        assert store.stored_events(match_id, after=1, limit=2)[0].version == 2
        last = store.last_event(match_id)
        assert last is not None and last.version == before[-1]["version"]
    assert len(owners) == 3


def test_a_commit_on_a_stale_version_is_refused_on_the_cluster(store: MatchStore) -> None:
    referee = referee_on(store)
    created = referee.create([PlayerSpec("Ann"), PlayerSpec("Bo")], rules=Rules())
    seat = created.match.current_seat
    referee.draw(created.match.id, created.tokens[seat])
    stale = Change(created.match.version, created.match, ("x",), (), store.now(created.match.id))
    with pytest.raises(Stale) as refused:
        store.commit(stale)
    assert refused.value.fresh is not None
    assert refused.value.fresh.match.version == created.match.version + 1


def test_deadlines_are_found_on_every_shard_of_the_cluster(store: MatchStore) -> None:
    referee = referee_on(store)
    players = [PlayerSpec("Ann"), PlayerSpec("Bo")]
    ids = {referee.create(players, rules=Rules(turn_seconds=1)).match.id for _ in range(30)}
    assert len({store.topology.node_of(Keys(match_id).deadlines) for match_id in ids}) == 3
    time.sleep(1.3)
    assert ids <= set(store.due(limit=100))


def test_a_follower_whose_connection_is_lost_ends_at_once_and_does_not_retry(
    store: MatchStore,
) -> None:
    """A stream resumes with Last-Event-ID: its reader must not sit out redis-py's default
    retries (random waits of up to 2, 4 and 8 s, on the same address even after a failover
    moved the slot: tests/cluster/test_failover.py saw a stream outlive its master)."""
    referee = Referee(store)
    created = referee.create([PlayerSpec("Ann"), PlayerSpec("Bo")], rules=Rules()).match
    node = store.topology.client.get_node_from_key(Keys(created.id).events)
    with redis.Redis(host=node.host, port=node.port, decode_responses=True) as client:
        outcome = cut_while_following(store, client, created.id, created.version)
    assert isinstance(outcome, StoreUnavailable), outcome
