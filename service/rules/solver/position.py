"""The position the solver reads: which tiles must be placed, which may, and the locks.

Tiles are counted by number and colour index. Table tiles are *mandatory* (every
one must be on the new table), rack tiles *optional*. Jokers are counted apart:
table jokers must be placed, rack jokers may be.

With the joker-locked option, a table set holding a joker must reappear extended
(or with its joker swapped for the real tile). The solver fixes such a set's real
tiles in place: a locked run becomes a stretch that one run of its colour must
cover, each joker position a *slot* that takes a joker or the real tile; a locked
group becomes a forced group at its number that other colours or jokers may
complete. The set's jokers join the table jokers, all interchangeable. Two locked
sets never share a tile of the new table (a locked run may run on into another).

Before the initial meld the table is left alone: only the rack is read, and the
new sets must be worth ``meld_threshold``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from service.rules.options import Rules
from service.rules.sets import SetKind, classify
from service.rules.solver.groups import MAX_GROUP, ForcedGroup
from service.rules.tiles import COLOURS, JOKER, MAX_NUMBER, MIN_NUMBER, Tile

__all__ = ["COLOUR_INDEX", "LockedGroup", "LockedRun", "Position", "read_position"]

COLOUR_INDEX = {colour: index for index, colour in enumerate(COLOURS)}
MIN_SET = 3
Grid = tuple[tuple[int, ...], ...]  # [number][colour], number 0 unused


@dataclass(frozen=True, slots=True)
class LockedRun:
    """A table run holding a joker, with the joker-locked option: its tiles in order."""

    colour: int
    start: int
    tiles: tuple[Tile, ...]

    @property
    def end(self) -> int:
        """The number its last position stands for."""
        return self.start + len(self.tiles) - 1


@dataclass(frozen=True, slots=True)
class LockedGroup:
    """A table group holding a joker, with the joker-locked option."""

    number: int
    tiles: tuple[Tile, ...]

    @property
    def forced(self) -> ForcedGroup:
        """The colour mask of its real tiles and the members it still needs (least, most)."""
        mask = sum(1 << COLOUR_INDEX[t.colour] for t in self.tiles if t.colour is not None)
        reals = mask.bit_count()
        return mask, len(self.tiles) - reals, MAX_GROUP - reals


@dataclass(frozen=True, slots=True)
class Position:
    """Everything the search needs, counted by number (1-13) and colour index."""

    mandatory: Grid
    optional: Grid
    table_jokers: int
    rack_jokers: int
    locked_runs: tuple[LockedRun, ...] = ()
    locked_groups: tuple[LockedGroup, ...] = ()
    meld_threshold: int | None = None
    jokers_count_in_meld: bool = True
    slots: Grid = field(default=(), compare=False)
    locked_starts: Grid = field(default=(), compare=False)
    locked_ends: Grid = field(default=(), compare=False)
    forced: tuple[tuple[ForcedGroup, ...], ...] = field(default=(), compare=False)

    @property
    def jokers(self) -> int:
        """All the jokers the search may place."""
        return self.table_jokers + self.rack_jokers


def read_position(
    table: Sequence[Sequence[Tile]], rack: Counter[Tile], *, melded: bool, rules: Rules
) -> Position:
    """Count the tiles of a position; before the initial meld only the rack counts."""
    rack_jokers = sum(n for tile, n in rack.items() if tile.is_joker)
    if not melded:
        return _with_layers(
            Position(
                _grid(Counter()),
                _placeable(_grid(rack), _grid(Counter()), rack_jokers),
                0,
                rack_jokers,
                meld_threshold=max(rules.initial_meld_points, 0),
                jokers_count_in_meld=not rules.joker_worth_zero_in_meld,
            )
        )
    on_table: Counter[Tile] = Counter()
    for tiles in table:
        on_table.update(tiles)
    rack_numbered = _placeable(_grid(rack), _grid(on_table), on_table[JOKER] + rack_jokers)
    free: Counter[Tile] = Counter()
    table_jokers = 0
    runs: list[LockedRun] = []
    groups: list[LockedGroup] = []
    for tiles in table:
        jokers = sum(1 for tile in tiles if tile.is_joker)
        table_jokers += jokers
        info = classify(tiles) if rules.joker_locked_sets and jokers else None
        locked = info is not None and info.valid
        if info is not None and locked and info.kind is SetKind.RUN:
            assert info.colour is not None and info.start is not None
            runs.append(LockedRun(COLOUR_INDEX[info.colour], info.start, info.tiles))
        elif info is not None and locked and info.kind is SetKind.GROUP:
            assert info.number is not None
            groups.append(LockedGroup(info.number, info.tiles))
        else:
            free.update(tile for tile in tiles if not tile.is_joker)
    return _with_layers(
        Position(_grid(free), rack_numbered, table_jokers, rack_jokers, tuple(runs), tuple(groups))
    )


def _placeable(rack: Grid, table: Grid, jokers: int) -> Grid:
    """Drop the rack tiles that no valid set of the position's tiles could hold.

    A rack tile can only be placed in a group with two other colours of its number,
    or in three consecutive numbers of its colour, jokers filling in. Dropping one
    tile may strand another, so this repeats until nothing changes.
    """
    rows = [list(row) for row in rack]
    changed = True
    while changed:
        changed = False
        present = [
            [r + t for r, t in zip(rack_row, table_row, strict=True)]
            for rack_row, table_row in zip(rows, table, strict=True)
        ]
        for number in range(MIN_NUMBER, MAX_NUMBER + 1):
            for colour in range(len(COLOURS)):
                if rows[number][colour] and not _fits(present, number, colour, jokers):
                    rows[number][colour] = 0
                    changed = True
    return tuple(tuple(row) for row in rows)


def _fits(present: list[list[int]], number: int, colour: int, jokers: int) -> bool:
    others = sum(1 for c, count in enumerate(present[number]) if c != colour and count)
    if others + jokers >= MIN_SET - 1:
        return True
    for start in range(max(MIN_NUMBER, number - 2), min(number, MAX_NUMBER - 2) + 1):
        missing = sum(
            1 for n in range(start, start + MIN_SET) if n != number and not present[n][colour]
        )
        if missing <= jokers:
            return True
    return False


def _grid(tiles: Counter[Tile]) -> Grid:
    rows = [[0] * len(COLOURS) for _ in range(MAX_NUMBER + 1)]
    for tile, count in tiles.items():
        if tile.colour is not None and tile.number is not None and count > 0:
            rows[tile.number][COLOUR_INDEX[tile.colour]] += count
    return tuple(tuple(row) for row in rows)


def _with_layers(position: Position) -> Position:
    slots = [[0] * len(COLOURS) for _ in range(MAX_NUMBER + 1)]
    starts = [[0] * len(COLOURS) for _ in range(MAX_NUMBER + 1)]
    ends = [[0] * len(COLOURS) for _ in range(MAX_NUMBER + 1)]
    forced: list[list[ForcedGroup]] = [[] for _ in range(MAX_NUMBER + 1)]
    for run in position.locked_runs:
        starts[run.start][run.colour] += 1
        ends[run.end][run.colour] += 1
        for offset, tile in enumerate(run.tiles):
            if tile.is_joker:
                slots[run.start + offset][run.colour] += 1
    for group in position.locked_groups:
        forced[group.number].append(group.forced)
    return Position(
        position.mandatory,
        position.optional,
        position.table_jokers,
        position.rack_jokers,
        position.locked_runs,
        position.locked_groups,
        position.meld_threshold,
        position.jokers_count_in_meld,
        tuple(tuple(row) for row in slots),
        tuple(tuple(row) for row in starts),
        tuple(tuple(row) for row in ends),
        tuple(tuple(sorted(row)) for row in forced),
    )
