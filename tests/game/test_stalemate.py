"""An empty pool: play goes on, passes, and the stalemate that ends a game."""

from __future__ import annotations

from collections import Counter

from service.game import (
    Ending,
    Match,
    Status,
    pass_turn,
    play,
    stalemate_if_nobody_can_play,
)
from service.rules import Reason, Rules, StalemateEnd, StalemateScoring, Tile
from tests.game.support import NOW, set_up, table, types

LATER = NOW + 5


def cannot_play(*_: object) -> bool:
    return False


def pass_round(match: Match) -> Match:
    for _ in match.players:
        match = pass_turn(match, match.current_seat, now=LATER, can_play=cannot_play).match
    return match


def test_the_game_ends_when_every_player_has_passed_in_a_row() -> None:
    match = set_up(["R5 K9", "O1 O2", "J"])
    match = pass_turn(match, 0, now=LATER).match
    match = pass_turn(match, 1, now=LATER).match
    assert match.status is Status.PLAYING
    transition = pass_turn(match, 2, now=LATER)
    assert types(transition) == ["passed", "game_over"]
    result = transition.match.outcomes[-1]
    assert result.ending is Ending.ALL_PASSED
    assert result.outcome.reason is Reason.STALEMATE
    assert result.outcome.winner == 1
    assert result.outcome.scores == (-11, 38, -27)
    assert transition.events[1].data["ending"] == "all_passed"


def test_with_the_house_option_losers_of_a_stalemate_score_their_full_totals() -> None:
    rules = Rules(stalemate_scoring=StalemateScoring.FULL_TOTAL)
    over = pass_round(set_up(["R5 K9", "O1 O2", "J"], rules=rules))
    assert over.outcomes[-1].outcome.scores == (-14, 44, -30)


def test_a_play_starts_the_count_of_passes_again() -> None:
    match = set_up(["R5", "K1 K2 K3 K9", "O7"], melded=[False, True, False])
    match = pass_turn(match, 0, now=LATER).match
    match = play(match, 1, table("K1 K2 K3"), now=LATER).match
    assert match.passes_in_a_row == 0
    match = pass_turn(match, 2, now=LATER).match
    match = pass_turn(match, 0, now=LATER).match
    assert match.status is Status.PLAYING
    assert pass_turn(match, 1, now=LATER).match.status is Status.GAME_OVER


def test_a_tie_for_the_lowest_rack_goes_to_the_seat_that_would_have_played_next() -> None:
    assert pass_round(set_up(["R5", "K5"], first_seat=0)).outcomes[-1].outcome.winner == 0
    assert pass_round(set_up(["R5", "K5"], first_seat=1)).outcomes[-1].outcome.winner == 1


def test_with_the_house_option_the_game_ends_at_the_first_player_who_cannot_play() -> None:
    rules = Rules(stalemate_end=StalemateEnd.FIRST_CANNOT_PLAY)
    transition = pass_turn(set_up(["R5 K9", "O1 O2", "J"], rules=rules), 0, now=LATER)
    assert types(transition) == ["passed", "game_over"]
    assert transition.match.outcomes[-1].ending is Ending.FIRST_CANNOT_PLAY
    assert transition.match.outcomes[-1].outcome.winner == 1


def test_the_referee_ends_the_game_as_soon_as_the_solver_proves_nobody_can_play() -> None:
    match = set_up(["R5 K9", "O1 O2", "J"], first_seat=2)
    transition = stalemate_if_nobody_can_play(match, now=LATER, can_play=cannot_play)
    assert types(transition) == ["game_over"]
    result = transition.match.outcomes[-1]
    assert result.ending is Ending.NOBODY_CAN_PLAY and result.outcome.winner == 1


def test_the_game_goes_on_unless_every_player_is_proven_unable_to_play() -> None:
    match = set_up(["R5 K9", "O1 O2", "J"])
    for answer in (True, None):

        def seat_1_may_play(
            _table: object, rack: Counter[Tile], _melded: bool, _rules: Rules, answer=answer
        ) -> bool | None:
            return answer if Tile.parse("O1") in rack else False

        transition = stalemate_if_nobody_can_play(match, now=LATER, can_play=seat_1_may_play)
        assert transition.match is match and transition.events == ()


def test_nobody_is_asked_whether_they_can_play_while_the_pool_holds_tiles() -> None:
    match = set_up(["R5", "K9"], pool="O1")
    transition = stalemate_if_nobody_can_play(match, now=LATER, can_play=cannot_play)
    assert transition.match is match and transition.events == ()
