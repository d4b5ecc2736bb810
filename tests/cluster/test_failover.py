"""A master of a Redis Cluster with replicas killed (-9) under load: no move lost or doubled.

A real cluster of three masters with a replica each (six redis-server processes, started
here, loopback only), a real gunicorn, clients playing many matches at once (some with an
``Idempotency-Key``, some without), an event stream and long-polls open; then one master is
killed with SIGKILL. Checked:

- nothing but 503 with ``Retry-After`` is answered while the cluster fails over (and 409 to a
  client that finds its turn taken by its own earlier move);
- service resumes by itself within the cluster's node timeout plus a few seconds;
- every acknowledged move is in the event log, once; the version chains have no gaps; no event
  comes from a request that was refused, and none is doubled (an event no client was told of
  can only be a move sent without a key and answered 503, one each);
- each move whose answer was a 503 and that carried a key, resent with it, is applied once;
- the event stream of a match on the killed master, resumed with ``Last-Event-ID``, misses
  nothing; long-polls answer 200 or 503, never hang.
"""

from __future__ import annotations

import contextlib
import http.client
import threading
import time
from collections import Counter
from collections.abc import Iterator

import pytest

from service.bootstrap import bootstrap
from service.game import PlayerSpec
from service.rules import Rules
from service.store import Keys, StoreError
from service.sweeper import Sweeper
from tests.cluster.instances import Instance
from tests.faults.consistency import History, MoveLoad, Seat, check_stored_match, create_match
from tests.support.cluster import LocalCluster
from tests.support.sockets import SAFETY, wait_for

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

NODE_TIMEOUT_MS = 2000
MATCHES = 18


@pytest.fixture(scope="module")
def replicated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """Three masters with a replica each; this module kills one of them."""
    cluster = LocalCluster(
        replicas=1,
        node_timeout_ms=NODE_TIMEOUT_MS,
        data_dir=tmp_path_factory.mktemp("replicated-cluster"),
    )
    cluster.start(timeout=60)
    try:
        yield cluster
    finally:
        cluster.cleanup()


@pytest.fixture(scope="module")
def web(replicated: LocalCluster) -> Iterator[Instance]:
    env = {"REDIS_CLUSTER_NODES": replicated.nodes, "REFEREE_TEST_MODE": "1"}
    with Instance(env=env, workers=2, threads=16) as instance:
        yield instance


class Stream:
    """Reads one match's event stream on a thread of its own, reconnecting with
    ``Last-Event-ID`` whenever the stream ends or breaks, as EventSource does."""

    def __init__(self, web: Instance, match_id: str) -> None:
        self.web, self.match_id = web, match_id
        self.versions: list[int] = []
        self.connections = 0
        self.heard_when_opened: list[int] = []  # how many events it had at each connection
        self.statuses: Counter[int] = Counter()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Stream:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(15)

    def _run(self) -> None:
        while not self.stopping.is_set():
            headers = {}
            if self.versions:
                headers["Last-Event-ID"] = str(self.versions[-1])
            connection = http.client.HTTPConnection("127.0.0.1", self.web.port, timeout=30)
            try:
                connection.request("GET", f"/v1/matches/{self.match_id}/stream", headers=headers)
                response = connection.getresponse()
                self.statuses[response.status] += 1
                if response.status != 200:
                    response.read()
                    time.sleep(0.2)
                    continue
                self.heard_when_opened.append(len(self.versions))
                self.connections += 1
                while not self.stopping.is_set():
                    line = response.readline()
                    if not line:
                        break
                    if line.startswith(b"id: "):
                        self.versions.append(int(line[4:]))
            except (OSError, http.client.HTTPException):
                time.sleep(0.2)
            finally:
                connection.close()


def new_matches(web: Instance, count: int) -> list[list[Seat]]:
    matches = []
    for number in range(count):
        _, seats = create_match(web, [{"name": "Ann"}, {"name": "Bo"}], seed=100 + number)
        matches.append(seats)
    return matches


