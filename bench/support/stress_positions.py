"""Hard positions for the solver, by class: box, table size, rack size and mode.

Not a benchmark by itself (``make bench`` runs ``bench/solver_tail.py``, which uses
this): :func:`stress_case` draws a random table of valid sets of about a target size
from one box, with some jokers on it, and a rack of an exact size from the tiles left,
jokers included. The three modes are after the initial meld (manipulation), before it
(the rack alone must meld), and after it with joker-locked sets (the table holds at
least one set with a joker, which must come back extended or swapped).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from service.rules import COLOURS, JOKER, Rules, Tile, TileSet, classify, full_set
from service.rules.sets import SetKind

__all__ = [
    "MODES",
    "RACK_SIZES",
    "TABLE_SIZES",
    "StressCase",
    "classes",
    "proof_case",
    "stress_case",
    "random_set",
]

TABLE_SIZES = (0, 20, 40, 60, 80, 110)
RACK_SIZES = (14, 27, 40)
MODES = ("melded", "initial", "locked")
Set = tuple[Tile, ...]


@dataclass(frozen=True)
class StressCase:
    """One position and its class."""

    box: TileSet
    size: int
    rack_size: int
    mode: str
    table: tuple[Set, ...]
    rack: Counter[Tile]

    @property
    def melded(self) -> bool:
        """Whether the player has made the initial meld."""
        return self.mode != "initial"

    @property
    def rules(self) -> Rules:
        """The match's rules: the box, and the joker-locked option in that mode."""
        return Rules(tile_set=self.box, joker_locked_sets=self.mode == "locked")

    @property
    def label(self) -> str:
        """The class, for a report."""
        return f"{self.box.value:>8} {self.mode:>7} t{self.size:<3} r{self.rack_size:<2}"


def classes() -> list[tuple[TileSet, str, int, int]]:
    """Every class (box, mode, table size, rack size) whose tiles fit in the box.

    A table and rack that take nearly the whole box leave no choice, so each class
    leaves at least 6 tiles in the box.
    """
    out = []
    for box in (TileSet.STANDARD, TileSet.XP):
        for mode in MODES:
            for size in TABLE_SIZES:
                if mode == "locked" and size == 0:
                    continue  # nothing to lock
                for rack_size in RACK_SIZES:
                    if size + rack_size <= box.size - 6:
                        out.append((box, mode, size, rack_size))
    return out


def stress_case(
    rng: random.Random, box: TileSet, mode: str, size: int, rack_size: int
) -> StressCase:
    """A random position of the class: a table of valid sets of about ``size`` tiles
    holding some jokers (at least one with ``mode`` "locked"), and a rack of
    ``rack_size`` tiles drawn from the rest of the box (jokers included)."""
    pool = full_set(box)
    jokers = pool.pop(JOKER)
    table = _random_table(rng, pool, size)
    on_table = 0
    if table:
        wanted = rng.randint(1 if mode == "locked" else 0, jokers)
        for _ in range(wanted * 3):
            if on_table == wanted:
                break
            on_table += _put_joker(rng, table, pool)
    pool[JOKER] = jokers - on_table
    bag = sorted(pool.elements(), key=lambda tile: tile.code)
    rng.shuffle(bag)
    rack = Counter(bag[:rack_size])
    return StressCase(box, size, rack_size, mode, tuple(tuple(t) for t in table), rack)


def proof_case(rng: random.Random) -> StressCase:
    """A position of the kind a pass proof meets late in a game: a crowded table (40 tiles
    to all but 12 of the box, some jokers, locked or not) and a rack of 1 to 6 tiles."""
    box = rng.choice((TileSet.STANDARD, TileSet.XP, TileSet.XP))
    mode = rng.choice(("melded", "locked"))
    return stress_case(rng, box, mode, rng.randint(40, box.size - 12), rng.randint(1, 6))


def _random_table(rng: random.Random, pool: Counter[Tile], size: int) -> list[list[Tile]]:
    table: list[list[Tile]] = []
    placed = misses = 0
    while placed < size and misses < 400:
        want = size - placed
        if want < 3:
            if not _lengthen(rng, table, pool):
                break
            placed += 1
            continue
        found = random_set(rng, pool, min(want, rng.choice((3, 3, 4, 4, 5, 6, 7))))
        if found is None:
            misses += 1
            if misses % 20 == 0 and table and _lengthen(rng, table, pool):
                placed += 1
            continue
        pool.subtract(found)
        table.append(found)
        placed += len(found)
    return table


def random_set(rng: random.Random, pool: Counter[Tile], length: int) -> list[Tile] | None:
    """A run or group of ``length`` tiles that ``pool`` holds, drawn at random (None: none
    was found this time)."""
    if length <= 4 and rng.random() < 0.4:
        number = rng.randint(1, 13)
        colours = [c for c in COLOURS if pool[Tile(c, number)]]
        if len(colours) < length:
            return None
        return [Tile(c, number) for c in rng.sample(colours, length)]
    colour = rng.choice(COLOURS)
    start = rng.randint(1, 14 - length)
    tiles = [Tile(colour, n) for n in range(start, start + length)]
    return tiles if all(pool[t] for t in tiles) else None


def _lengthen(rng: random.Random, table: list[list[Tile]], pool: Counter[Tile]) -> bool:
    """Add one tile from ``pool`` to a run's end or a group of three; False if none fits."""
    for tiles in rng.sample(table, len(table)):
        info = classify(tiles)
        extra: Tile | None = None
        if info.kind is SetKind.RUN and info.colour and info.start:
            end = info.start + len(tiles) - 1
            if end < 13 and pool[Tile(info.colour, end + 1)]:
                extra = Tile(info.colour, end + 1)
                tiles.append(extra)
            elif info.start > 1 and pool[Tile(info.colour, info.start - 1)]:
                extra = Tile(info.colour, info.start - 1)
                tiles.insert(0, extra)
        elif info.kind is SetKind.GROUP and len(tiles) == 3 and info.number:
            held = {t.colour for t in tiles}
            extra = next(
                (
                    Tile(c, info.number)
                    for c in COLOURS
                    if c not in held and pool[Tile(c, info.number)]
                ),
                None,
            )
            if extra is not None:
                tiles.append(extra)
        if extra is not None:
            pool[extra] -= 1
            return True
    return False


def _put_joker(rng: random.Random, table: list[list[Tile]], pool: Counter[Tile]) -> int:
    """Swap one table tile for a joker (the tile goes back to the pool); 1 if done."""
    tiles = rng.choice(table)
    index = rng.randrange(len(tiles))
    if tiles[index].is_joker or sum(1 for t in tiles if not t.is_joker) < 2:
        return 0
    pool[tiles[index]] += 1
    tiles[index] = JOKER
    if not classify(tiles).valid:  # pragma: no cover - a joker stands for the tile it took
        raise AssertionError(tiles)
    return 1
