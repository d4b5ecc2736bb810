"""The exact solver: the play that places the most rack tiles, or proof that none exists.

:func:`solve` returns a :class:`Solution`: a whole new table a client could send,
the rack tiles it places, how many and what they are worth. Among the plays that
place the most rack tiles it picks the one whose placed tiles are worth the most,
each numbered tile counting its number and a joker 30 (what it would cost left on
the rack). :func:`can_play` answers only whether any play exists; the referee uses
it to refuse a pass and to prove a stalemate.

After the initial meld the new table is any arrangement of every table tile and
some rack tiles into valid sets; table jokers stay on the table. Before it, the
table's sets are copied unchanged and the rack tiles placed form new sets worth
at least the threshold (a joker worth the number it stands for, or 0 with the
option). With the joker-locked option a table set holding a joker comes back
extended, or with the joker swapped for the tile it stands for.

With ``rules.freed_joker: "new_set"`` a play that frees a table joker must lay it in a new
set. The search does not know that rule: its play is checked against it, and when it breaks
it, two narrower searches follow, each of whose plays is checked too: one that sets the
table's sets holding jokers aside unchanged (no joker is freed), then one under the
joker-locked option. When neither finds a play that keeps the rule, the answer is
``GAVE_UP`` (undecided), never a guess (docs/RULINGS.md, "The freed joker").

The answer is exact: ``NO_PLAY`` is a proof. When a ``time_budget`` runs out the
status is ``GAVE_UP`` and nothing is guessed. The method is dynamic programming
over the numbers 1-13 (:mod:`service.rules.solver.search`), after van Rijn, Takes
and Vis, "The complexity of Rummikub problems" (2015).
"""

from __future__ import annotations

import enum
import importlib.machinery
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

from service.rules.options import FreedJoker, Rules
from service.rules.sets import SetKind, classify, set_points
from service.rules.solver import groups as groups_module
from service.rules.solver import options as options_module
from service.rules.solver import packing as packing_module
from service.rules.solver import runs as runs_module
from service.rules.solver import search as search_module
from service.rules.solver.arrange import build_sets
from service.rules.solver.collector import collector_paused
from service.rules.solver.position import CELLS, Position, read_position, tile_counts
from service.rules.solver.search import (
    TILE_WEIGHT,
    OutOfTime,
    Plan,
    best_plan,
    future_bounds,
    most_possible,
)
from service.rules.tiles import COLOURS, JOKER, MAX_NUMBER, MIN_NUMBER, Tile
from service.rules.turn import freed_joker_violations

__all__ = ["Solution", "SolveStatus", "any_play", "can_play", "compiled", "solve"]

