"""Two gunicorn instances sharing one Redis Cluster: matches played through both at once.

Every request of a match alternates between the instances, so each move is computed by one
process on the state the other one committed. Conflicting moves sent at the same moment
through both must apply exactly once, and no answer may show a tile its reader may not see.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.cluster.instances import Instance
from tests.support.cluster import LocalCluster
from tests.support.contract import validate_events

pytestmark = pytest.mark.cluster

TILE = re.compile(r"\b(?:J|[RBKO](?:1[0-3]|[1-9]))\b")

# Every tile code occurs once, so a code seen in an answer says where it came from.
RACKS = [
    ["R10", "R11", "R12", "B13", "K13", "O13"],
    ["B7", "B8", "B9", "O2"],
]
POOL = ["R13", "O3", "O4", "O5", "O6", "O7", "O8", "O9"]


@pytest.fixture(scope="module")
def instances(redis_cluster: LocalCluster) -> Iterator[tuple[Instance, Instance]]:
    """Two gunicorn instances on the session's cluster, in test mode."""
    env = {"REDIS_CLUSTER_NODES": redis_cluster.nodes, "REFEREE_TEST_MODE": "1"}
    with Instance(env=env) as first, Instance(env=env) as second:
        yield first, second


@pytest.fixture
def a_and_b(
    instances: tuple[Instance, Instance], redis_cluster_nodes: str
) -> tuple[Instance, Instance]:
    """The two instances, the cluster flushed before the test."""
    return instances


class Alternating:
    """Sends each request of one match to the next instance in turn, and keeps every answer."""

    def __init__(self, instances: tuple[Instance, Instance]) -> None:
        self.instances = instances
        self.turn = 0
        self.answers: list[tuple[str, int | None, Any]] = []  # (what, reader seat, body)

    def send(
        self, method: str, path: str, body: Any = None, *, seat: int | None = None, **kw: Any
    ) -> tuple[int, dict[str, str], Any]:
        instance = self.instances[self.turn % 2]
        self.turn += 1
        status, headers, data = instance.call(method, path, body, **kw)
        self.answers.append((f"{method} {path} via {instance.port}", seat, data))
        return status, headers, data


def create(client: Alternating, *, racks: list[list[str]] = RACKS) -> dict[str, Any]:
    body = {
        "players": [{"name": "Ann"}, {"name": "Bo"}],
        "rules": {"turn_seconds": 0},
        "setup": {"racks": racks, "pool": POOL, "first_seat": 0},
    }
    status, headers, created = client.send("POST", "/v1/matches", body)
    assert status == 201, created
    assert headers["etag"] == f'"{created["match"]["version"]}"'
    return dict(created)


def play_one_game(client: Alternating) -> dict[str, Any]:
    """A short game, each request through the other instance; return the last public view."""
    created = create(client)
    url = f"/v1/matches/{created['id']}"
    ann, bo = (seat["token"] for seat in created["seats"])

    draft = {"table": [["R10", "R11", "R12"]]}
    status, _, _ = client.send("PUT", url + "/draft", draft, token=ann, seat=0)
    assert status == 200
    status, _, view = client.send("GET", url)
    assert view["draft"] == [["R10", "R11", "R12"]], "the other instance shows the draft"

    status, _, moved = client.send("POST", url + "/draw", token=ann, seat=0)
    assert (status, moved["drawn"]) == (200, ["R13"])
    status, _, moved = client.send("POST", url + "/draw", token=bo, seat=1)
    assert (status, moved["drawn"]) == (200, ["O3"])

    status, headers, view = client.send("GET", url, token=ann, seat=0)
    assert sorted(view["rack"]) == sorted([*RACKS[0], "R13"])
    meld = {"table": [["R10", "R11", "R12"], ["B13", "K13", "O13"]]}
    status, _, moved = client.send(
        "POST", url + "/play", meld, token=ann, seat=0, headers={"If-Match": headers["etag"]}
    )
    assert status == 200, moved
    assert moved["match"]["table"] == meld["table"]

    status, _, _ = client.send(
        "POST", url + "/play", {"table": [*meld["table"], ["B7", "B8", "B9"]]}, token=bo, seat=1
    )
    assert status == 422, "24 points do not make an initial meld"
    status, _, moved = client.send("POST", url + "/draw", token=bo, seat=1)
    assert (status, moved["drawn"]) == (200, ["O4"])

    out = {"table": [["R10", "R11", "R12", "R13"], ["B13", "K13", "O13"]]}
    status, _, moved = client.send("POST", url + "/play", out, token=ann, seat=0)
    assert status == 200, moved
    status, _, final = client.send("GET", url)
    return dict(final)


def test_matches_played_through_both_instances_at_once_all_end_well(
    a_and_b: tuple[Instance, Instance],
) -> None:
    def one_match(index: int) -> dict[str, Any]:
        ordered = a_and_b if index % 2 == 0 else (a_and_b[1], a_and_b[0])
        return play_one_game(Alternating(ordered))

    with ThreadPoolExecutor(max_workers=8) as pool:
        finals = list(pool.map(one_match, range(8)))

    for final in finals:
        assert final["status"] in {"game_over", "finished"}
        assert [p["rack_count"] for p in final["players"]] == [0, 4 + 2]
        result = final["last_outcome"]
        assert result["winner"] == 0
        assert sum(result["scores"]) == 0
        assert result["scores"][0] == 7 + 8 + 9 + 2 + 3 + 4


