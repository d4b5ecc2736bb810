"""What happens without a client: deadlines, bot turns, and stalemates the solver proves.

:func:`advance` is applied by every request and by the sweeper before anything else:

1. passed deadlines are settled in order (:func:`service.game.settle`);
2. while it is a bot's turn, the bot plays: a bot takes the solver's best play (the
   most rack tiles, then the most points; before its initial meld, the best meld
   worth the threshold) as soon as one exists, otherwise it draws, or passes when
   the pool is empty. It never holds tiles back: playing out fast is what wins
   most games against the clock, and it keeps bots predictable for players;
3. with an empty pool, the game ends as soon as the solver proves that no player
   can play (option: the moment the player to move cannot play), without waiting
   for every pass.

A bot's search for its best play has a time budget (2 s); when it runs out, the bot
plays the first legal play a search for any play finds (:func:`any_play`). That search
and the proofs (a pass refused, a stalemate declared) have no time budget by default:
they only ask whether any play exists, which the solver answers quickly on every
position we know (docs/RULINGS.md, "A pass is always decided"). A caller may give them
a budget (tests do); a search that gives up proves nothing, so the bot then draws or
passes and no stalemate is declared.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from service.game.ending import stalemate
from service.game.state import Ending, Match, Status, Transition, made_transition
from service.game.timers import settle
from service.game.turns import draw, pass_turn, play
from service.rules import Rules, StalemateEnd, Tile
from service.rules.solver import Solution, SolveStatus, any_play, can_play, solve

__all__ = ["Autoplay", "advance"]

MAX_BOT_TURNS = 2000


@dataclass(frozen=True, slots=True)
class Autoplay:
    """The solver's time budgets (seconds; None: none) for a bot's best play, and for the
    searches for any play: a bot's play when its best play runs out of time, and proofs."""

    bot_budget: float | None = 2.0
    proof_budget: float | None = None

    def best_play(
        self, table: tuple[tuple[Tile, ...], ...], rack: Counter[Tile], melded: bool, rules: Rules
    ) -> Solution:
        """The solver's best play for a bot, or any legal play when that search runs out."""
        solution = solve(table, rack, melded=melded, rules=rules, time_budget=self.bot_budget)
        if solution.status is not SolveStatus.GAVE_UP:
            return solution
        return any_play(table, rack, melded=melded, rules=rules, time_budget=self.proof_budget)

    def can_play(
        self, table: tuple[tuple[Tile, ...], ...], rack: Counter[Tile], melded: bool, rules: Rules
    ) -> bool | None:
        """Whether a legal play exists (None: the search gave up)."""
        return can_play(table, rack, melded=melded, rules=rules, time_budget=self.proof_budget)


DEFAULT = Autoplay()


def advance(
    match: Match, *, now: float, moved: bool = False, autoplay: Autoplay = DEFAULT
) -> Transition:
    """Settle deadlines, play bot turns and end a proven stalemate, in order, up to ``now``.

    A bot plays at the moment its turn starts, so a bot never times out. ``moved``
    says a move was just applied (then a stalemate is looked for even when nothing
    else happens here). Returns no events when nothing was owed.
    """
    if match.status is not Status.PLAYING or (
        (not moved or match.pool)  # no stalemate to look for
        and not match.players[match.current_seat].bot
        and (match.turn_deadline is None or match.turn_deadline > now)
    ):  # what the loop's first pass finds, without it: every move and draft asks, twice
        return made_transition(match, (), ())
    transition = made_transition(match, (), ())
    for _ in range(MAX_BOT_TURNS):
        if moved:
            transition = _joined(transition, _prove_stalemate(transition.match, autoplay))
        current = transition.match
        if current.status is not Status.PLAYING:
            break
        if current.players[current.current_seat].bot:
            step = _bot_turn(current, current.turn_started, autoplay)
        elif current.turn_deadline is not None and current.turn_deadline <= now:
            step = settle(current, now=current.turn_deadline)
        else:
            break
        transition, moved = _joined(transition, step), True
    return transition


def _joined(first: Transition, second: Transition) -> Transition:
    """``first`` followed by ``second`` (which starts from ``first``'s match)."""
    if not second.events and not second.drawn:
        return (
            first
            if first.match is second.match
            else made_transition(second.match, first.events, first.drawn)
        )
    return made_transition(second.match, first.events + second.events, first.drawn + second.drawn)


def _bot_turn(match: Match, now: float, autoplay: Autoplay) -> Transition:
    seat = match.current_seat
    player = match.players[seat]
    solution = autoplay.best_play(match.table, Counter(player.rack), player.melded, match.rules)
    if solution.found:
        return play(match, seat, solution.table, now=now)
    if match.pool:
        return replace(draw(match, seat, now=now), drawn=())
    return pass_turn(match, seat, now=now)


def _prove_stalemate(match: Match, autoplay: Autoplay) -> Transition:
    if match.status is not Status.PLAYING or match.pool:
        return made_transition(match, (), ())
    if match.rules.stalemate_end is StalemateEnd.FIRST_CANNOT_PLAY:
        seats = [match.current_seat]
        ending = Ending.FIRST_CANNOT_PLAY
    else:
        seats = list(match.in_game)
        ending = Ending.NOBODY_CAN_PLAY
    for seat in seats:
        player = match.players[seat]
        if (
            autoplay.can_play(match.table, Counter(player.rack), player.melded, match.rules)
            is not False
        ):
            return Transition(match, ())
    return stalemate(
        replace(match, draft=None), ending, next_seat=match.current_seat, at=match.turn_started
    )