def owner_port(cluster: LocalCluster, match_id: str) -> int:
    client = cluster.client()
    try:
        return int(client.get_node_from_key(Keys(match_id).state).port)
    finally:
        client.close()


def long_poll(web: Instance, seat: Seat, version: int) -> int:
    path = f"{seat.path()}?wait_version={version}&timeout=2"
    return web.request("GET", path, token=seat.token, timeout=15).status


def test_a_master_killed_under_load_loses_and_doubles_nothing(
    replicated: LocalCluster, web: Instance
) -> None:
    matches = new_matches(web, MATCHES)
    owners = {seats[0].match_id: owner_port(replicated, seats[0].match_id) for seats in matches}
    victim_port = Counter(owners.values()).most_common(1)[0][0]
    victim = replicated.master_of(victim_port)
    on_victim = [seats for seats in matches if owners[seats[0].match_id] == victim_port]
    elsewhere = [seats for seats in matches if owners[seats[0].match_id] != victim_port]
    assert on_victim and elsewhere

    history = History()
    load = MoveLoad(web, matches, history, keyed=lambda number: number % 3 != 0).start()
    stream = Stream(web, on_victim[0][0].match_id).start()
    polls: Counter[int] = Counter()
    try:
        wait_for(
            lambda: len(history.acks) > 20, f"too little load before the kill: {load.statuses}"
        )
        # The stream is open and hearing events before its node goes (a stream that first
        # connected after the failover proved nothing about following one).
        wait_for(lambda: stream.versions, f"the stream heard nothing: {dict(stream.statuses)}")
        before_kill = len(history.acks)
        victim.kill()
        killed = time.monotonic()
        # Meanwhile long-polls on both sides answer, never hang.
        for seats in (on_victim[0], elsewhere[0]):
            reply = seats[0].view(timeout=15)
            version = reply.body["version"] if reply.status == 200 else 0
            polls[long_poll(web, seats[0], version)] += 1
        recovered = wait_until_a_move_succeeds(on_victim[0], deadline=killed + SAFETY)
        served = len(history.acks)  # the load goes on after the failover
        wait_for(lambda: len(history.acks) > served + 10, "no move acknowledged after")
        # The stream broke with its master and must come back (EventSource's reconnect) and
        # hear the moves made since: awaited, as ten moves served on other matches can come
        # before its next try does.
        wait_for(
            lambda: stream.connections >= 2 and len(stream.versions) > stream.heard_when_opened[1],
            f"the stream did not resume across the failover: {dict(stream.statuses)}",
        )
    finally:
        load.stop()
        stream.stop()
    took = recovered - killed
    print(
        f"killed :{victim_port} ({len(on_victim)} of {MATCHES} matches); served again after "
        f"{took:.1f} s; statuses {dict(load.statuses)}; acknowledged {len(history.acks)} "
        f"({before_kill} before the kill); long-polls {dict(polls)}; stream "
        f"{stream.connections} connections {dict(stream.statuses)}"
    )
    assert before_kill > 20, f"too little load before the kill: {load.statuses}"
    assert load.statuses["503"] > 0, f"no request saw the failover: {load.statuses}"
    answered = {outcome for outcome in load.statuses if outcome.isdigit()}
    assert answered <= {"200", "409", "503"}, load.statuses
    assert load.without_retry_after == 0, "a 503 without Retry-After"
    assert set(polls) <= {200, 304, 503}, polls

    settled = load.settle_unknown()  # resend each keyed move of unknown outcome
    print(f"resent with their keys: {settled}; unknown without a key: {len(load.unkeyed_unknown)}")
    client = replicated.client()
    try:
        for seats in matches:
            match_id = seats[0].match_id
            _, events = check_stored_match(client, match_id)
            created = max(e["version"] for e in events if e["type"] == "game_started")
            unknown = [
                (sent.seat.seat, sent.move)
                for sent in load.unkeyed_unknown
                if sent.seat.match_id == match_id
            ]
            history.check(match_id, events, created_version=created, unknown=unknown)
        followed = on_victim[0][0].match_id
        _, events = check_stored_match(client, followed)
    finally:
        client.close()
    # It ended as its node went (not after redis-py's hidden retries), and while the slot
    # had no master yet its client was told to come back later.
    assert stream.statuses[503] > 0, f"the stream outlived its node: {dict(stream.statuses)}"
    seen = stream.versions
    assert seen == sorted(set(seen)), f"the stream repeated or reordered events: {seen}"
    assert seen == list(range(seen[0], seen[0] + len(seen))), f"the stream missed events: {seen}"
    assert seen[-1] <= events[-1]["version"]


