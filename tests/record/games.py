"""Games for the record's tests: played in the game core by bots and by random humans."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from service import game, record
from service.game import Autoplay, Match, PlayerSpec, Status, Transition, event_to_dict
from service.rules import Rules
from tests.game.support import NAMES, candidate_plays

NOW = 1000.0
# No time budget anywhere: a property test must not depend on the machine's speed.
UNBOUNDED = Autoplay(bot_budget=None, proof_budget=None)


@dataclass
class Played:
    """A game played to its end (or as far as it went): the match, its public log, and what
    the match was at each moment a client could have looked at it."""

    match: Match
    events: list[dict[str, Any]]
    seen: list[tuple[Match, int]]  # the match, and how many events the log then held

    def record(self, game_number: int = 1) -> record.Record:
        return record.record_of(self.match, self.events, game_number)


def _advance(match: Match, now: float) -> Transition:
    return game.advance(match, now=now, moved=True, autoplay=UNBOUNDED)


def bots_only(seats: int, *, rules: Rules, seed: int) -> Played:
    """A game between bots, dealt from ``seed``, played to its end at once."""
    players = [PlayerSpec(name, bot=True) for name in NAMES[:seats]]
    created = game.new_match("m", players, rules=rules, rng=random.Random(seed), now=NOW)
    done = created.then(lambda match: _advance(match, NOW))
    events = [event_to_dict(event) for event in done.events]
    return Played(done.match, events, [(done.match, len(events))])


def random_game(
    seats: int,
    *,
    rules: Rules,
    seed: int,
    bots: tuple[bool, ...],
    choose: Callable[[list[str]], str],
    pick: Callable[[int], int],
    steps: int = 400,
) -> Played:
    """A game where the humans' moves are chosen by ``choose`` (an action among those that are
    possible) and ``pick`` (an index below its argument); bots play as in the service."""
    players = [PlayerSpec(name, bot=bot) for name, bot in zip(NAMES, bots[:seats], strict=False)]
    created = game.new_match("m", players, rules=rules, rng=random.Random(seed), now=NOW)
    first = created.then(lambda match: _advance(match, NOW))
    match, now = first.match, NOW
    events = [event_to_dict(event) for event in first.events]
    seen = [(match, len(events))]
    for _ in range(steps):
        if match.status is not Status.PLAYING:
            break
        now = max(now, match.turn_started) + pick(3) * 7.0
        transition = _human_turn(match, now, choose, pick)
        transition = transition.then(lambda after, now=now: _advance(after, now))  # type: ignore[misc]
        match = transition.match
        events += [event_to_dict(event) for event in transition.events]
        seen.append((match, len(events)))
    return Played(match, events, seen)


def _human_turn(
    match: Match, now: float, choose: Callable[[list[str]], str], pick: Callable[[int], int]
) -> Transition:
    seat = match.current_seat
    if match.turn_deadline is not None and now >= match.turn_deadline:
        now = match.turn_deadline - 1
    player = match.players[seat]
    plays = candidate_plays(match, seat)
    options = ["leave"] if len(match.humans) > 1 or pick(4) == 0 else []
    options += ["play"] * 3 if plays else []
    options += ["draw"] if match.pool else []
    if match.rules.turn_seconds:
        options += ["timeout", "penalty"]
    rack = Counter(player.rack)
    if (
        not match.pool
        and UNBOUNDED.can_play(match.table, rack, player.melded, match.rules) is False
    ):
        options.append("pass")
    if not options:
        options = ["leave"]
    action = choose(options)
    if action == "play":
        return game.play(match, seat, plays[pick(len(plays))], now=now)
    if action == "draw":
        return game.draw(match, seat, now=now)
    if action == "pass":
        return game.pass_turn(match, seat, now=now)
    if action == "leave":
        return game.leave(match, seat, now=now)
    assert match.turn_deadline is not None
    deadline = match.turn_deadline
    if action == "penalty" and player.rack:
        drafted = game.save_draft(match, seat, (*match.table, player.rack[:1]), now=now)
        return drafted.then(lambda after: game.settle(after, now=deadline))
    return game.settle(match, now=deadline)


def seeded(seed: int) -> tuple[Callable[[list[str]], str], Callable[[int], int]]:
    """``choose`` and ``pick`` from a seeded random source."""
    rng = random.Random(seed)
    return rng.choice, lambda below: rng.randrange(below)


def with_turn(played: record.Record, index: int, **changes: Any) -> record.Record:
    """``played`` with turn ``index`` (from 0) changed."""
    turns = list(played.turns)
    turns[index] = replace(turns[index], **changes)
    return replace(played, turns=tuple(turns))
