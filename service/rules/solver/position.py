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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from service.rules.options import Rules
from service.rules.sets import SetKind, classify
from service.rules.solver.groups import MAX_GROUP, ForcedGroup
from service.rules.tiles import COLOURS, MAX_NUMBER, Tile

__all__ = [
    "CELLS",
    "COLOUR_INDEX",
    "JOKER_CELL",
    "LockedGroup",
    "LockedRun",
    "Position",
    "mirrored",
    "read_position",
    "tile_counts",
]

COLOUR_INDEX = {colour: index for index, colour in enumerate(COLOURS)}
# the same by identity, which is quicker to look up than an enum's hash
_COLOUR_AT = {id(colour): index for index, colour in enumerate(COLOURS)}
COLOUR_COUNT = len(COLOURS)
MIN_SET = 3
CELLS = (MAX_NUMBER + 1) * COLOUR_COUNT  # numbers 0-13 by colour; number 0 unused
JOKER_CELL = CELLS
Grid = tuple[tuple[int, ...], ...]  # [number][colour], number 0 unused
EMPTY_GRID: Grid = tuple((0,) * COLOUR_COUNT for _ in range(MAX_NUMBER + 1))
NO_FORCED: tuple[tuple[ForcedGroup, ...], ...] = ((),) * (MAX_NUMBER + 1)


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
    # worked out from the locked sets (none by default)
    slots: Grid = field(default=EMPTY_GRID, compare=False)
    locked_starts: Grid = field(default=EMPTY_GRID, compare=False)
    locked_ends: Grid = field(default=EMPTY_GRID, compare=False)
    forced: tuple[tuple[ForcedGroup, ...], ...] = field(default=NO_FORCED, compare=False)
    # every table tile, counted as tile_counts does (empty before the initial meld)
    table_counts: tuple[int, ...] = field(default=(), compare=False)

    @property
    def jokers(self) -> int:
        """All the jokers the search may place."""
        return self.table_jokers + self.rack_jokers


def read_position(
    table: Sequence[Sequence[Tile]], rack: Counter[Tile], *, melded: bool, rules: Rules
) -> Position:
    """Count the tiles of a position; before the initial meld only the rack counts."""
    rack_counts = [0] * CELLS
    held = [0] * COLOUR_COUNT  # the numbers of each colour on the rack, as masks
    rack_jokers = 0
    colour_at = _COLOUR_AT
    for tile, count in rack.items():
        if count <= 0:
            continue
        colour, number = tile.colour, tile.number
        if colour is None:
            rack_jokers += count
        elif number is not None:
            index = colour_at[id(colour)]
            rack_counts[number * COLOUR_COUNT + index] += count
            held[index] |= 1 << number
    if not melded:
        return _with_layers(
            Position(
                EMPTY_GRID,
                _placeable(rack_counts, held, None, rack_jokers),
                0,
                rack_jokers,
                meld_threshold=max(rules.initial_meld_points, 0),
                jokers_count_in_meld=not rules.joker_worth_zero_in_meld,
            )
        )
    on_table = tile_counts(table)
    table_jokers = on_table[JOKER_CELL]
    rack_numbered = _placeable(rack_counts, held, on_table, table_jokers + rack_jokers)
    runs: list[LockedRun] = []
    groups: list[LockedGroup] = []
    free = on_table
    if rules.joker_locked_sets and table_jokers:
        free = list(on_table)
        for tiles in table:
            if not any(tile.is_joker for tile in tiles):
                continue
            info = classify(tiles)
            if not info.valid:
                continue
            if info.kind is SetKind.RUN:
                assert info.colour is not None and info.start is not None
                runs.append(LockedRun(COLOUR_INDEX[info.colour], info.start, info.tiles))
            elif info.kind is SetKind.GROUP:
                assert info.number is not None
                groups.append(LockedGroup(info.number, info.tiles))
            else:  # pragma: no cover - a valid set is a run or a group
                continue
            for tile in tiles:
                if tile.colour is not None and tile.number is not None:
                    free[tile.number * COLOUR_COUNT + _COLOUR_AT[id(tile.colour)]] -= 1
    return _with_layers(
        Position(
            _as_grid(free),
            rack_numbered,
            table_jokers,
            rack_jokers,
            tuple(runs),
            tuple(groups),
            table_counts=tuple(on_table),
        )
    )


