"""Helpers for the match tests: tiles and tables written as codes, stacked shuffles, set-ups."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from service.game import Autoplay, Match, PlayerSpec, Setup, Table, Transition, from_setup
from service.rules import (
    Rules,
    Tile,
    check_turn,
    is_valid_set,
    parse_tiles,
    set_points,
    tiles_of,
)

NOW = 1000.0
NAMES = ("Ann", "Bo", "Cy", "Di", "Ed", "Flo")

# The solver's budgets are time, and a property test must not depend on time: hypothesis replays
# the same draws to shrink a failure, and if a search gave up on one run and not on the next,
# the steps differ (FlakyStrategyDefinition, on a loaded machine). So a search in a property test
# has no budget, or a budget of 0, which gives up at its first look at the clock unless it is over
# before it looks (a search that gives up proves nothing, which the rules allow for).
UNBOUNDED = Autoplay(bot_budget=None, proof_budget=None)
AUTOPLAYS = (
    UNBOUNDED,
    Autoplay(bot_budget=0, proof_budget=None),
    Autoplay(bot_budget=0, proof_budget=0),
)


def tiles(codes: str) -> tuple[Tile, ...]:
    """``"R7 K13 J"`` as tiles."""
    return parse_tiles(codes.split())


def table(text: str) -> Table:
    """``"R1 R2 R3 | K5 O5 B5"`` as a table; ``""`` is the empty table."""
    return tuple(tiles(part) for part in text.split("|") if part.strip())


def codes(tile_seq: Sequence[Tile]) -> str:
    """Tiles as one string of codes."""
    return " ".join(tile.code for tile in tile_seq)


def rack(match: Match, seat: int) -> str:
    """The codes of a seat's rack, in rack order."""
    return codes(match.players[seat].rack)


def specs(count: int) -> list[PlayerSpec]:
    """``count`` human players."""
    return [PlayerSpec(name) for name in NAMES[:count]]


def set_up(
    racks: Sequence[str],
    *,
    pool: str = "",
    on_table: str = "",
    melded: Sequence[bool] | None = None,
    first_seat: int = 0,
    rules: Rules | None = None,
    now: float = NOW,
    players: int | None = None,
) -> Match:
    """A test-mode match whose game 1 starts from the given racks, pool, table and first seat."""
    setup = Setup(
        tuple(tiles(codes) for codes in racks),
        tiles(pool),
        table(on_table),
        None if melded is None else tuple(melded),
        first_seat,
    )
    return from_setup(
        "m", specs(players or len(racks)), rules=rules or Rules(), setup=setup, now=now
    ).match


def all_tiles(match: Match) -> Counter[Tile]:
    """Every tile in play: racks, pool and table (a draft holds no tiles of its own)."""
    total = tiles_of(player.rack for player in match.players)
    total.update(match.pool)
    total.update(tiles_of(match.table))
    return total


def types(transition: Transition) -> list[str]:
    """The types of a transition's events, in order."""
    return [event.type for event in transition.events]


class StackedRandom(random.Random):
    """A seeded random source whose next shuffles put the given tiles on top, in order.

    ``StackedRandom("B7 R12", "R1 R1")``: the first shuffle starts with B7 R12, the
    second with R1 R1; later shuffles are ordinary seeded shuffles.
    """

    def __init__(self, *stacks: str, seed: int = 0) -> None:
        super().__init__(seed)
        self.stacks = [tiles(stack) for stack in stacks]

    def shuffle(self, x: Any) -> None:
        super().shuffle(x)
        if not self.stacks:
            return
        for position, tile in enumerate(self.stacks.pop(0)):
            index = x.index(tile, position)
            x[position], x[index] = x[index], x[position]


def candidate_plays(match: Match, seat: int) -> list[Table]:
    """Legal plays for ``seat``: new runs and groups from the rack, or one tile added to a set.

    Not every legal play, but only legal ones (each is checked with ``check_turn``).
    """
    player = match.players[seat]
    rack_counts = Counter(player.rack)
    new_sets = _rack_sets(rack_counts)
    plays: list[Table] = []
    if player.melded:
        plays += [(*match.table, new) for new in new_sets]
        plays += _extensions(match.table, rack_counts)
    else:
        chosen: list[tuple[Tile, ...]] = []
        left = Counter(rack_counts)
        for new in new_sets:
            if not Counter(new) - left:
                chosen.append(new)
                left -= Counter(new)
        if sum(set_points(new) for new in chosen) >= match.rules.initial_meld_points:
            plays.append((*match.table, *chosen))
    return [
        play
        for play in plays
        if not check_turn(match.table, play, rack_counts, melded=player.melded, rules=match.rules)
    ]


def _rack_sets(rack_counts: Counter[Tile]) -> list[tuple[Tile, ...]]:
    numbered = sorted(
        (tile for tile in rack_counts if not tile.is_joker),
        key=lambda tile: (tile.colour.value if tile.colour else "", tile.number or 0),
    )
    sets: list[tuple[Tile, ...]] = []
    by_number: dict[int, list[Tile]] = {}
    for tile in numbered:
        assert tile.number is not None
        by_number.setdefault(tile.number, []).append(tile)
    sets += [tuple(group[:4]) for group in by_number.values() if len(group) >= 3]
    run: list[Tile] = []
    for tile in numbered:
        if run and (tile.colour != run[-1].colour or tile.number != (run[-1].number or 0) + 1):
            if len(run) >= 3:
                sets.append(tuple(run))
            run = []
        run.append(tile)
    if len(run) >= 3:
        sets.append(tuple(run))
    return sets


def _extensions(on_table: Table, rack_counts: Counter[Tile]) -> list[Table]:
    plays: list[Table] = []
    for index, tiles_in_set in enumerate(on_table):
        for tile in rack_counts:
            for extended in ((*tiles_in_set, tile), (tile, *tiles_in_set)):
                if is_valid_set(extended):
                    plays.append((*on_table[:index], extended, *on_table[index + 1 :]))
    return plays
