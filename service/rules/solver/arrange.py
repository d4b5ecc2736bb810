"""Turning the search's decisions, number by number, into the sets of a new table.

The replay keeps each colour's open runs as (code, tiles), sorted by code in the
same order as the search's states, so each fate of a :class:`RunMove` lands on a
run of the right kind. Runs come out in display order (ascending, each joker at
the position it stands for); groups list their colours in order, jokers last (but a
group with one real tile puts it last, so that it does not read as a run).
Spare jokers go at the end of a run (or its start, at 13), else into a group of
three.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from service.rules.solver.groups import MAX_GROUP, ForcedGroup, arrange_groups
from service.rules.solver.position import LockedGroup, LockedRun, Position
from service.rules.solver.runs import COMPLETE, Fate
from service.rules.solver.search import Layer, Plan, Step
from service.rules.tiles import COLOURS, JOKER, MAX_NUMBER, MIN_NUMBER, Tile

__all__ = ["build_sets"]

Run = list[Tile]
OpenRun = tuple[int, Run]
# every numbered tile, by colour index and number
_TILES = tuple(
    tuple(Tile(colour, number) for number in range(MAX_NUMBER + 1)) for colour in COLOURS
)


@dataclass
class _Lock:
    """A locked run being laid: the tiles before it, then its own positions."""

    locked: LockedRun
    tiles: Run = field(default_factory=list)


def build_sets(position: Position, plan: Plan, *, essential: bool) -> list[tuple[Tile, ...]] | None:
    """Lay out the sets that ``plan`` describes, runs first by colour and start.

    Returns None when the spare jokers fit nowhere.
    """
    runs: list[Run] = []
    groups: list[list[Tile]] = []
    open_runs: list[list[OpenRun]] = [[] for _ in COLOURS]
    laying: list[list[_Lock]] = [[] for _ in COLOURS]
    starting: dict[tuple[int, int], list[LockedRun]] = {}
    for locked in position.locked_runs:
        starting.setdefault((locked.colour, locked.start), []).append(locked)
    forced = position.forced
    for layer in plan.layers:
        number = layer.number
        if layer.group_jokers or any(layer.group_reals) or forced[number]:
            groups.extend(_groups_at(position, layer, essential=essential))
        for colour, step in enumerate(layer.steps):
            before = open_runs[colour]
            if starting and (laying[colour] or (colour, number) in starting):
                open_runs[colour] = _runs_at(
                    number,
                    colour,
                    step,
                    before,
                    starting.get((colour, number), ()),
                    laying[colour],
                    runs,
                )
                continue
            # no locked run here: the same as _runs_at, quicker
            move = step.move
            if not before and not move.new_prefixes:
                continue
            real = _TILES[colour][number]
            if len(before) > 1:
                before.sort(key=_code)
            after: list[OpenRun] = []
            for (_, tiles), fate, code in zip(before, move.fates, move.codes, strict=True):
                if fate == Fate.REAL:
                    tiles.append(real)
                    after.append((code, tiles))
                elif fate == Fate.JOKER:
                    tiles.append(JOKER)
                    after.append((code, tiles))
                else:
                    runs.append(tiles)
            for jokers_before in move.new_prefixes:
                after.append((min(COMPLETE, 1 + jokers_before), [JOKER] * jokers_before + [real]))
            open_runs[colour] = after
    for colour_runs in open_runs:
        runs.extend(tiles for _, tiles in colour_runs)
    runs.sort(key=_run_order)
    for _ in range(plan.spare_jokers):
        if not _add_spare_joker(runs, groups):
            return None
    return [tuple(run) for run in runs] + [tuple(group) for group in groups]


def _add_spare_joker(runs: list[Run], groups: list[list[Tile]]) -> bool:
    for run in runs:
        start = _run_order(run)[1]
        if start + len(run) - 1 < MAX_NUMBER:
            run.append(JOKER)
            return True
        if start > MIN_NUMBER:
            run.insert(0, JOKER)
            return True
    for group in groups:
        if len(group) < MAX_GROUP:
            if sum(not tile.is_joker for tile in group) == 1:
                group.insert(0, JOKER)  # a lone real tile stays last (see _group_of)
            else:
                group.append(JOKER)
            return True
    return False


def _run_order(run: Run) -> tuple[int, int, int]:
    first = next(i for i, tile in enumerate(run) if not tile.is_joker)
    tile = run[first]
    assert tile.colour is not None and tile.number is not None
    return COLOURS.index(tile.colour), tile.number - first, len(run)


def _runs_at(
    number: int,
    colour: int,
    step: Step,
    before: list[OpenRun],
    starts_here: Sequence[LockedRun],
    laying: list[_Lock],
    finished: list[Run],
) -> list[OpenRun]:
    real = _TILES[colour][number]
    move = step.move
    ordered = sorted(before, key=_code) if len(before) > 1 else before
    after: list[OpenRun] = []
    starting = [_Lock(run) for run in starts_here]
    absorbed = 0
    for (_, tiles), fate, code in zip(ordered, move.fates, move.codes, strict=True):
        if fate == Fate.REAL:
            tiles.append(real)
            after.append((code, tiles))
        elif fate == Fate.JOKER:
            tiles.append(JOKER)
            after.append((code, tiles))
        elif fate == Fate.LOCKED:
            starting[absorbed].tiles = tiles
            absorbed += 1
        else:
            finished.append(tiles)
    for jokers_before in move.new_prefixes:
        after.append((min(COMPLETE, 1 + jokers_before), [JOKER] * jokers_before + [real]))
    for lock, jokers_before in zip(starting[absorbed:], move.locked_prefixes, strict=True):
        lock.tiles = [JOKER] * jokers_before
    laying.extend(starting)
    if laying:
        slot_reals = step.slot_reals
        for lock in list(laying):
            tile = lock.locked.tiles[number - lock.locked.start]
            if tile.is_joker and slot_reals:
                tile = real
                slot_reals -= 1
            lock.tiles.append(tile)
            if lock.locked.end == number:
                laying.remove(lock)
                after.append((COMPLETE, lock.tiles))
    return after


def _forced_of(group: LockedGroup) -> ForcedGroup:
    return group.forced


def _code(run: OpenRun) -> int:
    return run[0]


def _groups_at(position: Position, layer: Layer, *, essential: bool) -> list[list[Tile]]:
    number = layer.number
    held = sorted(
        (group for group in position.locked_groups if group.number == number),
        key=_forced_of,
    )
    plan = arrange_groups(
        layer.group_reals, layer.group_jokers, position.forced[number], essential=essential
    )
    assert plan is not None
    completions, free = plan
    sets: list[list[Tile]] = []
    for group, (mask, jokers) in zip(held, completions, strict=True):
        reals = [tile for tile in group.tiles if not tile.is_joker]
        reals += [_TILES[c][number] for c in range(len(COLOURS)) if mask >> c & 1]
        reals.sort(key=lambda tile: COLOURS.index(tile.colour) if tile.colour else 0)
        sets.append(_group_of(reals, jokers))
    for mask, jokers in free:
        reals = [_TILES[c][number] for c in range(len(COLOURS)) if mask >> c & 1]
        sets.append(_group_of(reals, jokers))
    return sets


def _group_of(reals: list[Tile], jokers: int) -> list[Tile]:
    """A group in display order: its colours in order, jokers last; but a lone real tile
    goes last, since ``B1 J J`` reads as the run B1 B2 B3 and ``J J B1`` only as a group."""
    if len(reals) == 1:
        return [*[JOKER] * jokers, *reals]
    return [*reals, *[JOKER] * jokers]
