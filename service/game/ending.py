"""The end of a game and of a match: scores into totals, the match winner.

A match is finished after its last game (``rules.rounds`` × players), or, with
``rules.target_score``, after the game in which some total reaches the target.
The match winner has the highest total (ties: most games won), or with
:attr:`MatchWinner.MOST_GAMES` the most games won (ties: highest total); a tie
that remains goes to the lowest seat number.

What a loser pays is its *charge* (:mod:`service.rules.scoring`): its rack total with
jokers at ``rules.joker_penalty``, or under ``rules.never_melded_penalty`` that charge for a
player who never melded, doubled when the exact solver finds sets worth the initial meld in
the rack they end with, within :data:`NEVER_MELDED_BUDGET` seconds (when it cannot decide in
time, the single charge: docs/RULINGS.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from service.game.state import (
    Ending,
    EventType,
    GameResult,
    Match,
    Player,
    Status,
    Transition,
    record,
    table_codes,
)
from service.rules import (
    MatchWinner,
    Outcome,
    Reason,
    Rules,
    codes_of,
    never_melded_charge,
    rack_total,
    score_abandoned,
    score_stalemate,
    score_went_out,
)
from service.rules.solver import can_play

__all__ = [
    "NEVER_MELDED_BUDGET",
    "abandon",
    "charges",
    "end_game",
    "last_one_in",
    "match_is_over",
    "match_winner",
    "stalemate",
    "went_out",
]

NEVER_MELDED_BUDGET = 2.0


def went_out(match: Match, seat: int, *, at: float) -> Transition:
    """End the game that ``seat`` won by emptying their rack."""
    racks = [player.rack for player in match.players]
    outcome = score_went_out(racks, seat, charges=charges(match, winner=seat))
    return end_game(match, outcome, Ending.WENT_OUT, at=at)


def last_one_in(match: Match, seat: int, *, at: float) -> Transition:
    """End the game that ``seat`` won as the last seat whose flag had not fallen: scored as if
    it had gone out, reason ``flag``."""
    racks = [player.rack for player in match.players]
    outcome = score_went_out(racks, seat, charges=charges(match, winner=seat), reason=Reason.FLAG)
    return end_game(match, outcome, Ending.FLAG, at=at)


def stalemate(match: Match, ending: Ending, *, next_seat: int, at: float) -> Transition:
    """End the game with nobody out; ``next_seat`` (who would play next) breaks ties."""
    outcome = score_stalemate(
        [player.rack for player in match.players],
        scoring=match.rules.stalemate_scoring,
        next_seat=next_seat,
        charges=charges(match),
        out=match.flagged,
    )
    return end_game(match, outcome, ending, at=at)


def charges(match: Match, *, winner: int | None = None) -> list[int]:
    """What each seat pays as a loser (see the module); ``winner`` pays nothing."""
    rules = match.rules
    return [
        0 if seat == winner else _charge(player, rules) for seat, player in enumerate(match.players)
    ]


def _charge(player: Player, rules: Rules) -> int:
    if rules.never_melded_penalty and not player.melded:
        could_meld = can_play(
            (), Counter(player.rack), melded=False, rules=rules, time_budget=NEVER_MELDED_BUDGET
        )
        return never_melded_charge(rules.never_melded_penalty, could_meld=could_meld)
    return rack_total(player.rack, joker=rules.joker_penalty)


def abandon(match: Match, *, at: float) -> Transition:
    """End the match because no human is left: the game in play (or, between games, the
    next one, never dealt) is recorded as abandoned with no winner and every score 0;
    the match finishes with no winner. Emits ``game_over`` and ``match_finished``.
    """
    between_games = match.status is Status.GAME_OVER
    interrupted = replace(
        match,
        game_number=match.game_number + between_games,
        status=Status.PLAYING,
    )
    outcome = score_abandoned(len(match.players))
    return end_game(interrupted, outcome, Ending.ABANDONED, at=at)


def end_game(match: Match, outcome: Outcome, ending: Ending, *, at: float) -> Transition:
    """Add the game's scores to the totals and end the game, and the match if it is over.

    Emits ``game_over`` and, when the match is over, ``match_finished``.
    """
    players = tuple(
        replace(
            player,
            score=player.score + outcome.scores[seat],
            games_won=player.games_won + (seat == outcome.winner),
        )
        for seat, player in enumerate(match.players)
    )
    revealed = _deal_of(match)
    ended = replace(
        match,
        players=players,
        status=Status.GAME_OVER,
        turn_deadline=None,
        draft=None,
        outcomes=(*match.outcomes, GameResult(match.game_number, outcome, ending)),
        deals=match.deals[: match.game_number - 1] if revealed else match.deals,
    )
    transition = record(
        ended,
        EventType.GAME_OVER,
        at=at,
        seat=None,
        game_number=match.game_number,
        reason=outcome.reason.value,
        ending=ending.value,
        winner=outcome.winner,
        scores=list(outcome.scores),
        totals=[player.score for player in players],
        **({"deal": revealed} if revealed else {}),
    )
    if ending is not Ending.ABANDONED and not match_is_over(ended):
        return transition
    return transition.then(lambda over: _finish_match(over, at=at))


def _deal_of(match: Match) -> dict[str, object] | None:
    """The deal of the game being ended, for its ``game_over`` event: hidden information ends
    with the game, so the deal goes into the public log (the game's record reads it there) and
    leaves the match's state, which stays small however many games a match has."""
    index = match.game_number - 1
    dealt = match.deals[index] if 0 <= index < len(match.deals) else None
    if dealt is None:
        return None
    shown: dict[str, object] = {
        "racks": [codes_of(rack) for rack in dealt.racks],
        "pool": codes_of(dealt.pool),
    }
    if dealt.table or dealt.melded:
        shown.update(table=table_codes(dealt.table), melded=list(dealt.melded))
    return shown


def match_is_over(match: Match) -> bool:
    """Whether the game just ended was the match's last."""
    target = match.rules.target_score
    return match.game_number >= match.games_total or (
        target is not None and any(player.score >= target for player in match.players)
    )


def match_winner(players: Sequence[Player], rules: Rules) -> int:
    """Return the seat that wins the match (see the module's docstring for ties)."""

    def rank(seat: int) -> tuple[int, int, int]:
        player = players[seat]
        if rules.match_winner is MatchWinner.MOST_GAMES:
            return (player.games_won, player.score, -seat)
        return (player.score, player.games_won, -seat)

    return max(range(len(players)), key=rank)


def _finish_match(match: Match, *, at: float) -> Transition:
    abandoned = match.outcomes[-1].ending is Ending.ABANDONED
    winner = None if abandoned else match_winner(match.players, match.rules)
    return record(
        replace(match, status=Status.FINISHED, winner=winner),
        EventType.MATCH_FINISHED,
        at=at,
        seat=None,
        winner=winner,
        totals=[player.score for player in match.players],
        games_won=[player.games_won for player in match.players],
        games_played=match.game_number,
    )