def mirrored(position: Position, jokers: int = 0) -> Position:
    """The position read from 13 down to 1, without jokers, locks or meld: number ``n``
    becomes ``14 - n``. Runs and groups read the same either way. The real tiles of
    locked sets are table tiles like the others (every play that keeps the locks is a
    play of the table read so)."""
    mandatory = position.mandatory
    if position.locked_runs or position.locked_groups:
        mandatory = _as_grid(list(position.table_counts[:CELLS]))
    return Position(
        (mandatory[0], *reversed(mandatory[1:])),
        (position.optional[0], *reversed(position.optional[1:])),
        0,
        jokers,
        slots=EMPTY_GRID,
        locked_starts=EMPTY_GRID,
        locked_ends=EMPTY_GRID,
        forced=NO_FORCED,
    )


def tile_counts(sets: Iterable[Iterable[Tile]]) -> list[int]:
    """Count the tiles of ``sets`` by cell: ``number * 4 + colour``, jokers at ``JOKER_CELL``."""
    counts = [0] * (CELLS + 1)
    colour_at = _COLOUR_AT
    for tiles in sets:
        for tile in tiles:
            colour = tile.colour
            if colour is None:
                counts[JOKER_CELL] += 1
            elif tile.number is not None:
                counts[tile.number * COLOUR_COUNT + colour_at[id(colour)]] += 1
    return counts


def _placeable(rack: list[int], held: list[int], table: list[int] | None, jokers: int) -> Grid:
    """Drop the rack tiles that no valid set of the position's tiles could hold.

    A rack tile can only be placed in a group with two other colours of its number,
    or in three consecutive numbers of its colour, jokers filling in. Dropping one
    tile may strand another, so this repeats until nothing changes. Worked out on a
    mask of numbers a colour (``held``: bit ``n`` when number ``n`` is on the rack), every
    colour's tiles at once: a tile that fits nowhere while more tiles are present fits
    nowhere with fewer, so the order of the drops does not change what is left.
    """
    if jokers >= MIN_SET - 1:
        return _as_grid(rack)
    f0 = f1 = f2 = f3 = 0  # the same for the table's tiles, which stay
    if table is not None:
        fixed = [0] * COLOUR_COUNT
        for cell in range(COLOUR_COUNT, CELLS):
            if table[cell]:
                fixed[cell % COLOUR_COUNT] |= 1 << (cell // COLOUR_COUNT)
        f0, f1, f2, f3 = fixed
    k0, k1, k2, k3 = held
    while True:
        p0, p1, p2, p3 = f0 | k0, f1 | k1, f2 | k2, f3 | k3
        if jokers:  # another colour of the number, or a number of the colour two away
            n0 = k0 & (p1 | p2 | p3 | _near(p0))
            n1 = k1 & (p0 | p2 | p3 | _near(p1))
            n2 = k2 & (p0 | p1 | p3 | _near(p2))
            n3 = k3 & (p0 | p1 | p2 | _near(p3))
        else:  # two other colours of the number, or three numbers in a row of the colour
            n0 = k0 & (p1 & p2 | p1 & p3 | p2 & p3 | _stretches(p0))
            n1 = k1 & (p0 & p2 | p0 & p3 | p2 & p3 | _stretches(p1))
            n2 = k2 & (p0 & p1 | p0 & p3 | p1 & p3 | _stretches(p2))
            n3 = k3 & (p0 & p1 | p0 & p2 | p1 & p2 | _stretches(p3))
        if n0 == k0 and n1 == k1 and n2 == k2 and n3 == k3:
            break
        k0, k1, k2, k3 = n0, n1, n2, n3
    if (k0, k1, k2, k3) == tuple(held):
        return _as_grid(rack)
    rows = list(rack)
    for colour, kept in enumerate((k0, k1, k2, k3)):
        dropped = held[colour] & ~kept
        while dropped:
            number = dropped.bit_length() - 1
            rows[number * COLOUR_COUNT + colour] = 0
            dropped &= ~(1 << number)
    return _as_grid(rows)


def _near(present: int) -> int:
    """The numbers of a colour (a mask) with another of the colour at most two away:
    three numbers from 1 to 13 hold both, a joker the third."""
    return present & (present << 1 | present >> 1 | present << 2 | present >> 2)


def _stretches(present: int) -> int:
    """The numbers of a colour (a mask) in three numbers in a row all present."""
    starts = present & present >> 1 & present >> 2
    return starts | starts << 1 | starts << 2


def _as_grid(counts: list[int]) -> Grid:
    """The first ``CELLS`` counts as a grid: one row of colours a number."""
    cells = iter(counts[:CELLS])
    return tuple(zip(cells, cells, cells, cells, strict=True))  # COLOUR_COUNT of them


def _with_layers(position: Position) -> Position:
    """``position`` with the slots, starts, ends and forced groups of its locked sets."""
    if not position.locked_runs and not position.locked_groups:
        return position
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
        position.table_counts,
    )
