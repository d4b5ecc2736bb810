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


def test_a_follower_between_two_reads_gets_the_events_the_game_end_packed_meanwhile(
    referee: Referee,
) -> None:
    # The move that ends a game packs the log at once (the stream's entries move into the
    # state hash). A follower that was not blocked in its read just then (between two reads:
    # a busy worker) must still get those events, and end with the match: a browser that
    # follows the match otherwise waits forever for its end (the rematch browser test's flake).
    created = referee.create(
        [PlayerSpec("Ann"), PlayerSpec("Bo")],
        rules=Rules(turn_seconds=0, target_score=1),
        setup=Setup.parse([["K10", "K11", "K12"], ["O1", "O2", "B6"]], ["R1"]),
    )
    match_id, (ann, _) = created.match.id, created.tokens
    followed = referee.store.follow(match_id, after=created.match.version, wake=0.05)
    assert next(followed) == []  # the read timed out; the next one is not sent yet
    played = referee.play(match_id, ann, (parse_tiles(["K10", "K11", "K12"]),))
    assert played.view["status"] == "finished"
    assert referee.store.events(match_id, after=created.match.version)  # packed, not lost
    got: list[Any] = []
    for _ in range(5):
        got += next(followed, None) or []
        if got and got[-1].type.value == "match_finished":
            break
    assert [e.version for e in got] == list(range(created.match.version + 1, played.version + 1))
    assert next(followed, None) is None  # the match is finished: the follower ends


def test_a_follower_between_two_reads_misses_nothing_when_the_next_game_began_meanwhile(
    referee: Referee,
) -> None:
    # Between two reads of a follower: a game ends (its events are packed) and the next one
    # begins (its first events are in the stream again). The follower gets them all, in order.
    created = referee.create(
        [PlayerSpec("Ann"), PlayerSpec("Bo")],
        rules=Rules(turn_seconds=0),
        setup=Setup.parse([["K10", "K11", "K12"], ["O1", "O2", "B6"]], POOL),
    )
    match_id, (ann, _) = created.match.id, created.tokens
    followed = referee.store.follow(match_id, after=created.match.version, wake=0.05)
    assert next(followed) == []
    over = referee.play(match_id, ann, (parse_tiles(["K10", "K11", "K12"]),))
    assert over.view["status"] == "game_over"
    again = referee.next_game(match_id, ann)
    assert again.view["status"] == "playing" and again.version > over.version
    got: list[Any] = []
    for _ in range(5):
        got += next(followed, None) or []
        if got and got[-1].version == again.version:
            break
    assert [e.version for e in got] == list(range(created.match.version + 1, again.version + 1))
    followed.close()