Table = tuple[tuple[Tile, ...], ...]
# the tile counted in each cell of a tile count (see tile_counts)
_TILE_AT = tuple(
    Tile(COLOURS[cell % len(COLOURS)], cell // len(COLOURS)) if cell < CELLS else JOKER
    for cell in range(CELLS + 1)
)
# on smaller tables one search with every joker is quicker than a series of searches
SERIES_FROM_TABLE_TILES = 30
# the bounds from 13 down (future_bounds) pay for themselves from this many tiles in play
# (rack and table): below, on an empty table with a rack of 5-20, they were a sixth to nearly
# half of a hint's search, and the search they bound costs little (docs/PERFORMANCE.md)
BOUNDS_FROM_TILES = 25
# the last search of a series, the costly one, is bounded from 13 down with this many
# jokers to lay as well (see future_bounds)
FINAL_BOUND_JOKERS = 1
# a series lays at most this many jokers before the search with every joker: one laying 3
# of 4 costs nearly what that search does (bench/solver_tail.py, docs/PERFORMANCE.md)
SERIES_MOST_JOKERS = 2
MIN_SET = 3


class SolveStatus(enum.Enum):
    """How a search ended; the value is the stable code."""

    PLAY_FOUND = "play_found"
    NO_PLAY = "no_play"
    GAVE_UP = "gave_up"


@dataclass(frozen=True, slots=True)
class Solution:
    """The solver's answer.

    ``table`` is the whole new table (the old one when no play is found), each set
    in display order; ``placed`` the rack tiles it adds; ``points`` their worth
    with a joker counted 30.
    """

    status: SolveStatus
    table: Table
    placed: Counter[Tile] = field(default_factory=Counter)
    tile_count: int = 0
    points: int = 0

    @property
    def found(self) -> bool:
        """Whether a play was found."""
        return self.status is SolveStatus.PLAY_FOUND


def solve(
    table: Sequence[Sequence[Tile]],
    rack: Counter[Tile] | Iterable[Tile],
    *,
    melded: bool,
    rules: Rules | None = None,
    time_budget: float | None = None,
) -> Solution:
    """Return the play placing the most rack tiles (ties: most points); never raises.

    ``time_budget`` is in seconds; when it runs out the status is ``GAVE_UP``.
    """
    return _search(table, rack, melded, rules, time_budget, _best_sets, _best_meld)


def any_play(
    table: Sequence[Sequence[Tile]],
    rack: Counter[Tile] | Iterable[Tile],
    *,
    melded: bool,
    rules: Rules | None = None,
    time_budget: float | None = None,
) -> Solution:
    """Return a legal play, not necessarily the best, or ``NO_PLAY`` as proof that none exists.

    One search at the lowest floor (place anything at all) instead of :func:`solve`'s
    series from every rack tile down: what a pass proof needs, and what a bot plays when
    the search for its best play runs out of time.
    """
    return _search(table, rack, melded, rules, time_budget, _first_sets, _first_meld)


def _search(
    table: Sequence[Sequence[Tile]],
    rack: Counter[Tile] | Iterable[Tile],
    melded: bool,
    rules: Rules | None,
    time_budget: float | None,
    after_meld: Callable[[Position, float | None], Table | None],
    before_meld: Callable[[Counter[Tile], Rules, float | None], Table | None],
) -> Solution:
    """What :func:`solve` and :func:`any_play` share: read the position, run the search
    for a player who has melded (``after_meld``) or not (``before_meld``) within the
    budget, and lay its sets out on the table."""
    rules = rules or Rules()
    before: Table = tuple(tuple(tiles) for tiles in table)
    hand = rack if isinstance(rack, Counter) else Counter(rack)
    if not any(count > 0 for count in hand.values()):
        return Solution(SolveStatus.NO_PLAY, before)
    deadline = None if time_budget is None else time.perf_counter() + time_budget
    position = read_position(before, hand, melded=melded, rules=rules)
    try:
        with collector_paused():  # no reference cycle to collect: see collector.py
            sets = after_meld(position, deadline) if melded else before_meld(hand, rules, deadline)
    except OutOfTime:
        return Solution(SolveStatus.GAVE_UP, before)
    solution = _solution(before, position, sets, melded=melded)
    if (
        solution.found
        and melded
        and rules.freed_joker is FreedJoker.NEW_SET
        and freed_joker_violations(before, solution.table)
    ):
        return _keeping_freed_jokers(before, hand, rules, deadline, after_meld)
    return solution


def _keeping_freed_jokers(
    before: Table,
    hand: Counter[Tile],
    rules: Rules,
    deadline: float | None,
    after_meld: Callable[[Position, float | None], Table | None],
) -> Solution:
    """A play that keeps ``freed_joker: "new_set"`` when the search's own play broke it:
    the table's sets holding jokers set aside unchanged, else the joker-locked search;
    ``GAVE_UP`` when neither finds one (see the module)."""
    kept = tuple(tiles for tiles in before if JOKER in tiles)
    rest = tuple(tiles for tiles in before if JOKER not in tiles)
    try:
        with collector_paused():
            position = read_position(rest, hand, melded=True, rules=rules)
            sets = after_meld(position, deadline)
            if sets is not None:
                aside = _solution(rest, position, sets, melded=True)
                return replace(aside, table=kept + aside.table)
            locked = replace(rules, joker_locked_sets=True)
            position = read_position(before, hand, melded=True, rules=locked)
            solution = _solution(before, position, after_meld(position, deadline), melded=True)
    except OutOfTime:
        return Solution(SolveStatus.GAVE_UP, before)
    if solution.found and not freed_joker_violations(before, solution.table):
        return solution
    return Solution(SolveStatus.GAVE_UP, before)


def _first_meld(hand: Counter[Tile], rules: Rules, deadline: float | None) -> Table | None:
    """The sets of some initial meld, or None when there is none.

    The best sets the rack forms at all (found as :func:`solve` finds them: quick,
    with no meld value to carry, and the search from every rack tile down is quickest
    when most can be placed) are a meld when they are worth the threshold; otherwise
    one meld search at the lowest floor decides. Sets taken greedily answer first
    when they are worth the threshold.
    """
    greedy = _greedy_meld(hand, rules)
    if greedy is not None:
        return greedy
    free = _best_sets(read_position((), hand, melded=True, rules=rules), deadline)
    if free is None:
        return None
    worth = sum(
        set_points(tiles, joker_worth_zero=rules.joker_worth_zero_in_meld) for tiles in free
    )
    if worth >= rules.initial_meld_points:
        return free
    return _first_sets(read_position((), hand, melded=False, rules=rules), deadline)


def _greedy_meld(hand: Counter[Tile], rules: Rules) -> Table | None:
    """Sets of the rack worth the initial meld, taken greedily; None when greed falls short.

    Takes the set of real tiles worth the most (a whole stretch of a colour, or every
    colour of a number), again and again, then adds each joker where it is worth the
    most: a quick way to find most melds, which proves nothing when it finds none.
    """
    left = +hand
    jokers = left.pop(JOKER, 0)
    sets: list[list[Tile]] = []
    while True:
        best: list[Tile] = []
        for number in range(MIN_NUMBER, MAX_NUMBER + 1):
            group = [Tile(colour, number) for colour in COLOURS if left[Tile(colour, number)]]
            if len(group) >= MIN_SET and len(group) * number > _worth(best):
                best = group
        for colour in COLOURS:
            stretch: list[Tile] = []
            for number in range(MIN_NUMBER, MAX_NUMBER + 2):
                tile = Tile(colour, number) if number <= MAX_NUMBER else None
                if tile is not None and left[tile]:
                    stretch.append(tile)
                    continue
                if len(stretch) >= MIN_SET and _worth(stretch) > _worth(best):
                    best = stretch
                stretch = []
        if not best:
            break
        left.subtract(best)
        sets.append(best)
    for _ in range(jokers):
        _add_joker(sets)
    worth = sum(
        set_points(tiles, joker_worth_zero=rules.joker_worth_zero_in_meld) for tiles in sets
    )
    if not sets or worth < rules.initial_meld_points:
        return None
    return tuple(tuple(tiles) for tiles in sets)


def _worth(tiles: Sequence[Tile]) -> int:
    return sum(tile.number or 0 for tile in tiles)


def _add_joker(sets: list[list[Tile]]) -> None:
    """Put a joker where it stands for the highest number: a run's end, or a group of three."""
    best, where = 0, -1
    for index, tiles in enumerate(sets):
        info = classify(tiles)
        if info.kind is SetKind.GROUP and len(tiles) < len(COLOURS) and info.number:
            worth = info.number
        elif info.kind is SetKind.RUN and info.start is not None and len(tiles) < MAX_NUMBER:
            end = info.start + len(tiles) - 1
            worth = end + 1 if end < MAX_NUMBER else info.start - 1
        else:
            continue
        if worth > best:
            best, where = worth, index
    if where < 0:
        return
    tiles = sets[where]
    info = classify(tiles)
    if info.kind is SetKind.RUN and info.start is not None and info.start + len(tiles) > MAX_NUMBER:
        tiles.insert(0, JOKER)
    else:
        tiles.append(JOKER)


def _first_sets(position: Position, deadline: float | None) -> Table | None:
    """The sets of some play placing at least one rack tile, or None when there is none.

    After the initial meld, searches that lay only the jokers sets need (the spare ones
    count as placed): first laying none, then at most one, and so on (on a crowded table
    each is far quicker than the next), then any number; in the rare position where
    the spare jokers fit nowhere, one search with every joker placement. Before it
    (``position`` counts a meld), one search that counts the meld.
    """
    if position.meld_threshold is not None:
        return _lay(position, best_plan(position, essential=False, deadline=deadline))
    for limit in range(position.jokers):
        plan = best_plan(position, essential=True, deadline=deadline, joker_limit=limit)
        sets = _lay(position, plan, essential=True)
        if sets is not None:
            return sets
    plan = best_plan(position, essential=True, deadline=deadline)
    if plan is None:
        return None
    sets = _lay(position, plan, essential=True)
    if sets is not None:
        return sets
    return _lay(position, best_plan(position, essential=False, deadline=deadline))


def _solution(before: Table, position: Position, sets: Table | None, *, melded: bool) -> Solution:
    """The answer for ``sets``, the new sets a search found (None: no play)."""
    if sets is None:
        return Solution(SolveStatus.NO_PLAY, before)
    if melded:
        after = sets
        added = tile_counts(after)
        for cell, count in enumerate(position.table_counts):
            added[cell] -= count
    else:
        after = before + sets
        added = tile_counts(sets)
    placed: Counter[Tile] = Counter()
    points = 0
    for cell, count in enumerate(added):
        if count:
            assert count > 0, "the new table lost a tile"
            tile = _TILE_AT[cell]
            placed[tile] = count
            points += tile.penalty * count
    return Solution(SolveStatus.PLAY_FOUND, after, placed, placed.total(), points)


def _best_meld(hand: Counter[Tile], rules: Rules, deadline: float | None) -> Table | None:
    """The sets of the best initial meld, or None when there is none.

    The best sets the rack can form at all (a search as after the meld, on an empty
    table, which has no meld value to carry and is much quicker) are the best meld
    when they are worth the threshold; otherwise the meld search runs, knowing it
    cannot place more tiles than they do.
    """
    free = _best_sets(read_position((), hand, melded=True, rules=rules), deadline)
    if free is None:
        return None
    worth = sum(
        set_points(tiles, joker_worth_zero=rules.joker_worth_zero_in_meld) for tiles in free
    )
    if worth >= rules.initial_meld_points:
        return free
    position = read_position((), hand, melded=False, rules=rules)
    return _best_sets(position, deadline, most_tiles=sum(map(len, free)))


def _best_sets(
    position: Position, deadline: float | None, *, most_tiles: int | None = None
) -> Table | None:
    """The sets of the best play, or None when there is none.

    Searches first for a play that leaves no rack tile out (or places ``most_tiles``,
    when fewer is known to be the most), then at most 1, 3, 7, ... fewer: each search
    drops every state that has already left out more, which keeps it small, and the
    first that finds a play has found the best one.

    After the initial meld the search lays only the jokers sets need and adds the
    others at the end (see :mod:`service.rules.solver.runs`). On a crowded table,
    laying every joker is the costly part: at each floor the searches first try laying
    no joker at all, then one, then two (``SERIES_MOST_JOKERS``), each bound to beat the
    play found before (a play that places every rack tile ends it). Once one finds a play, a single
    search with every joker, bound to beat it, settles the position. When none finds
    one, a single search with every joker at that floor settles it too, or proves that
    no play reaches it: the searches of the floor below would each cost more, and a
    play that needs every joker is found at once rather than after a series of them.
    Those searches drop the states that have laid their jokers and cannot reach the
    floor even if every number above placed what a search without jokers from 13 down
    finds there (:func:`future_bounds`, run again for each floor: at a high floor it
    is quick, and with locked sets it reads them unlocked; with fewer than
    ``BOUNDS_FROM_TILES`` tiles in play it costs more than it saves); the last search of a
    series, the costly one, also drops those with one joker left that cannot reach it
    with one more joker.
    """
    tiles = sum(map(sum, position.optional)) + position.rack_jokers
    if most_tiles is not None:
        tiles = min(tiles, most_tiles)
    floors = [(tiles - left_out) * TILE_WEIGHT for left_out in _left_out(tiles)] + [1]
    bounded = (
        position.jokers > 0
        and position.meld_threshold is None
        and tiles + sum(map(sum, position.mandatory)) >= BOUNDS_FROM_TILES
    )
    series = (
        position.meld_threshold is None
        and position.jokers > 0
        and sum(map(sum, position.mandatory)) >= SERIES_FROM_TABLE_TILES
    )
    for floor in floors:
        future = future_bounds(position, deadline, floor) if bounded else None
        if series:
            found = None
            for limit in range(min(position.jokers, SERIES_MOST_JOKERS + 1)):
                plan = best_plan(
                    position,
                    essential=True,
                    deadline=deadline,
                    floor=floor,
                    joker_limit=limit,
                    future=future,
                )
                sets = _lay(position, plan, essential=True)
                if plan is not None and sets is not None:
                    if plan.score == most_possible(position):
                        return sets
                    floor, found = plan.score + 1, sets  # the next search must do better
            if found is not None:
                future = future_bounds(position, deadline, floor, FINAL_BOUND_JOKERS)
                return _with_every_joker(position, deadline, floor, future) or found
        sets = _with_every_joker(position, deadline, floor, future)
        if sets is not None:
            return sets
    return None


def _left_out(tiles: int) -> Iterator[int]:
    """0, 1, 3, 7, ... below ``tiles``: how many rack tiles each search may leave out."""
    left_out = 0
    while left_out < tiles:
        yield left_out
        left_out = 2 * left_out + 1


def _with_every_joker(
    position: Position,
    deadline: float | None,
    floor: int,
    future: tuple[tuple[int, ...], ...] | None,
) -> Table | None:
    """The sets of the best play scoring ``floor`` or more, jokers laid anywhere; or None.

    In the rare position where the spare jokers of the best essential play fit
    nowhere, it searches again with every joker placement. The initial meld counts
    what jokers stand for, so it always uses that full search.
    """
    if position.meld_threshold is not None:
        return _lay(position, best_plan(position, essential=False, deadline=deadline, floor=floor))
    plan = best_plan(position, essential=True, deadline=deadline, floor=floor, future=future)
    if plan is None:
        return None
    sets = _lay(position, plan, essential=True)
    if sets is not None:
        return sets
    return _lay(position, best_plan(position, essential=False, deadline=deadline, floor=floor))


def _lay(position: Position, plan: Plan | None, *, essential: bool = False) -> Table | None:
    if plan is None:
        return None
    sets = build_sets(position, plan, essential=essential)
    return None if sets is None else tuple(sets)


def can_play(
    table: Sequence[Sequence[Tile]],
    rack: Counter[Tile] | Iterable[Tile],
    *,
    melded: bool,
    rules: Rules | None = None,
    time_budget: float | None = None,
) -> bool | None:
    """Return whether the player can place any rack tile; None if the budget ran out.

    After the initial meld a tile that extends a run or fills a group, or a set the
    rack forms alone, answers at once; otherwise one search for any play decides
    (:func:`any_play`).
    """
    hand = rack if isinstance(rack, Counter) else Counter(rack)
    hand = +hand
    if not hand:
        return False
    if melded and (_extends_a_set(table, hand) or _forms_a_set(hand)):
        return True
    status = any_play(table, hand, melded=melded, rules=rules, time_budget=time_budget).status
    if status is SolveStatus.GAVE_UP:
        return None
    return status is SolveStatus.PLAY_FOUND


def compiled() -> bool:
    """Whether the search's hot modules (search, options, packing, runs, groups) run compiled
    by mypyc.

    ``pip install`` compiles them where a C compiler is at hand (setup.py); Python then
    imports each as an extension module instead of its source, and the answers are the same.
    """
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    hot = (search_module, options_module, packing_module, runs_module, groups_module)
    return all((module.__file__ or "").endswith(suffixes) for module in hot)


def _forms_a_set(hand: Counter[Tile]) -> bool:
    """Whether the rack alone holds a valid set: a group or a run of three, jokers filling in."""
    jokers = hand[JOKER]
    for number in range(MIN_NUMBER, MAX_NUMBER + 1):
        colours = sum(1 for colour in COLOURS if hand[Tile(colour, number)])
        if colours and colours + jokers >= MIN_SET:
            return True
    for colour in COLOURS:
        for start in range(MIN_NUMBER, MAX_NUMBER - MIN_SET + 2):
            held = sum(1 for number in range(start, start + MIN_SET) if hand[Tile(colour, number)])
            if held and held + jokers >= MIN_SET:
                return True
    return False


def _extends_a_set(table: Sequence[Sequence[Tile]], hand: Counter[Tile]) -> bool:
    """Whether one rack tile fits at the end of a table run or into a group of three."""
    has_joker = any(tile.is_joker for tile in hand)
    for tiles in table:
        info = classify(tiles)
        if info.kind is SetKind.RUN and info.colour is not None and info.start is not None:
            end = info.start + len(tiles) - 1
            if has_joker and len(tiles) < MAX_NUMBER - MIN_NUMBER + 1:
                return True
            before, after = Tile(info.colour, info.start - 1), Tile(info.colour, end + 1)
            if (info.start > MIN_NUMBER and hand[before]) or (end < MAX_NUMBER and hand[after]):
                return True
        elif info.kind is SetKind.GROUP and len(tiles) < len(COLOURS):
            if has_joker:
                return True
            held = {tile.colour for tile in tiles}
            if any(hand[Tile(c, info.number)] for c in COLOURS if c not in held):
                return True
    return False
