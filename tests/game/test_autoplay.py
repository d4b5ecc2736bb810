"""advance(): deadlines, bot turns and proven stalemates, with no client involved."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from service.game import Autoplay, PlayerSpec, Status, advance, draw
from service.rules import Rules, check_turn
from tests.game.support import NOW, rack, set_up, types


def with_bots(match, *seats: int):
    players = tuple(
        replace(p, bot=True) if seat in seats else p for seat, p in enumerate(match.players)
    )
    return replace(match, players=players)


def test_nothing_owed_means_no_events() -> None:
    match = set_up(["R1", "K7"], pool="O1", rules=Rules(turn_seconds=60))
    assert advance(match, now=NOW + 10).events == ()


def test_a_bot_plays_the_solvers_best_play_the_moment_its_turn_starts() -> None:
    match = with_bots(set_up(["R1 B2", "K10 K11 K12 O1"], pool="O5 O6"), 1)
    after = draw(match, 0, now=NOW + 5).match
    moved = advance(after, now=NOW + 5, moved=True)
    assert types(moved) == ["played"]
    assert [[t.code for t in s] for s in moved.match.table] == [["K10", "K11", "K12"]]
    assert rack(moved.match, 1) == "O1"
    assert moved.events[0].at == NOW + 5


def test_a_bot_that_cannot_play_draws_and_one_with_an_empty_pool_passes() -> None:
    match = with_bots(set_up(["R1 B2", "K1 O9"], pool="O5"), 0)
    drew = advance(match, now=NOW, moved=True)
    assert types(drew)[0] == "drew"


def test_a_bot_turn_after_an_expired_human_turn_happens_at_that_deadline() -> None:
    match = with_bots(
        set_up(["R1 B2", "K1 O9"], pool="O5 O6 O7 O8 O10", rules=Rules(turn_seconds=10)), 1
    )
    moved = advance(match, now=NOW + 25)
    kinds = [(e.type, e.seat, e.at - NOW) for e in moved.events]
    assert kinds[:3] == [("turn_timed_out", 0, 10), ("drew", 0, 10), ("drew", 1, 10)]
    assert kinds[3:] == [("turn_timed_out", 0, 20), ("drew", 0, 20), ("drew", 1, 20)]


def test_with_an_empty_pool_a_proven_stalemate_ends_the_game_at_once() -> None:
    match = set_up(["R1 R5", "K7 K9"])
    ended = advance(match, now=NOW, moved=True)
    assert types(ended) == ["game_over"]
    assert ended.match.status is not Status.PLAYING
    assert ended.match.outcomes[-1].outcome.scores == (10, -10)


def test_no_stalemate_while_someone_can_still_play() -> None:
    match = set_up(["R1 R5", "K10 K11 K12 B1"])
    assert advance(match, now=NOW, moved=True).events == ()


@pytest.mark.parametrize("count", [2, 3, 4])
def test_a_match_of_bots_plays_a_whole_game_in_one_step(count: int) -> None:
    import random

    from service.game import new_match

    created = new_match(
        "m",
        [PlayerSpec(f"B{i}", bot=True) for i in range(count)],
        rules=Rules(turn_seconds=0),
        rng=random.Random(count),
        now=NOW,
    ).match
    done = advance(created, now=NOW, moved=True).match
    assert done.status is not Status.PLAYING
    assert sum(done.outcomes[-1].outcome.scores) == 0


def test_a_bot_whose_best_play_runs_out_of_time_still_plays_a_legal_play() -> None:
    # R3 fits only by splitting the run: a search, not a quick check. With no time for
    # the best play, the bot plays what the search for any play finds instead of
    # passing (the pool is empty) while a play exists.
    match = with_bots(set_up(["R3 K9", "O9"], on_table="R1 R2 R3 R4 R5 R6", melded=[True, True]), 0)
    moved = advance(match, now=NOW, moved=True, autoplay=Autoplay(bot_budget=0))
    assert types(moved)[0] == "played"
    assert (
        check_turn(match.table, moved.match.table, Counter(match.players[0].rack), melded=True)
        == []
    )
    assert rack(moved.match, 0) == "K9"


def test_by_default_the_searches_for_any_play_have_no_time_budget() -> None:
    # what a pass proof, a stalemate and a bot out of time rest on: never the machine's load
    assert Autoplay().proof_budget is None
    assert Autoplay().bot_budget is not None