def test_both_instances_serve_the_same_event_log_and_version(
    a_and_b: tuple[Instance, Instance],
) -> None:
    final = play_one_game(Alternating(a_and_b))
    url = f"/v1/matches/{final['id']}/events?limit=500"
    logs = [instance.call("GET", url)[2]["events"] for instance in a_and_b]
    assert logs[0] == logs[1]
    validate_events({"events": logs[0]})  # each event against its schema in openapi.yaml
    assert [e["version"] for e in logs[0]] == list(range(1, final["version"] + 1))
    etags = {instance.call("GET", f"/v1/matches/{final['id']}")[1]["etag"] for instance in a_and_b}
    assert etags == {f'"{final["version"]}"'}


@pytest.mark.parametrize("with_if_match", [True, False])
def test_conflicting_moves_through_both_instances_apply_exactly_once(
    a_and_b: tuple[Instance, Instance], with_if_match: bool
) -> None:
    racks = [[*RACKS[0], "K1"], RACKS[1]]  # K1 stays: no move ends the game
    created = create(Alternating(a_and_b), racks=racks)
    url = f"/v1/matches/{created['id']}"
    ann = created["seats"][0]["token"]
    version = created["match"]["version"]
    moves = [
        ("POST", "/draw", None),
        ("POST", "/play", {"table": [["R10", "R11", "R12"], ["B13", "K13", "O13"]]}),
        ("POST", "/play", {"table": [["B13", "K13", "O13"]]}),
        ("POST", "/play", {"table": [["R10", "R11", "R12", "R13"]]}),  # R13 is not Ann's
    ]
    start = threading.Barrier(32)

    def attempt(n: int) -> int:
        method, action, body = moves[n % len(moves)]
        instance = a_and_b[n % 2]
        headers = {"If-Match": f'"{version}"'} if with_if_match else {}
        start.wait()
        return instance.call(method, url + action, body, token=ann, headers=headers)[0]

    with ThreadPoolExecutor(max_workers=32) as pool:
        codes = Counter(pool.map(attempt, range(32)))

    assert codes[200] == 1, codes
    assert set(codes) <= {200, 409, 412, 422}, codes
    view = a_and_b[0].call("GET", url)[2]
    events = a_and_b[1].call("GET", url + f"/events?after={version}")[2]["events"]
    assert view["version"] == version + 1, events
    assert [(e["type"], e["seat"]) for e in events] in ([("drew", 0)], [("played", 0)])
    assert view["current_seat"] == 1
    held = [a_and_b[1].call("GET", url, token=s["token"])[2]["rack"] for s in created["seats"]]
    on_table = [tile for tiles in view["table"] for tile in tiles]
    everything = Counter([*held[0], *held[1], *on_table])
    assert sum(everything.values()) + view["pool_count"] == sum(map(len, racks)) + len(POOL)
    assert everything <= Counter([*racks[0], *racks[1], *POOL])


def test_no_answer_shows_another_seats_rack_or_the_pool(
    a_and_b: tuple[Instance, Instance],
) -> None:
    client = Alternating(a_and_b)
    final = play_one_game(client)
    url = f"/v1/matches/{final['id']}"
    deals_seen = 0
    for instance in a_and_b:
        for path in (url, url + "/events?limit=500"):
            body = instance.call("GET", path)[2]
            # Once the game is over its deal is public (SPEC section 5, docs/RULINGS.md): the
            # game_over event carries it, exactly as dealt, and nothing else may show it.
            for event in body.get("events", []):
                if event["type"] == "game_over":
                    revealed = event["data"].pop("deal")
                    assert revealed == {"racks": RACKS, "pool": POOL}
                    deals_seen += 1
            client.answers.append((f"GET {path}", None, body))
    assert deals_seen == len(a_and_b), "each instance's log shows the ended game's deal"

    read_by_bo = [json.dumps(body) for _, reader, body in client.answers if reader == 1]
    assert any("O3" in text for text in read_by_bo), "the scan sees what a seat may see"
    drawn = {0: {"R13"}, 1: {"O3", "O4"}}
    never_public = set(POOL) - {"R13", "O3", "O4"}  # never drawn: the rest of the pool
    table_now = {tile for tiles in final["table"] for tile in tiles}
    for what, reader, body in client.answers:
        seen = set(TILE.findall(json.dumps(body)))
        assert not seen & never_public, f"{what} shows pool tiles {seen & never_public}"
        for seat, rack in enumerate(RACKS):
            if seat == reader:
                continue
            private = (set(rack) | drawn[seat]) - table_now - {"R10", "R11", "R12"}
            assert not seen & private, (
                f"{what} (read by {reader}) shows seat {seat}'s {seen & private}"
            )
