"""Many clients at once on one match: exactly one move applies, no update is lost."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from service.rules import parse_tiles
from tests.api.matchclient import Seat, setup, stored_tiles


@pytest.fixture
def app_overrides() -> dict:
    return {"test_mode": True}


def race(app, requests: list) -> list[int]:
    """Run ``requests`` (callables taking a client) at the same moment; return statuses."""
    barrier = threading.Barrier(len(requests))
    statuses: list[int] = [0] * len(requests)

    def worker(index: int) -> None:
        client = app.test_client()
        barrier.wait()
        statuses[index] = requests[index](client).status_code

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(requests))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return statuses


def test_conflicting_moves_from_many_clients_apply_exactly_once(app, client, redis_client) -> None:
    racks = ["R10 B10 K10 R11 B11 K11 O1", "K1 K2 K3"]
    pool = " ".join(f"O{n}" for n in range(2, 12))
    created, (ann, bo) = setup(client, racks, pool=pool)
    dealt = Counter(parse_tiles(" ".join([*racks, pool]).split()))
    version = created["match"]["version"]
    etag = {"If-Match": f'"{version}"'}

    def as_ann(c, action, *args, **headers):
        seat = Seat(c, created["id"], 0, ann.token)
        return getattr(seat, action)(*args, **headers)

    moves = []
    for i in range(24):
        if i % 3 == 0:
            moves.append(lambda c: as_ann(c, "draw"))
        elif i % 3 == 1:
            moves.append(lambda c: as_ann(c, "play", "R10 B10 K10", **etag))
        else:
            moves.append(lambda c: as_ann(c, "play", "R11 B11 K11"))
    statuses = race(app, moves)
    assert statuses.count(200) == 1, statuses
    assert set(statuses) <= {200, 409, 412}, statuses
    assert bo.view().get_json()["current_seat"] == 1
    assert stored_tiles(redis_client, created["id"]) == dealt


def test_concurrent_drafts_and_reads_never_lose_a_version(app, client) -> None:
    created, (ann, _bo) = setup(
        client, ["R1 R2 R3 R4", "K1"], pool="O2", table=["B1 B2 B3"], melded=[True, True]
    )
    drafts = ["B1 B2 B3 R1", "B1 B2 B3", "B1 B2 B3 | R2 R3 R4"]

    def draft(text):
        return lambda c: Seat(c, created["id"], 0, ann.token).draft(*text.split(" | "))

    statuses = race(
        app,
        [draft(drafts[i % 3]) for i in range(18)]
        + [(lambda c: c.get(f"/v1/matches/{created['id']}")) for _ in range(6)],
    )
    assert set(statuses) == {200}
    events = client.get(f"/v1/matches/{created['id']}/events?limit=500").get_json()["events"]
    assert [e["version"] for e in events] == list(range(1, len(events) + 1))
    assert sum(e["type"] == "draft_updated" for e in events) == 18
