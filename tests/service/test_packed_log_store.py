"""The store's event log reads the same, packed or not (``service/store/archive.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from service.config import Settings
from service.game import PlayerSpec, Setup
from service.referee import Referee
from service.rules import Rules, parse_tiles
from service.store import Keys, MatchStore

RACKS = [["R10", "R11", "R12", "K1"], ["B7", "B8", "B9", "O2"]]
POOL = ["R13", "O3", "O4", "O5", "O6", "O7", "O8", "O9"]


@pytest.fixture
def referee(redis_url: str) -> Referee:
    return Referee(MatchStore.open(Settings(redis_url=redis_url)))


def answers(store: MatchStore, match_id: str, last: int) -> dict[Any, Any]:
    """Every answer the log gives, for every starting point, page size and end."""
    seen: dict[Any, Any] = {"last": store.last_event(match_id)}
    for after in range(last + 2):
        for limit in (1, 2, 5, 100):
            seen["events", after, limit] = store.events(match_id, after=after, limit=limit)
        for upto in range(after, last + 2):
            seen["stored", after, upto] = store.stored_events(match_id, after=after, upto=upto)
    return seen


def test_packing_changes_no_answer_of_the_log_before_after_and_across_it(
    referee: Referee, redis_client: Any
) -> None:
    players = [PlayerSpec("Ann"), PlayerSpec("Bo")]
    created = referee.create(players, rules=Rules(turn_seconds=0), setup=Setup.parse(RACKS, POOL))
    match_id, (ann, bo) = created.match.id, created.tokens
    store, keys = referee.store, Keys(created.match.id)
    for _ in range(2):
        referee.draw(match_id, ann)
        referee.save_draft(match_id, bo, (parse_tiles(["B7", "B8", "B9"]),))
        referee.draw(match_id, bo)
    last = store.last_event(match_id)
    assert last is not None
    unpacked = answers(store, match_id, last.version)

    assert store.pack_log(match_id)
    assert redis_client.xlen(keys.events) == 0
    assert answers(store, match_id, last.version) == unpacked

    referee.draw(match_id, ann)  # the stream again, after what is packed
    referee.draw(match_id, bo)
    assert redis_client.xlen(keys.events) == 2
    both = answers(store, match_id, last.version + 2)
    assert both["events", 0, 100][: last.version] == unpacked["events", 0, 100]
    assert [e["version"] for e in both["events", 0, 100]] == list(range(1, last.version + 3))
    assert store.pack_log(match_id)
    assert answers(store, match_id, last.version + 2) == both

    followed = store.follow(match_id, after=1, wake=0.05)
    assert [e.version for e in next(followed)] == list(range(2, last.version + 3))
    assert next(followed) == []  # nothing new: a read that timed out
    followed.close()


def test_packing_twice_or_after_another_worker_writes_nothing_twice(
    referee: Referee, redis_url: str, redis_client: Any
) -> None:
    players = [PlayerSpec("Ann"), PlayerSpec("Bo")]
    created = referee.create(players, rules=Rules(turn_seconds=0), setup=Setup.parse(RACKS, POOL))
    match_id = created.match.id
    other = MatchStore.open(Settings(redis_url=redis_url))
    assert referee.store.pack_log(match_id)
    assert other.pack_log(match_id)  # nothing left in the stream: nothing to do
    events = referee.store.events(match_id)
    assert [e["version"] for e in events] == list(range(1, created.match.version + 1))
    assert redis_client.hget(Keys(match_id).state, "ap") == str(created.match.version)