def wait_until_a_move_succeeds(seats: list[Seat], *, deadline: float) -> float:
    """Poll the match (on the killed master) until a read answers 200; return when."""
    while time.monotonic() < deadline:
        reply = seats[0].view(timeout=10)
        if reply.status == 200:
            return time.monotonic()
        assert reply.status == 503, reply
        time.sleep(0.1)
    raise AssertionError("the matches of the killed master were not served again")


def test_after_the_failover_every_match_is_served_and_streams_follow(
    replicated: LocalCluster, web: Instance
) -> None:
    """(Runs after the kill:) new matches land on every master, old ones are read back,
    and a stream on the new master gets a move as it happens."""
    matches = new_matches(web, 24)  # on every master but once in 10,000 draws
    owners = {owner_port(replicated, seats[0].match_id) for seats in matches}
    assert len(owners) == 3
    waited = {
        server.port: int(
            server.client().info("commandstats").get("cmdstat_wait", {}).get("calls", 0)
        )
        for server in replicated.servers
        if server.running
    }
    assert sum(waited.values()) > 0, "no commit waited for a replica"
    seats = matches[0]
    stream = Stream(web, seats[0].match_id).start()
    try:
        view = seats[0].view().body
        turn = seats[view["current_seat"]]
        wait_for(lambda: stream.connections >= 1, "the stream never opened")
        assert turn.move("draw").status == 200
        wait_for(lambda: view["version"] + 1 in stream.versions, "the move never came")
    finally:
        stream.stop()
    assert stream.versions[-1] == view["version"] + 1, stream.versions
    assert set(stream.statuses) == {200}, stream.statuses


def test_a_dead_master_stops_no_timer_of_the_matches_on_the_others(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Three masters, no replica, and a cluster that serves the slots it still has: with one
    master dead for good, the sweeper still times out the turns of the matches elsewhere."""
    cluster = LocalCluster(
        node_timeout_ms=NODE_TIMEOUT_MS,
        data_dir=tmp_path_factory.mktemp("no-replica-cluster"),
        extra_args=("--cluster-require-full-coverage", "no"),
    )
    cluster.start(timeout=60)
    try:
        services = bootstrap({"redis_cluster_nodes": cluster.nodes})
        referee, store = services.referee, services.store
        players = [PlayerSpec("Ann"), PlayerSpec("Bo")]
        ids = [referee.create(players, rules=Rules(turn_seconds=1)).match.id for _ in range(15)]
        owners = {match_id: store.topology.node_of(Keys(match_id).state) for match_id in ids}
        victim = Counter(owners.values()).most_common(1)[0][0]
        cluster.master_of(int(victim.rpartition(":")[2])).kill()
        survivors = [match_id for match_id in ids if owners[match_id] != victim]
        assert survivors
        time.sleep(1.5)  # every turn has run out
        sweeper = Sweeper(referee)
        deadline = time.monotonic() + SAFETY
        settled: set[str] = set()
        while time.monotonic() < deadline and not set(survivors) <= settled:
            with contextlib.suppress(StoreError):
                sweeper.sweep_once()
            for match_id in set(survivors) - settled:
                with contextlib.suppress(StoreError):
                    events = store.events(match_id, after=0, limit=100)
                    if "turn_timed_out" in [e["type"] for e in events]:
                        settled.add(match_id)
            time.sleep(0.2)
        assert settled == set(survivors), f"timers stopped: {set(survivors) - settled}"
    finally:
        cluster.cleanup()
