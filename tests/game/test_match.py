"""A match: games and rounds, the first seat moving on, target scores and the match winner."""

from __future__ import annotations

import random

import pytest

from service.game import (
    Match,
    Player,
    Status,
    WrongPhase,
    match_winner,
    new_match,
    next_game,
    play,
    settle,
)
from service.rules import MatchWinner, Rules
from tests.game.support import NOW, StackedRandom, set_up, specs, table, types

FOREVER = 10.0**7


def run_out(match: Match, now: float) -> Match:
    """Let every turn run out until the game ends in a stalemate."""
    over = settle(match, now=now).match
    assert over.status is not Status.PLAYING
    return over


def test_the_first_seat_moves_one_on_each_game_and_only_game_1_has_a_draw() -> None:
    rng = StackedRandom("B7 R12 K3")
    match = new_match("m", specs(3), rules=Rules(), rng=rng, now=NOW).match
    firsts = [match.current_seat]
    for game in (2, 3):
        match = run_out(match, now=game * FOREVER)
        transition = next_game(match, now=game * FOREVER, rng=rng)
        assert types(transition) == ["game_started"]
        match = transition.match
        assert match.game_number == game
        firsts.append(match.current_seat)
    assert firsts == [1, 2, 0]


def test_the_next_game_is_dealt_afresh() -> None:
    match = run_out(set_up(["R1", "K2"]), now=FOREVER)
    after = next_game(match, now=FOREVER, rng=random.Random(3)).match
    assert [len(player.rack) for player in after.players] == [14, 14]
    assert len(after.pool) == 78 and after.table == ()
    assert not any(player.melded for player in after.players)
    assert after.status is Status.PLAYING and after.turn_deadline == FOREVER + 60


def test_a_match_of_one_round_lasts_as_many_games_as_there_are_players() -> None:
    match = run_out(set_up(["R1", "K2"]), now=FOREVER)
    assert match.status is Status.GAME_OVER
    match = run_out(next_game(match, now=FOREVER, rng=random.Random(1)).match, now=2 * FOREVER)
    assert match.status is Status.FINISHED and match.game_number == 2
    assert match.winner == match_winner(match.players, match.rules)
    with pytest.raises(WrongPhase, match="the match is finished"):
        next_game(match, now=2 * FOREVER, rng=random.Random(1))


def test_a_match_lasts_the_agreed_number_of_rounds() -> None:
    rules = Rules(rounds=2)
    match = run_out(set_up(["R1", "K2"], rules=rules), now=FOREVER)
    for game in (2, 3, 4):
        assert match.status is Status.GAME_OVER
        match = next_game(match, now=game * FOREVER, rng=random.Random(game)).match
        match = run_out(match, now=(game + 1) * FOREVER)
    assert match.status is Status.FINISHED
    assert [result.game_number for result in match.outcomes] == [1, 2, 3, 4]
    assert sum(player.games_won for player in match.players) == 4


def test_the_next_game_waits_for_the_current_one_to_end() -> None:
    with pytest.raises(WrongPhase, match="game 1 is still being played"):
        next_game(set_up(["R1", "K2"]), now=NOW, rng=random.Random())


def test_a_target_score_ends_the_match_after_the_game_in_which_it_is_reached() -> None:
    match = set_up(["R10 R11 R12", "K13 K12"], rules=Rules(target_score=20))
    transition = play(match, 0, table("R10 R11 R12"), now=NOW)
    assert types(transition) == ["played", "game_over", "match_finished"]
    assert transition.match.status is Status.FINISHED and transition.match.winner == 0
    assert transition.events[2].data == {
        "winner": 0,
        "totals": [25, -25],
        "games_won": [1, 0],
        "games_played": 1,
    }


def test_a_target_score_not_yet_reached_lets_the_match_go_on() -> None:
    match = set_up(["R10 R11 R12", "K13 K12"], rules=Rules(target_score=30))
    assert play(match, 0, table("R10 R11 R12"), now=NOW).match.status is Status.GAME_OVER


def players(scores: list[int], games_won: list[int]) -> list[Player]:
    return [
        Player(f"P{seat}", False, (), score=score, games_won=won)
        for seat, (score, won) in enumerate(zip(scores, games_won, strict=True))
    ]


@pytest.mark.parametrize(
    ("scores", "games_won", "winner"),
    [
        ([10, 30, -40], [2, 1, 0], 1),  # highest total
        ([20, 20, -40], [1, 2, 0], 1),  # tied totals: most games won
        ([15, -30, 15], [1, 0, 1], 0),  # still tied: lowest seat
    ],
)
def test_the_match_winner_has_the_highest_total(
    scores: list[int], games_won: list[int], winner: int
) -> None:
    assert match_winner(players(scores, games_won), Rules()) == winner


@pytest.mark.parametrize(
    ("scores", "games_won", "winner"),
    [
        ([-5, 30, -25], [2, 1, 1], 0),  # most games won
        ([-10, 20, -10], [1, 1, 0], 1),  # tied games: highest total
        ([10, 10, -20], [1, 1, 0], 0),  # still tied: lowest seat
    ],
)
def test_with_the_option_the_match_winner_has_won_the_most_games(
    scores: list[int], games_won: list[int], winner: int
) -> None:
    rules = Rules(match_winner=MatchWinner.MOST_GAMES)
    assert match_winner(players(scores, games_won), rules) == winner


def test_the_finished_match_names_its_winner_by_the_chosen_rule() -> None:
    rules = Rules(match_winner=MatchWinner.MOST_GAMES, rounds=1)
    match = set_up(["R10 R11 R12", "K13 K12"], rules=rules)
    match = play(match, 0, table("R10 R11 R12"), now=NOW).match
    match = run_out(next_game(match, now=NOW, rng=random.Random(5)).match, now=FOREVER)
    assert match.status is Status.FINISHED
    assert match.winner == match_winner(match.players, rules)
    assert sum(player.score for player in match.players) == 0
